"""Board power, energy per output token and the energy bill of one estimate.

Board power of one GPU during a phase (prefill, or one decode step) [W]:

    u = min(1, max(compute time, byte time) / phase time)          the phase's roofline utilization [-]
    P = P_idle + (P_TDP - P_idle) x u ** SHAPE                     SHAPE = 1 (linear)

compute time = FLOPs / (peak x compute efficiency) and byte time = bytes / (bandwidth x bandwidth
efficiency) are :class:`core.timing.roofline.PhaseTime`'s ``compute_s`` and ``memory_s``: the fraction of
the phase the GPU's tensor cores or its memory system are busy. The rest of the phase (all-reduces,
step and host overheads, the API server's lag) draws power nearer idle. P_TDP and P_idle are the
catalog's ``[power]`` figures (datasheet board limit; idle measured in a captured nvidia-smi, or
derived by the file's stated ``idle_rule``).

The shape is CHOSEN, not fitted: no public measurement of power against utilization other than the
InferenceX PowerX rows could be read with the tools here (ML.ENERGY's v3 data set sits on Hugging
Face; its blog posts give J/token, not watts), and the PowerX rows are held out as the check
(``bench/energy_check.py``, docs/accuracy.md). Linear in u is the audit's suggested model.

Energy of one round of the scenario's running batch R (each of R requests: its prefill, then O - 1
decode steps; what the estimate's E2E and output tokens/s assume) over all N GPUs of the deployment [J]:

    E_round = N x (P_prefill x t_prefill + P_decode x (O - 1) x TPOT)
    energy per output token  J_tok = E_round / (R x O)                            [J/token]
    output tokens per joule  = 1 / J_tok                                          [token/J]
    average board power per GPU  P_avg = E_round / (N x (t_prefill + (O - 1) x TPOT))   [W]
    kWh per 1M output tokens = J_tok x PUE x 1e6 / 3.6e6                          [kWh]
    energy cost per 1M output tokens = kWh per 1M x electricity price             [USD]
    cost per hour = N x GPU price per hour + N x P_avg x PUE / 1000 x electricity price   [USD/h]

PUE (power usage effectiveness) multiplies the GPU-board energy into the facility's (cooling, power
delivery, host CPUs): 1.0 (the default) counts the GPU boards only. The electricity price is the user's
input; the default 0.10 USD/kWh is an assumption to edit, not a catalog figure.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.estimate.result import Estimate
from core.spec.gpu import GpuSpec
from core.timing.roofline import PhaseTime

SHAPE = 1.0
"""Exponent of u in the power curve: 1 = linear (chosen; see the module docstring)."""
DEFAULT_USD_PER_KWH = 0.10
"""Default electricity price [USD/kWh]: an assumption the user edits, not a catalog figure."""
DEFAULT_PUE = 1.0
"""Default power usage effectiveness: 1.0 = GPU-board energy only."""
J_PER_KWH = 3.6e6


@dataclass(frozen=True)
class EnergyInputs:
    """What the energy bill needs besides the estimate: electricity price [USD/kWh] and PUE [-]."""

    usd_per_kwh: float = DEFAULT_USD_PER_KWH
    pue: float = DEFAULT_PUE

    def __post_init__(self) -> None:
        if not (self.usd_per_kwh >= 0 and np.isfinite(self.usd_per_kwh)):
            raise ValueError(f"electricity price must be a number >= 0 USD/kWh, got {self.usd_per_kwh}")
        if not (1.0 <= self.pue <= 3.0):
            raise ValueError(f"pue must be between 1.0 and 3.0, got {self.pue}")


def utilization(phase: PhaseTime) -> float:
    """u = min(1, max(compute time, byte time) / phase time) of a scalar phase [-]."""
    seconds = float(phase.seconds)
    if seconds <= 0:
        return 0.0
    busy = max(float(np.asarray(phase.compute_s)), float(np.asarray(phase.memory_s)))
    return min(1.0, busy / seconds)


def board_power(gpu: GpuSpec, u: float) -> float | None:
    """P = P_idle + (P_TDP - P_idle) x u ** SHAPE [W]; None when the catalog has no power figures."""
    if gpu.tdp_w is None or gpu.idle_w is None:
        return None
    u = min(1.0, max(0.0, u))
    return gpu.idle_w + (gpu.tdp_w - gpu.idle_w) * u**SHAPE


def board_power_array(gpu: GpuSpec, u) -> np.ndarray:
    """:func:`board_power` over an array of utilizations [W]; NaN everywhere without power figures."""
    u = np.clip(np.asarray(u, dtype=float), 0.0, 1.0)
    if gpu.tdp_w is None or gpu.idle_w is None:
        return np.full(u.shape, np.nan)
    return gpu.idle_w + (gpu.tdp_w - gpu.idle_w) * u**SHAPE


def utilization_array(phase: PhaseTime) -> np.ndarray:
    """:func:`utilization` of a phase computed over an array of batches [-]."""
    seconds = np.asarray(phase.seconds, dtype=float)
    busy = np.maximum(np.asarray(phase.compute_s, dtype=float), np.asarray(phase.memory_s, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(seconds > 0, np.minimum(1.0, busy / seconds), 0.0)


@dataclass(frozen=True, kw_only=True)
class Energy:
    """The energy figures of one estimate (see the module docstring for each formula)."""

    gpus: int
    running: int
    output_len: int
    u_prefill: float
    u_decode: float
    power_prefill_w: float
    power_decode_w: float
    prefill_s: float
    decode_s: float
    idle_w: float
    tdp_w: float
    inputs: EnergyInputs
    gpu_price_per_hour: float | None

    @property
    def round_s(self) -> float:
        return self.prefill_s + self.decode_s

    @property
    def round_j(self) -> float:
        """E_round: all GPUs, prefill included [J]."""
        return self.gpus * (self.power_prefill_w * self.prefill_s + self.power_decode_w * self.decode_s)

    @property
    def power_w(self) -> float:
        """Average board power per GPU over the round [W]."""
        return self.round_j / (self.gpus * self.round_s)

    @property
    def j_per_token(self) -> float:
        return self.round_j / (self.running * self.output_len)

    @property
    def tokens_per_j(self) -> float:
        return 1.0 / self.j_per_token

    @property
    def kwh_per_m_tokens(self) -> float:
        """Facility energy (board x PUE) per 1M output tokens [kWh]."""
        return self.j_per_token * self.inputs.pue * 1e6 / J_PER_KWH

    @property
    def usd_per_m_tokens(self) -> float:
        return self.kwh_per_m_tokens * self.inputs.usd_per_kwh

    @property
    def energy_usd_per_hour(self) -> float:
        return self.gpus * self.power_w * self.inputs.pue / 1000 * self.inputs.usd_per_kwh

    @property
    def usd_per_hour(self) -> float | None:
        """GPU-hours x price + energy [USD/h]; None without a GPU price."""
        if self.gpu_price_per_hour is None:
            return None
        return self.gpus * self.gpu_price_per_hour + self.energy_usd_per_hour


def energy_of(e: Estimate, inputs: EnergyInputs | None = None) -> Energy | None:
    """The energy figures of ``e``; None when its GPU has no power figures in the catalog."""
    inputs = inputs or EnergyInputs()
    gpu = e.deployment.gpu
    prefill, decode = e.latency.prefill, e.latency.decode
    u_pre, u_dec = utilization(prefill), utilization(decode)
    p_pre, p_dec = board_power(gpu, u_pre), board_power(gpu, u_dec)
    if p_pre is None or p_dec is None or e.running_batch < 1:
        return None
    out = e.workload.output_len
    return Energy(
        gpus=e.deployment.parallel.num_gpus,
        running=e.running_batch,
        output_len=out,
        u_prefill=u_pre,
        u_decode=u_dec,
        power_prefill_w=p_pre,
        power_decode_w=p_dec,
        prefill_s=float(prefill.seconds),
        decode_s=(out - 1) * float(decode.seconds),
        idle_w=float(gpu.idle_w),
        tdp_w=float(gpu.tdp_w),
        inputs=inputs,
        gpu_price_per_hour=gpu.price_per_hour,
    )
