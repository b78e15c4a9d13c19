"""What-if levers: their settings, the one interface through which they add memory parts, KV
terms, step work and notices (``base``), each lever's formulas and model, and the registry of
models. Levers sit above memory and timing: a lever may import their formulas, and a deployment
hands the models of its levers that are on to memory and timing, which never import this package."""

__all__ = [
    "attention_kernel",  # eager attention's score matrix
    "base",  # Lever, PartLabel: the interface (its MemoryPart and StepWork live in memory and timing)
    "lora",  # multi-LoRA
    "offload",  # CPU offloading of weights and KV
    "prefix",  # prefix caching
    "registry",  # LEVERS, levers_on, memory_part_labels
    "settings",  # Levers and each lever's settings
    "speculative",  # speculative decoding
]
