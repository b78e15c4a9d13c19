"""What-if levers: their settings, the one interface through which they add memory parts, KV
terms, step work and notices (``base``), each lever's formulas and model, and the registry that
memory and timing consult."""

__all__ = [
    "attention_kernel",  # eager attention's score matrix
    "base",  # Lever, MemoryPart, StepWork: the interface
    "lora",  # multi-LoRA
    "offload",  # CPU offloading of weights and KV
    "prefix",  # prefix caching
    "registry",  # LEVERS, levers_on, side_deployments
    "settings",  # Levers and each lever's settings
    "speculative",  # speculative decoding
]
