"""What-if levers a team turns on once the basics are set: settings only, validated at creation.

- :class:`Speculative`: speculative decoding with a draft model, an n-gram lookup or MTP heads;
- :class:`PrefixCaching`: a prefix shared by every request, plus a hit rate on the rest;
- :class:`Offload`: weights or KV cache held in host memory and read over the host link;
- :class:`Lora`: N LoRA adapters of rank r served beside the base model;
- ``attention``: the attention kernel, 'flash' (no score matrix) or 'eager' (materializes it).

The formulas that turn these into memory and time live in :mod:`core.levers.speculative`,
:mod:`core.levers.prefix`, :mod:`core.levers.offload`, :mod:`core.levers.lora` and :mod:`core.levers.attention_kernel`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from core.spec import units
from core.spec.model import ModelSpec

SPEC_METHODS = ("draft", "ngram", "mtp")
"""draft: a smaller model of the same vocabulary; ngram: prompt lookup on the host (no GPU work);
mtp: multi-token-prediction / EAGLE-style heads, one extra decoder layer of the target's shape."""
MAX_DRAFT_TOKENS = 16
LORA_TARGETS = ("attention", "all-linear")
"""attention: q, k, v and o projections; all-linear: those plus the MLP's gate, up and down."""
ATTENTION_KERNELS = ("flash", "eager")
MAX_OFFLOAD_BYTES = 4096 * units.GiB


@dataclass(frozen=True, kw_only=True)
class Speculative:
    """Speculative decoding: propose ``k`` tokens cheaply, verify them in one target step.

    ``acceptance`` is the per-token probability alpha that a proposed token is accepted (the
    Leviathan et al. model: each token accepted independently, the first rejection ends the run).
    """

    method: str = "draft"
    draft: ModelSpec | None = None
    """The draft model (method 'draft' only)."""
    k: int = 4
    acceptance: float = 0.7

    def __post_init__(self) -> None:
        if self.method not in SPEC_METHODS:
            raise ValueError(f"speculative method must be one of {', '.join(SPEC_METHODS)}, got {self.method!r}")
        if (self.method == "draft") != (self.draft is not None):
            raise ValueError("speculative method 'draft' needs a draft model, and only it takes one")
        if isinstance(self.k, bool) or not isinstance(self.k, int) or not 1 <= self.k <= MAX_DRAFT_TOKENS:
            raise ValueError(
                f"speculative k (draft tokens) must be an integer from 1 to {MAX_DRAFT_TOKENS}, got {self.k!r}"
            )
        if not 0.0 <= self.acceptance <= 1.0:
            raise ValueError(f"speculative acceptance must be between 0 and 1, got {self.acceptance!r}")


@dataclass(frozen=True, kw_only=True)
class PrefixCaching:
    """Automatic prefix caching: cached prompt tokens skip prefill.

    ``shared_tokens``: a prefix every request starts with (system prompt, few-shot block); its KV
    blocks are held once and shared by every running request. ``hit_rate``: the share of the rest
    of the prompt found in the cache from earlier turns of the same conversation; those tokens skip
    prefill too but their KV is the request's own.
    """

    shared_tokens: int = 0
    hit_rate: float = 0.0

    def __post_init__(self) -> None:
        if isinstance(self.shared_tokens, bool) or not isinstance(self.shared_tokens, int):
            raise ValueError(f"prefix shared_tokens must be an integer, got {self.shared_tokens!r}")
        if not 0 <= self.shared_tokens <= 10_000_000:
            raise ValueError(f"prefix shared_tokens must be from 0 to 10000000, got {self.shared_tokens!r}")
        if not 0.0 <= self.hit_rate <= 1.0:
            raise ValueError(f"prefix hit_rate must be between 0 and 1, got {self.hit_rate!r}")


@dataclass(frozen=True, kw_only=True)
class Offload:
    """Per GPU: ``weights_bytes`` of weights and up to ``kv_bytes`` of KV cache kept in host memory
    and read over the GPU's host link every step that needs them [bytes]."""

    weights_bytes: float = 0.0
    kv_bytes: float = 0.0

    def __post_init__(self) -> None:
        for name in ("weights_bytes", "kv_bytes"):
            value = getattr(self, name)
            if not 0 <= value <= MAX_OFFLOAD_BYTES:
                raise ValueError(
                    f"offload {name} must be between 0 and {MAX_OFFLOAD_BYTES / units.GiB:.0f} GiB, got {value!r}"
                )


@dataclass(frozen=True, kw_only=True)
class Lora:
    """``adapters`` LoRA adapters resident on the GPU (vLLM's max_loras) of rank ``rank``."""

    adapters: int = 1
    rank: int = 16
    targets: str = "all-linear"

    def __post_init__(self) -> None:
        if isinstance(self.adapters, bool) or not isinstance(self.adapters, int) or not 1 <= self.adapters <= 10_000:
            raise ValueError(f"LoRA adapters must be an integer from 1 to 10000, got {self.adapters!r}")
        if isinstance(self.rank, bool) or not isinstance(self.rank, int) or not 1 <= self.rank <= 1024:
            raise ValueError(f"LoRA rank must be an integer from 1 to 1024, got {self.rank!r}")
        if self.targets not in LORA_TARGETS:
            raise ValueError(f"LoRA targets must be one of {', '.join(LORA_TARGETS)}, got {self.targets!r}")


@dataclass(frozen=True, kw_only=True)
class Levers:
    """Every lever of a deployment; the default turns all of them off."""

    speculative: Speculative | None = None
    prefix: PrefixCaching = field(default_factory=PrefixCaching)
    offload: Offload = field(default_factory=Offload)
    lora: Lora | None = None
    attention: str = "flash"

    def __post_init__(self) -> None:
        if self.attention not in ATTENTION_KERNELS:
            raise ValueError(f"attention must be one of {', '.join(ATTENTION_KERNELS)}, got {self.attention!r}")

    @functools.cached_property
    def active(self) -> tuple[str, ...]:
        """Names of the levers that are on."""
        on = []
        if self.speculative is not None:
            on.append("speculative")
        if self.prefix.shared_tokens or self.prefix.hit_rate:
            on.append("prefix")
        if self.offload.weights_bytes or self.offload.kv_bytes:
            on.append("offload")
        if self.lora is not None:
            on.append("lora")
        if self.attention != "flash":
            on.append("attention")
        return tuple(on)
