"""The roofline of engine work on one replica, and the time of a phase split into its terms.

    GPU time = max(FLOPs / (peak x compute eff.),
                   (bytes + routed-expert bytes x (1 / expert eff. - 1)) / (bandwidth x bandwidth eff.))
               + all-reduce time + steps x (step overhead + layers x layer overhead)
               + (sequence, step) pairs x host overhead per sequence
               + host-link reads + time of models run beside the target (side_s)
    time     = max(GPU time, (sequence, step) pairs x front-end work per token)

The front end (API server: detokenizing, streaming) runs in its own process beside the engine,
so it bounds a step rather than adding to it.

Work is per GPU: tensor parallel divides FLOPs and weight bytes by tp (KV bytes per GPU follow
the head split); with data-parallel attention the work passed in is one rank's. The levers that
are on (:attr:`core.spec.deployment.Deployment.lever_models`) add their own work (:class:`StepWork`:
FLOPs, bytes, host reads) through :meth:`core.levers.base.Lever.step_work`; this module never names
a lever and never imports :mod:`core.levers`. Every function accepts numpy arrays and broadcasts them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from core.spec.precision import ACTIVATION_PRECISION
from core.spec.support import matmul_peak as matmul_peak_for
from core.timing.comm import comm_seconds
from core.timing.host_link import host_read_seconds

if TYPE_CHECKING:
    from core.spec.deployment import Deployment


@dataclass(frozen=True)
class StepWork:
    """Work a lever adds to a phase: matmul FLOPs and GPU bytes of the whole replica (split over
    tp like the model's), and bytes per GPU read over the host link (scalars or arrays)."""

    flops: Any = 0.0
    weight_bytes: Any = 0.0
    host_bytes: Any = 0.0


@dataclass(frozen=True)
class PhaseTime:
    """Time of a phase on one replica [s], with the parts that make it (scalars or arrays)."""

    compute_s: object
    memory_s: object
    comm_s: object
    overhead_s: object
    flops: object
    """FLOPs one GPU executes in the phase [FLOP]."""
    bytes_moved: object
    """Bytes one GPU reads or writes from memory in the phase [bytes]."""
    kv_bytes: object = 0.0
    """The part of ``bytes_moved`` that is KV cache (and a hybrid's state) rather than weights [bytes]."""
    host_s: object = 0.0
    """Reading data held in host memory over the host link (offloaded weights, spilled KV) [s]."""
    side_s: object = 0.0
    """Models run beside the target in the same steps (a speculative proposer) [s]."""
    frontend_s: object = 0.0
    """The API server's work on the tokens the phase streams, in its own process [s]."""

    @property
    def gpu_seconds(self):
        """The engine's time: roofline, all-reduces, step and host overheads, host reads, side models."""
        return np.maximum(self.compute_s, self.memory_s) + self.comm_s + self.overhead_s + self.host_s + self.side_s

    @property
    def seconds(self):
        return np.maximum(self.gpu_seconds, self.frontend_s)

    def per(self, count) -> PhaseTime:
        """Every part divided by ``count`` (e.g. per emitted token of a speculative step)."""
        return PhaseTime(**{f.name: np.asarray(getattr(self, f.name)) / count for f in dataclasses.fields(self)})

    @property
    def bound(self):
        """'compute' or 'memory' (bandwidth), whichever roofline term is larger."""
        label = np.where(np.asarray(self.compute_s) >= np.asarray(self.memory_s), "compute", "memory")
        return label if label.ndim else str(label)


def work_time(dep: Deployment, **work) -> PhaseTime:
    """The roofline of given work on one replica (:meth:`Roofline.__call__`, whose keywords
    ``work`` takes) for a deployment timed once."""
    return Roofline(dep)(**work)


class Roofline:
    """:func:`work_time` of one deployment, its peaks and efficiencies read once, and
    :meth:`step_times` for the simulator's runs of steps."""

    def __init__(self, dep: Deployment) -> None:
        self.dep, self.gpu, self.eff, self.tp = dep, dep.gpu, dep.efficiency, dep.parallel.tp
        self.matmul_peak, _ = matmul_peak_for(dep.gpu, dep.weights)
        self.attention_peak, _ = dep.gpu.flops_for(ACTIVATION_PRECISION)
        self.levers = dep.lever_models
        self.step_fixed_s = step_fixed_seconds(dep)

    def __call__(
        self,
        *,
        linear,
        attention,
        weights,
        kv_per_gpu,
        tokens,
        steps,
        sequence_steps=0.0,
        comm_s=None,
        host_bytes=0.0,
        expert_weights=0.0,
        frontend_steps=None,
    ) -> PhaseTime:
        """The roofline of given work on one replica: FLOPs and weight bytes of the whole replica (split
        over tp GPUs), KV bytes per GPU, tokens through the all-reduces, and the number of engine steps.
        ``sequence_steps`` counts (sequence, step) pairs for the per-sequence host overhead; ``comm_s``
        may pass :func:`comm_seconds` of the same tokens and steps when it is already known;
        ``host_bytes`` are bytes per GPU read from host memory; ``expert_weights`` is the routed-expert
        part of ``weights``, read at the expert efficiency; ``frontend_steps`` the (sequence, step) pairs
        the API server streams when they are not ``sequence_steps`` (with dp > 1 the work is one rank's,
        the front end streams every rank's). The levers that are on add their work."""
        dep, gpu, eff, tp = self.dep, self.gpu, self.eff, self.tp
        linear, weights, host = self._with_levers(linear, weights, host_bytes, tokens, sequence_steps, steps)
        linear = np.asarray(linear, dtype=float) / tp
        attention = np.asarray(attention, dtype=float) / tp
        moved = np.asarray(weights, dtype=float) / tp + kv_per_gpu
        slow = np.asarray(expert_weights, dtype=float) / tp * (1 / eff.expert - 1)  # expert bytes' extra time
        return PhaseTime(
            compute_s=(linear / self.matmul_peak + attention / self.attention_peak) / eff.compute,
            memory_s=(moved + slow) / (gpu.memory_bandwidth * eff.bandwidth),
            comm_s=comm_seconds(dep, tokens, steps) if comm_s is None else comm_s,
            overhead_s=np.asarray(steps, dtype=float) * self.step_fixed_s
            + np.asarray(sequence_steps, dtype=float) * eff.per_sequence_overhead_s,
            flops=linear + attention,
            bytes_moved=moved,
            kv_bytes=kv_per_gpu,
            host_s=host_read_seconds(gpu, eff, host),
            frontend_s=np.asarray(sequence_steps if frontend_steps is None else frontend_steps, dtype=float)
            * eff.frontend_per_token_s,
        )

    def _with_levers(self, linear, weights, host_bytes, tokens, sequence_steps, steps):
        """(linear FLOPs, weight bytes, host bytes) with the work of the levers that are on added."""
        if self.levers:
            per_step = np.asarray(sequence_steps, dtype=float) / np.asarray(steps, dtype=float)
            for lever in self.levers:
                work = lever.step_work(self.dep, tokens, per_step, steps)
                linear = np.asarray(linear, dtype=float) + work.flops
                weights = np.asarray(weights, dtype=float) + work.weight_bytes
                host_bytes = work.host_bytes + host_bytes
        return linear, weights, host_bytes

    def step_terms(self, *, linear: float, weights: float, tokens: float, comm_s: float) -> tuple:
        """The scalar parts of one step of ``tokens`` sequences of one new token each, for
        :meth:`step_times`: (matmul seconds, weight bytes per GPU, seconds added to the roofline,
        front-end seconds), with the levers' work."""
        eff, tp = self.eff, self.tp
        linear, weights, host_bytes = self._with_levers(linear, weights, 0.0, tokens, tokens, 1.0)
        added = (
            comm_s,
            self.step_fixed_s + tokens * eff.per_sequence_overhead_s,
            host_read_seconds(self.gpu, eff, host_bytes),
        )
        return float(linear) / tp / self.matmul_peak, float(weights) / tp, added, tokens * eff.frontend_per_token_s

    def step_times(self, attention: np.ndarray, kv_per_gpu: np.ndarray, terms: tuple) -> np.ndarray:
        """``self(..., steps=1.0, sequence_steps=tokens, comm_s=comm_s).seconds`` of the work that
        gave ``terms`` (:meth:`step_terms`), one step per entry of ``attention`` and ``kv_per_gpu``
        [s]: the same arithmetic in the same order, in place on the two arrays (which it uses up),
        without the other parts of a PhaseTime and without dividing by one or adding terms that
        are exactly zero (the simulator evaluates it for every run of decode steps)."""
        matmul_s, weights, added, frontend_s = terms
        seconds, memory = attention, kv_per_gpu
        if self.tp != 1:
            seconds /= self.tp
        seconds /= self.attention_peak
        seconds += matmul_s
        seconds /= self.eff.compute
        memory += weights
        memory /= self.gpu.memory_bandwidth * self.eff.bandwidth
        np.maximum(seconds, memory, out=seconds)
        for term in added:
            if term:
                seconds += term
        return np.maximum(seconds, frontend_s, out=seconds)


def step_fixed_seconds(dep: Deployment) -> float:
    """Fixed cost of one engine step [s] = step overhead + layers x layer overhead (every layer's
    kernels are launched in every step, whatever the pipeline split)."""
    eff = dep.efficiency
    return eff.step_overhead_s + dep.model.num_layers * eff.layer_overhead_s
