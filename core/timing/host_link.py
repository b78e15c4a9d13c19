"""The host link: reading bytes from host memory over PCIe (offloaded weights, spilled KV cache).

    host seconds = bytes read / (host link one-direction bandwidth x link efficiency)

with the host link a PCIe slot (data/gpus: ``[host_link]``, datasheet figure of both directions
summed). A PCIe 4.0 x16 card reads about 24 GB/s. The transfer is not hidden behind compute
(vLLM reads offloaded weights as they are needed, on the critical path).
"""

from __future__ import annotations

import numpy as np

from core.spec.efficiency import Efficiency
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
