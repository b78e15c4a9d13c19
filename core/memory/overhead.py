"""What the engine and the driver take beside weights and activations: non-torch allocations, the
CUDA-graph estimate, and the memory the driver reserves (what CUDA reports as total)."""

from __future__ import annotations

from core.spec.engine import EngineConfig, Parallelism
from core.spec.gpu import GpuSpec


def overhead_bytes(engine: EngineConfig, par: Parallelism, gpu: GpuSpec) -> float:
    """Memory the engine adds beside weights and activations and charges to the budget [bytes]:
    non-torch allocations (more with tp > 1 over a fast link: NCCL buffers) plus the CUDA-graph
    estimate where the release charges it (vLLM >= 0.20). A GPU of an expert-parallel group
    (dp > 1) holds communication buffers as a tensor-parallel one does, whatever its tp."""
    collective = par if par.dp == 1 else Parallelism(tp=par.expert_parallel)
    return engine.non_torch(collective, gpu.interconnect) + engine.graph_charge_bytes


def usable_capacity_bytes(gpu_memory_bytes: float, engine: EngineConfig) -> float:
    """Total memory CUDA reports [bytes]: the driver's figure less what the driver reserves."""
    return gpu_memory_bytes - engine.driver_reserved_bytes
