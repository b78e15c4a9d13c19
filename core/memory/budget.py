"""One GPU's memory, as one type: every part, what is left for KV cache, and what is in use.

    KV budget = usable x gpu_memory_utilization - (weights resident + lever parts beside them)
                - (activation peak + lever parts of the peak) - overhead

as vLLM's ``determine_available_memory`` computes it up to 0.33 (docs/model.md), with usable = the
driver's total less what the driver reserves; vLLM 0.34 measures it after warm-up on CUDA and ROCm,
and SGLang and TensorRT-LLM apply their fractions differently (:mod:`core.memory.accounting`).
The levers that are on add named parts (:class:`MemoryPart`),
which the deployment hands in (:attr:`core.spec.deployment.Deployment.lever_models`, each lever's
:meth:`~core.levers.base.Lever.memory_parts`): beside the weights (a speculative proposer, LoRA
slots), in the activation peak (eager attention's scores), or in host memory (offloaded weights,
which the GPU then does not hold, and host KV space, which extends the KV space). This module
never names a lever and never imports :mod:`core.levers`, which sits above it.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.memory.accounting import engine_held_back, engine_kv_budget, sizing_rule
from core.memory.activations import activation_peak_bytes
from core.memory.overhead import overhead_bytes, usable_capacity_bytes
from core.memory.weights import moe_padding_bytes_per_gpu, weight_bytes_per_gpu

if TYPE_CHECKING:
    from core.spec.deployment import Deployment

MEMORY_KINDS = ("gpu_static", "gpu_peak", "host_weights", "host_kv")
"""gpu_static: held on the GPU beside the weights; gpu_peak: part of the start-up activation peak;
host_weights: weights moved from the GPU to host memory; host_kv: host memory that extends the KV space."""


@dataclass(frozen=True)
class MemoryPart:
    """One named part of a GPU's memory that a lever adds [bytes]."""

    name: str
    """Key of the part: ``<name>_gib`` in JSON, ``memory.<name>`` in the UI text."""
    bytes: float
    kind: str

    def __post_init__(self) -> None:
        if self.kind not in MEMORY_KINDS:
            raise ValueError(f"memory part kind must be one of {', '.join(MEMORY_KINDS)}, got {self.kind!r}")

    @property
    def on_gpu(self) -> bool:
        return self.kind.startswith("gpu")


@dataclass(frozen=True, kw_only=True)
class GpuMemory:
    """One GPU's memory [bytes]; the GPU parts, the KV budget and what is held back add up to ``capacity``."""

    capacity: float
    """Total memory as the driver reports it."""
    driver_reserved: float
    held_back: float
    """usable x (1 - gpu_memory_utilization): CUDA context and anything outside the engine (vLLM >= 0.34
    on CUDA and ROCm: at least the CUDA context and the sizing margin, :mod:`core.memory.accounting`)."""
    weights: float
    """The model's weights resident on the GPU (those a lever moves to host memory excluded)."""
    activations: float
    """The model's activation peak of the start-up profile run (lever parts of the peak excluded)."""
    overhead: float
    kv_budget: float
    """What remains for KV cache; negative when the rest does not fit."""
    kv_in_use: float = 0.0
    """KV cache the workload's batch needs (GPU and host together)."""
    parts: tuple[MemoryPart, ...] = ()
    """The levers' parts, in registry order."""
    sizing: str = "vllm_estimated"
    """How the engine sized the KV budget (:data:`core.memory.accounting.SIZING_RULES`)."""

    def part(self, name: str) -> float:
        """Bytes of the lever part called ``name``; 0 when no lever that is on adds it."""
        return sum((p.bytes for p in self.parts if p.name == name), 0.0)

    def _kind(self, kind: str) -> float:
        return sum((p.bytes for p in self.parts if p.kind == kind), 0.0)

    @property
    def usable(self) -> float:
        """What CUDA reports as total: the driver's figure less what the driver reserves."""
        return self.capacity - self.driver_reserved

    @property
    def lever_gpu(self) -> float:
        """The levers' parts held on the GPU, beside the weights and in the peak."""
        return sum((p.bytes for p in self.parts if p.on_gpu), 0.0)

    @property
    def host_weights(self) -> float:
        """Weights kept in host memory and read over the host link (not part of ``capacity``)."""
        return self._kind("host_weights")

    @property
    def host_kv(self) -> float:
        """Host memory set aside for KV cache beyond the GPU budget (not part of ``capacity``)."""
        return self._kind("host_kv")

    @property
    def non_kv(self) -> float:
        """Everything the engine charges before KV cache: weights, peak and overhead, lever parts included."""
        total = self.weights
        for p in self.parts:
            if p.kind == "gpu_static":
                total += p.bytes
        total += self.activations
        for p in self.parts:
            if p.kind == "gpu_peak":
                total += p.bytes
        return total + self.overhead

    @property
    def kv_space(self) -> float:
        """KV the replica can hold per GPU: the GPU budget plus host KV space (none when it does not fit)."""
        return self.kv_budget + self.host_kv if self.kv_budget > 0 else self.kv_budget

    @property
    def kv_free(self) -> float:
        return self.kv_budget + self.host_kv - self.kv_in_use


def gpu_memory(dep: Deployment, kv_in_use: float = 0.0) -> GpuMemory:
    """One GPU's memory for ``dep`` with ``kv_in_use`` bytes of KV cache taken (module docstring)."""
    memory = _gpu_memory(dep)
    return dataclasses.replace(memory, kv_in_use=kv_in_use) if kv_in_use else memory


@functools.lru_cache(maxsize=512)  # keyed on the frozen deployment; the lever models are fixed at import
def _gpu_memory(dep: Deployment) -> GpuMemory:
    tokens, seqs = dep.batch_limits
    usable = usable_capacity_bytes(dep.gpu.memory_bytes, dep.engine)
    parts = tuple(part for lever in dep.lever_models for part in lever.memory_parts(dep, tokens))
    weights = weight_bytes_per_gpu(dep.model, dep.weights, dep.parallel)
    weights += moe_padding_bytes_per_gpu(dep.model, dep.weights, dep.parallel, dep.gpu)  # kernel tiles
    static = weights
    activations = activation_peak_bytes(dep.model, tokens, seqs)
    peak = activations
    # weights moved to the host come off first, then the other parts are added: the order the
    # budget has always been summed in (one loop would move the last bit of the float)
    for p in parts:
        if p.kind == "host_weights":
            weights -= p.bytes
            static -= p.bytes
    for p in parts:
        if p.kind == "gpu_static":
            static += p.bytes
        elif p.kind == "gpu_peak":
            peak += p.bytes
    overhead = overhead_bytes(dep.engine, dep.parallel, dep.gpu)
    release, fraction, vendor = dep.engine.release, dep.memory_fraction, dep.gpu.vendor
    budget = engine_kv_budget(release, usable, fraction, static, peak, overhead, vendor)
    return GpuMemory(
        capacity=dep.gpu.memory_bytes,
        driver_reserved=dep.engine.driver_reserved_bytes,
        held_back=engine_held_back(release, usable, fraction, static, peak + overhead, peak, vendor),
        weights=weights,
        activations=activations,
        overhead=overhead,
        kv_budget=budget,
        parts=parts,
        sizing=sizing_rule(release, vendor),
    )
