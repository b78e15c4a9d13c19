"""CPU offloading: weights or KV cache kept in host memory and read over the host link each step.

vLLM's ``--cpu-offload-gb X`` keeps X GiB of each GPU's weights in (pinned) host memory and
streams them to the GPU in every forward pass; engines that spill KV cache to the host read the
spilled part back every decode step. The transfer is not hidden behind compute here (vLLM reads
offloaded weights as they are needed, on the critical path), so each step adds

    host seconds = bytes read from the host / (host link one-direction bandwidth x link efficiency)

with the host link a PCIe slot (data/gpus: ``[host_link]``, datasheet figure of both directions
summed). A PCIe 4.0 x16 card reads about 24 GB/s, so every offloaded GiB adds about 45 ms to
*every* step, decode included: offloading makes a model fit, it does not make it fast.
"""

from __future__ import annotations

import math

import numpy as np

from core.spec.engine import Efficiency
from core.spec.gpu import GpuSpec


def host_read_bandwidth(gpu: GpuSpec, eff: Efficiency) -> float:
    """Achievable host-to-GPU bandwidth [bytes/s] = one-direction host link x link efficiency."""
    if gpu.host_link_bandwidth <= 0:
        raise ValueError(f"{gpu.name} has no host link bandwidth in the catalog; offloading cannot be estimated")
    return gpu.host_link_bandwidth * eff.link


def host_read_seconds(gpu: GpuSpec, eff: Efficiency, bytes_read):
    """Time to read ``bytes_read`` bytes from host memory [s] (array-friendly); 0 for 0 bytes."""
    if np.isscalar(bytes_read) and not bytes_read:
        return 0.0
    bytes_read = np.asarray(bytes_read, dtype=float)
    if not np.any(bytes_read):
        return np.zeros_like(bytes_read) if bytes_read.ndim else 0.0
    seconds = bytes_read / host_read_bandwidth(gpu, eff)
    return float(seconds) if seconds.ndim == 0 else seconds


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
