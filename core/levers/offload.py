"""CPU offloading: weights or KV cache kept in host memory and read over the host link each step.

vLLM's ``--cpu-offload-gb X`` keeps X GiB of each GPU's weights in (pinned) host memory and
streams them to the GPU in every forward pass; engines that spill KV cache to the host read the
spilled part back every decode step. Each step reads them over the host link
(:mod:`core.timing.host_link`): a PCIe 4.0 x16 card reads about 24 GB/s, so every offloaded GiB
adds about 45 ms to *every* step, decode included: offloading makes a model fit, it does not make
it fast.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from core.levers.base import Lever, PartLabel
from core.memory.budget import MemoryPart
from core.memory.weights import weight_bytes_per_gpu
from core.messages import gib_text, notice
from core.spec import units
from core.timing.host_link import host_read_bandwidth, host_read_seconds
from core.timing.roofline import StepWork

if TYPE_CHECKING:
    from core.spec.deployment import Deployment


def spilled_kv_bytes(kv_in_use, gpu_kv_budget: float, host_kv_bytes: float):
    """KV bytes a step reads from host memory: what the batch holds beyond the GPU's KV budget,
    up to the host space set aside for it [bytes] (array-friendly)."""
    spill = np.clip(np.asarray(kv_in_use, dtype=float) - max(gpu_kv_budget, 0.0), 0.0, host_kv_bytes)
    return float(spill) if spill.ndim == 0 else spill


def weights_offload_to_fit(kv_budget: float, needed_kv: float, granularity: float) -> float:
    """Least weight offload [bytes] that leaves ``needed_kv`` bytes of KV budget when the budget
    without offloading is ``kv_budget``, rounded up to ``granularity`` (vLLM takes whole GiB);
    0 when the budget already holds it."""
    short = needed_kv - kv_budget
    if short <= 0:
        return 0.0
    return math.ceil(short / granularity) * granularity


class OffloadLever(Lever):
    """Offloading as memory and time terms: weights and KV space moved to host memory, and the host
    reads every step makes (offloaded weights always, KV beyond the GPU's budget when spilled)."""

    name = "offload"
    part_labels = (PartLabel("host_weights", "weights in host memory"), PartLabel("host_kv", "KV space in host memory"))

    def validate(self, dep: Deployment) -> None:
        offload = dep.levers.offload
        if dep.gpu.host_link_bandwidth <= 0:
            raise ValueError(f"{dep.gpu.name} has no host link bandwidth; offloading cannot be estimated")
        held = weight_bytes_per_gpu(dep.model, dep.weights, dep.parallel)
        if offload.weights_bytes >= held:
            raise ValueError(
                f"offloaded weights ({offload.weights_bytes / units.GiB:.1f} GiB) must be less than the "
                f"{held / units.GiB:.1f} GiB of weights each GPU holds"
            )

    def memory_parts(self, dep: Deployment, max_num_batched_tokens: int) -> tuple[MemoryPart, ...]:
        offload = dep.levers.offload
        return (
            MemoryPart("host_weights", offload.weights_bytes, "host_weights"),
            MemoryPart("host_kv", offload.kv_bytes, "host_kv"),
        )

    def step_work(self, dep: Deployment, tokens, sequences_per_step, steps) -> StepWork:
        offloaded = dep.levers.offload.weights_bytes
        return StepWork(host_bytes=np.asarray(steps, dtype=float) * offloaded) if offloaded else StepWork()

    def spilled_kv_bytes(self, dep: Deployment, kv_in_use, kv_budget):
        host_kv = dep.levers.offload.kv_bytes
        return spilled_kv_bytes(kv_in_use(), kv_budget(), host_kv) if host_kv else 0.0

    def notices(self, dep: Deployment, workload, memory):
        offload, eff = dep.levers.offload, dep.efficiency
        if offload.weights_bytes:
            yield notice(
                "offload_latency",
                offloaded=gib_text(offload.weights_bytes),
                link=dep.gpu.host_link_generation,
                bandwidth=f"{host_read_bandwidth(dep.gpu, eff) / units.GB:.1f} GB/s",
                ms=f"{host_read_seconds(dep.gpu, eff, offload.weights_bytes) / units.MS:.0f} ms",
            )
        spilled = spilled_kv_bytes(memory.kv_in_use, memory.kv_budget, offload.kv_bytes)
        if spilled > 0:
            yield notice(
                "kv_spill",
                spilled=gib_text(spilled),
                ms=f"{host_read_seconds(dep.gpu, eff, spilled) / units.MS:.0f} ms",
            )


LEVER = OffloadLever()
