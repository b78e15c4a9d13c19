"""The single changes the tool tries on a deployment, listed once.

The Explorer's advice (what would make it fit, :mod:`core.estimate.advice`) and the planner's fixes
(:mod:`core.planning.fixes`) take their candidate formats and parallel degrees from here. They and
the sensitivity tornado (:mod:`core.validation.sensitivity`) build engine, efficiency, lever and
parallelism variants with :class:`~core.spec.deployment.Deployment`'s ``with_*`` methods, so a
change means the same in all three.
"""

from __future__ import annotations

from core.spec.deployment import Deployment
from core.spec.engine import wider_tensor_parallel
from core.spec.precision import KV_PRECISIONS, WEIGHT_PRECISIONS, Precision

QUANTIZED_WEIGHTS = ("fp8", "int8", "int4")
"""Weight formats to quantize to, most faithful first."""
FP8_KV = KV_PRECISIONS["fp8"]
HIGH_UTILIZATION = 0.95
"""The gpu_memory_utilization suggested when more memory may go to the engine (the estimate's
advice, and the Plan fix when vLLM's KV cache binds). vLLM's tuning guide (docs.vllm.ai,
"Optimization and Tuning", preemption) advises raising it when the KV cache is short; 0.95 still
leaves 4 GB of an 80 GB GPU to the CUDA context and other processes."""


def smaller_weight_formats(dep: Deployment, names: tuple[str, ...] = QUANTIZED_WEIGHTS) -> tuple[Precision, ...]:
    """The weight formats among ``names`` that store fewer bits per weight than ``dep``'s."""
    formats = (WEIGHT_PRECISIONS[name] for name in names)
    return tuple(p for p in formats if p.bits_per_element < dep.weights.bits_per_element)


def fp8_kv_change(dep: Deployment) -> Precision | None:
    """FP8 KV cache when the cache is wider than 8 bits, else None."""
    return FP8_KV if dep.kv.bits_per_element > FP8_KV.bits_per_element else None


def wider_tp(dep: Deployment) -> tuple[int, ...]:
    """Tensor-parallel degrees above ``dep``'s that can split its model."""
    return wider_tensor_parallel(dep.model, dep.parallel.tp)
