"""What the engine and the driver take beside weights and activations: non-torch allocations, the
CUDA-graph estimate, and the memory the driver reserves (what CUDA reports as total)."""

from __future__ import annotations

from core.spec.engine import EngineConfig, Parallelism


def overhead_bytes(engine: EngineConfig, par: Parallelism) -> float:
    """Memory the engine adds beside weights and activations and charges to the budget [bytes]:
    non-torch allocations (more with tp > 1: NCCL buffers) plus the CUDA-graph estimate."""
    non_torch = engine.non_torch_bytes_tp if par.tp > 1 else engine.non_torch_bytes
    return non_torch + engine.cuda_graph_bytes


def usable_capacity_bytes(gpu_memory_bytes: float, engine: EngineConfig) -> float:
    """Total memory CUDA reports [bytes]: the driver's figure less what the driver reserves."""
    return gpu_memory_bytes - engine.driver_reserved_bytes
