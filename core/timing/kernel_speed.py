"""The rates a deployment's GEMMs and MoE kernels reach, by shape, from the measured kernel tables.

Where a table applies (:func:`core.timing.kernel_rates.table_for`: the GPU's own, or a GPU of the same
compute capability), the dense GEMMs over M tokens per step and the MoE kernels over t tokens per
expert (t = M x k / E) run at the measured fractions of the GPU's own peaks for the weights' format:

    GEMM rates(M)  = (P_unit x compute fraction(M), BW x bandwidth fraction(M)) x measured scale
    MoE rates(t)   = (P_unit x compute fraction(t), BW x bandwidth fraction(t)) x measured scale

and the roofline of each class is max(F / compute rate, bytes / bandwidth rate) at those rates. The
measured scale is the one coefficient between a kernel timed alone and the same kernel inside an
engine step (physical value 1). Where no table applies (tier "generic": AMD, Turing, GA10x, formats
the tables lack) the classes keep the fitted constant efficiencies (:mod:`core.timing.roofline`).

The format read: FP8 checkpoints published in FP8 by the model's makers (DeepSeek-V3/R1, Qwen3 FP8)
are block-scaled (128 x 128 weight blocks) and read the ``fp8_block`` curves; FP8 applied to a 16-bit
model at serving time (vLLM ``--quantization fp8``, ModelOpt checkpoints) is per-tensor, ``fp8``.
Curves are linear in log2 of the shape and flat beyond their ends, as
:mod:`core.timing.kernel_rates` reads them; every function takes numpy arrays.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from core.timing.kernel_rates import DTYPE_TABLE, GENERIC, Curve, table_for

if TYPE_CHECKING:
    from core.spec.deployment import Deployment


@dataclass(frozen=True)
class CurveRates:
    """One measured curve as absolute rates: FLOP/s and bytes/s against log2 of the shape."""

    log_x: np.ndarray
    flops: np.ndarray
    bytes_: np.ndarray

    @classmethod
    def of(cls, curve: Curve, peak: float, bandwidth: float) -> CurveRates | None:
        x, c, b = (np.asarray(v, dtype=float) for v in (curve.x, curve.compute, curve.bandwidth))
        keep = np.isfinite(c) & np.isfinite(b) & (c > 0) & (b > 0)
        if keep.sum() < 2:
            return None
        return cls(np.log2(x[keep]), c[keep] * peak, b[keep] * bandwidth)

    def __call__(self, shape) -> tuple[np.ndarray, np.ndarray]:
        """(FLOP/s, bytes/s) at ``shape`` (tokens per step or per expert)."""
        at = np.log2(np.maximum(np.asarray(shape, dtype=float), 1e-9))
        return np.interp(at, self.log_x, self.flops), np.interp(at, self.log_x, self.bytes_)


@dataclass(frozen=True)
class KernelSpeed:
    """A deployment's measured GEMM and MoE rates (None where a class keeps the constants), and their tier."""

    tier: str
    """'measured', 'same architecture' or 'generic' (of the dense GEMMs, which every model has)."""
    source: str
    gemm: CurveRates | None
    moe: CurveRates | None

    @property
    def label(self) -> str:
        return self.tier if not self.source else f"{self.tier} ({self.source})"


def table_dtype(dep: Deployment) -> str:
    """The kernel-table format of the deployment's weights (module docstring: FP8 by who quantized it)."""
    name = dep.weights.name.lower()
    if name == "fp8" and dep.model.native_dtype.lower() == "fp8":
        return "fp8_block"
    return name


def kernel_speed(dep: Deployment) -> KernelSpeed:
    """The measured rates ``dep`` runs its GEMMs and MoE kernels at, scaled by its efficiency's
    measured scale; generic (both None) when no table applies or the tables are switched off."""
    eff = dep.efficiency
    if not eff.measured_scale:
        return KernelSpeed(GENERIC, "", None, None)
    return _speed(dep.gpu, table_dtype(dep), eff.measured_scale)


@functools.lru_cache(maxsize=256)
def _speed(gpu, dtype: str, scale: float) -> KernelSpeed:
    table, tier = table_for(gpu)
    name = DTYPE_TABLE.get(dtype)
    if table is None or name is None:
        return KernelSpeed(GENERIC, "", None, None)
    peaks = dict(gpu.tensor_flops)
    bandwidth = gpu.memory_bandwidth * scale

    def rates(curve: Curve | None) -> CurveRates | None:
        if curve is None or curve.peak not in peaks:
            return None
        return CurveRates.of(curve, peaks[curve.peak] * scale, bandwidth)

    gemm, moe = rates(table.gemm.get(name)), rates(table.moe.get(name))
    if gemm is None and moe is None:
        return KernelSpeed(GENERIC, "", None, None)
    via = "" if tier == "measured" else f" via {table.gpu}"
    return KernelSpeed(tier if gemm is not None else GENERIC, f"{table.label}{via}, {name}", gemm, moe)
