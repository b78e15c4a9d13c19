"""What mixes tokens in each layer: attention, a linear-attention or state-space block, or nothing.

Hybrid models (Qwen3-Next's Gated DeltaNet with full attention every 4th layer, NVIDIA
Nemotron-H's Mamba2 layers) keep a KV cache only in their attention layers; every other token mixer
keeps a fixed-size state per request, however long the request is. The state shapes below are
vLLM's (``vllm/model_executor/layers/mamba/mamba_utils.py``, read in wheels 0.11.0 and 0.33.0;
docs/research/vllm-hybrid-state.md has the derivation and worked figures), in elements per GPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class LayerKind(StrEnum):
    """The token mixer of one decoder layer."""

    ATTENTION = "attention"  # softmax attention, full or sliding window: a KV cache per token
    LINEAR_ATTENTION = "linear_attention"  # Gated DeltaNet (qwen3_next): conv + recurrent state
    MAMBA = "mamba"  # Mamba2 (nemotron_h): conv + SSM state
    MLP = "mlp"  # no token mixer: a feed-forward-only layer (nemotron_h '-')


STATE_KINDS = frozenset({LayerKind.LINEAR_ATTENTION, LayerKind.MAMBA})
"""Layer kinds that hold a constant per-request state instead of a KV cache."""


class FfnKind(StrEnum):
    """The feed-forward block of one decoder layer."""

    DENSE = "dense"
    MOE = "moe"
    NONE = "none"  # a mixer-only layer (nemotron_h 'M' and '*')


@dataclass(frozen=True, kw_only=True)
class GatedDeltaNetSpec:
    """Gated DeltaNet sizes (Qwen3-Next: ``linear_*`` config keys)."""

    num_k_heads: int
    num_v_heads: int
    k_head_dim: int
    v_head_dim: int
    conv_kernel: int
    recurrent_state_bytes: int = 2
    """Bytes per recurrent-state element: the model's 16-bit dtype, 4 when the config asks for
    float32 (Qwen3.5's ``mamba_ssm_dtype``)."""

    def __post_init__(self) -> None:
        for name in ("num_k_heads", "num_v_heads", "k_head_dim", "v_head_dim", "conv_kernel", "recurrent_state_bytes"):
            _require_positive(name, getattr(self, name))
        if self.num_v_heads % self.num_k_heads:
            raise ValueError(f"num_v_heads ({self.num_v_heads}) must be a multiple of num_k_heads ({self.num_k_heads})")

    @property
    def conv_dim(self) -> int:
        """Channels the short convolution runs over: q and k (key width each) and v."""
        return 2 * self.num_k_heads * self.k_head_dim + self.num_v_heads * self.v_head_dim

    def conv_state_elements(self, tp: int, extra_tokens: int = 0) -> float:
        """(K - 1 + speculative tokens) x (2 nk dk + nv dv) / tp [elements]."""
        return (self.conv_kernel - 1 + extra_tokens) * self.conv_dim / tp

    def recurrent_state_elements(self, tp: int) -> float:
        """nv / tp x dk x dv [elements]: one dk x dv matrix per value head."""
        return self.num_v_heads / tp * self.k_head_dim * self.v_head_dim

    def params(self, hidden: int) -> float:
        """One layer [count]: in_proj_qkvz h x (2 key + 2 value widths), the beta and alpha
        projection h x 2 nv, the depthwise conv (conv_dim x K), A_log and dt_bias (nv each), the
        gated norm (dv), out_proj (nv dv x h)."""
        key, value = self.num_k_heads * self.k_head_dim, self.num_v_heads * self.v_head_dim
        return (
            hidden * (2 * key + 2 * value)
            + hidden * 2 * self.num_v_heads
            + self.conv_dim * self.conv_kernel
            + 2 * self.num_v_heads
            + self.v_head_dim
            + value * hidden
        )


@dataclass(frozen=True, kw_only=True)
class Mamba2Spec:
    """Mamba2 sizes (nemotron_h: ``mamba_num_heads`` H, ``mamba_head_dim`` P, ``ssm_state_size`` N,
    ``n_groups`` G, ``conv_kernel`` K); the inner width is H x P."""

    num_heads: int
    head_dim: int
    state_size: int
    n_groups: int
    conv_kernel: int
    ssm_state_bytes: int = 2
    """Bytes per SSM-state element vLLM keeps: 4 where it defaults to float32 (Nemotron-H from
    vLLM 0.33), else the model's 16-bit dtype."""

    def __post_init__(self) -> None:
        for name in ("num_heads", "head_dim", "state_size", "n_groups", "conv_kernel", "ssm_state_bytes"):
            _require_positive(name, getattr(self, name))

    @property
    def inner(self) -> int:
        return self.num_heads * self.head_dim

    def groups_per_gpu_total(self, tp: int) -> int:
        """G, or tp when G does not split over tp (vLLM replicates the groups to every rank)."""
        return self.n_groups if self.n_groups % tp == 0 else tp

    def conv_state_elements(self, tp: int, extra_tokens: int = 0) -> float:
        """(K - 1 + speculative tokens) x (H P + 2 G N) / tp [elements]."""
        channels = self.inner + 2 * self.groups_per_gpu_total(tp) * self.state_size
        return (self.conv_kernel - 1 + extra_tokens) * channels / tp

    def ssm_state_elements(self, tp: int) -> float:
        """H / tp x P x N [elements]."""
        return self.num_heads / tp * self.head_dim * self.state_size

    def params(self, hidden: int) -> float:
        """One layer [count]: in_proj h x (2 H P + 2 G N + H) (gate, x, B, C, dt), the depthwise conv
        and its bias ((H P + 2 G N) x (K + 1)), dt_bias, A_log and D (H each), the gated norm (H P),
        out_proj (H P x h)."""
        conv_dim = self.inner + 2 * self.n_groups * self.state_size
        return (
            hidden * (2 * self.inner + 2 * self.n_groups * self.state_size + self.num_heads)
            + conv_dim * (self.conv_kernel + 1)
            + 3 * self.num_heads
            + self.inner
            + self.inner * hidden
        )


def _require_positive(name: str, value: float) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
