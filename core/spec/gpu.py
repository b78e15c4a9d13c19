"""Accelerator specs: memory as the driver reports it, bandwidth, dense tensor throughput, links.

Every figure is a vendor datasheet value in SI units (bytes, bytes/s, FLOP/s), dense (never "with
sparsity"). Achievable fractions of these peaks are *our* assumptions and live in
:mod:`core.spec.engine`, never folded into the catalog numbers.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from core.spec.precision import Precision

LINK_DIRECTIONS = 2  # datasheets quote link bandwidth as the sum of both directions


@dataclass(frozen=True, kw_only=True)
class GpuSpec:
    """One accelerator."""

    id: str
    name: str
    vendor: str
    memory_bytes: float
    """Total memory as the driver reports it (nvidia-smi / torch.cuda.mem_get_info) [bytes]."""
    memory_bytes_datasheet: float
    """Marketed capacity (decimal GB on the datasheet) [bytes]."""
    memory_basis: str
    """'driver' when memory_bytes was read from a real driver output, else 'datasheet'."""
    memory_bandwidth: float
    """Peak DRAM bandwidth [bytes/s]."""
    tensor_flops: tuple[tuple[str, float], ...]
    """Dense tensor throughput per compute type [FLOP/s, or OP/s for integers]."""
    interconnect: str
    """'nvlink', 'pcie', 'infinity-fabric' or 'none'."""
    link_bandwidth_bidirectional: float
    """GPU-to-GPU bandwidth per GPU, both directions summed as datasheets state it [bytes/s]."""
    architecture: str = ""
    form_factor: str = ""
    memory_type: str = ""
    """'hbm' or 'gddr': the GPU class whose validation errors set the uncertainty ranges."""
    interconnect_generation: str = ""
    host_link_bandwidth_bidirectional: float = 0.0
    """GPU-to-host (PCIe) bandwidth, both directions summed as datasheets state it [bytes/s]; 0 unknown."""
    host_link_generation: str = ""
    host_link_source_url: str = ""
    compute_capability: str = ""
    """NVIDIA's CUDA compute capability ("8.6"), or an AMD GPU's ISA target ("gfx942"); "" unknown."""
    compute_source_url: str = ""
    price_per_hour: float | None = None
    price_provider: str = ""
    price_source_url: str = ""
    price_read: dt.date | None = None
    source_url: str = ""
    source_read: dt.date | None = None
    memory_source_url: str = ""
    notes: str = ""
    tdp_w: float | None = None
    """Board power limit from the vendor's datasheet [W]; None where none was found."""
    idle_w: float | None = None
    """Board power at 0 % utilisation, measured (captured nvidia-smi) or derived by ``idle_rule`` [W]."""
    power_source_url: str = ""
    idle_source_url: str = ""
    idle_rule: str = ""
    """How idle_w was derived when no measurement was found ("" = measured)."""

    def __post_init__(self) -> None:
        for name in ("memory_bytes", "memory_bytes_datasheet", "memory_bandwidth"):
            value = getattr(self, name)
            if not value > 0:
                raise ValueError(f"{name} must be > 0, got {value}")
        if not self.tensor_flops:
            raise ValueError("tensor_flops must list at least one precision")
        for key, value in self.tensor_flops:
            if not value > 0:
                raise ValueError(f"tensor_flops[{key}] must be > 0, got {value}")
        if "fp16" not in dict(self.tensor_flops) and "bf16" not in dict(self.tensor_flops):
            raise ValueError("tensor_flops must include fp16 or bf16")
        if self.link_bandwidth_bidirectional < 0:
            raise ValueError(f"link_bandwidth_bidirectional must be >= 0, got {self.link_bandwidth_bidirectional}")
        if self.host_link_bandwidth_bidirectional < 0:
            raise ValueError(
                f"host_link_bandwidth_bidirectional must be >= 0, got {self.host_link_bandwidth_bidirectional}"
            )
        if self.tdp_w is not None and not (self.idle_w is not None and 0 < self.idle_w < self.tdp_w):
            raise ValueError(f"idle_w must be > 0 and < tdp_w, got idle_w={self.idle_w}, tdp_w={self.tdp_w}")
        if self.price_per_hour is not None and not self.price_per_hour > 0:
            raise ValueError(f"price_per_hour must be > 0, got {self.price_per_hour}")

    @property
    def link_bandwidth(self) -> float:
        """One-direction GPU-to-GPU bandwidth, what a ring all-reduce step moves [bytes/s]."""
        return self.link_bandwidth_bidirectional / LINK_DIRECTIONS

    @property
    def host_link_bandwidth(self) -> float:
        """One-direction host-to-GPU bandwidth, what reading offloaded data moves [bytes/s]."""
        return self.host_link_bandwidth_bidirectional / LINK_DIRECTIONS

    @property
    def cuda_capability(self) -> int | None:
        """The CUDA compute capability as engines compare it (8.6 -> 86); None off NVIDIA or unknown."""
        major, dot, minor = self.compute_capability.partition(".")
        if not (dot and major.isdigit() and minor.isdigit()):
            return None
        return int(major) * 10 + int(minor)

    def flops_for(self, precision: Precision) -> tuple[float, str]:
        """Dense peak [FLOP/s] for matmuls in ``precision`` and the compute type actually used.

        Falls back to the precision's fallback type, then to 16-bit, when the GPU lacks the unit
        (e.g. FP8 on an A100 runs as weight-only kernels on FP16 tensor cores).
        """
        table = dict(self.tensor_flops)
        for key in (precision.compute, precision.compute_fallback, "bf16", "fp16"):
            if key in table:
                return table[key], key
        raise AssertionError("unreachable: __post_init__ guarantees fp16 or bf16")
