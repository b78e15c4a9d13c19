"""What a phase's time is made of (:class:`PhaseTime`) and the work a lever adds to one (:class:`StepWork`):
the records :mod:`core.timing.roofline` fills in, scalars or numpy arrays."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np


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
    """All-reduces, the logits gather, pipeline sends and all-to-all exchanges [s] (:mod:`core.timing.comm`)."""
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
    """The API server's work delivering the tokens the phase streams, in its own process [s]."""
    kernels_s: object = None
    """The kernel classes' rooflines added up (dense GEMMs + MoE experts + attention) [s]; None: the
    phase is one roofline, max(compute_s, memory_s)."""
    moe_s: object = 0.0
    """The part of ``kernels_s`` that is the routed experts' grouped GEMMs and MoE layer overhead [s]."""
    attention_s: object = 0.0
    """The part of ``kernels_s`` that is attention: max(score and value FLOPs, KV bytes) [s]."""
    attention_flops: object = 0.0
    """The part of ``flops`` that is attention's scores and values [FLOP]."""
    expert_flops: object = 0.0
    """The part of ``flops`` that is the routed experts' grouped GEMMs [FLOP]."""
    expert_bytes: object = 0.0
    """The part of ``bytes_moved`` that is routed-expert weights [bytes]."""
    gather_s: object = 0.0
    """The part of ``comm_s`` that gathers the LM head's logits over the tensor-parallel GPUs [s]."""

    @property
    def kernel_seconds(self):
        """The GPU kernels' time: each kernel class's roofline, added up."""
        if self.kernels_s is None:
            return np.maximum(self.compute_s, self.memory_s)
        return self.kernels_s

    @property
    def gpu_seconds(self):
        """The engine's time: kernels, all-reduces, step and host overheads, host reads, side models."""
        return self.kernel_seconds + self.comm_s + self.overhead_s + self.host_s + self.side_s

    @property
    def seconds(self):
        """What the client observes of the phase: the engine's time, or the API server's delivery of
        the streamed tokens when that is longer (the front end lags delivery, it does not slow the engine)."""
        return np.maximum(self.gpu_seconds, self.frontend_s)

    def per(self, count) -> PhaseTime:
        """Every part divided by ``count`` (e.g. per emitted token of a speculative step)."""
        return PhaseTime(
            **{
                f.name: None if getattr(self, f.name) is None else np.asarray(getattr(self, f.name)) / count
                for f in dataclasses.fields(self)
            }
        )

    @property
    def bound(self):
        """'compute' or 'memory' (bandwidth), whichever roofline term is larger."""
        label = np.where(np.asarray(self.compute_s) >= np.asarray(self.memory_s), "compute", "memory")
        return label if label.ndim else str(label)
