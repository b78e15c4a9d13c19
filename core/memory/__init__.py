"""One GPU's memory: weights, KV cache, activation peak, engine overhead, each engine's KV budget
(:class:`~core.memory.budget.GpuMemory`, the one result type) and the concurrency it allows.
Levers sit above this package: the deployment hands in the models of the levers that are on
(:attr:`core.spec.deployment.Deployment.lever_models`) and nothing here imports :mod:`core.levers`.

``overhead`` is read through ``budget``; the rest is public (``activations`` for its formula's
constants, which the explanations substitute).
"""

__all__ = [
    "accounting",  # each engine's KV-budget rule, SGLang's CUDA-context allowance
    "activations",  # the start-up profile's activation peak and its constants
    "budget",  # GpuMemory, gpu_memory, MemoryPart: every part of one GPU's memory and the KV budget
    "capacity",  # KvCapacity, kv_capacity: the concurrency ceiling three ways
    "kv",  # KV per token and per sequence, vLLM's block groups
    "request_kv",  # the KV a request holds with the levers: own, shared, batch
    "state",  # a hybrid's constant per-request state and vLLM's block size for it
    "weights",  # weight bytes per group and per GPU
]
