"""The vision tower of a multimodal checkpoint (``vision_config`` beside ``text_config``).

vLLM loads the tower with the language model, so its weights take GPU memory even when the
deployment only ever sees text. The tower is a ViT; its parameters, from the config's shapes:

    layers x (4 w^2 attention + 2 or 3 x w x ffn)      (3 for a gated SiLU MLP: Pixtral, Qwen2.5-VL)
    + channels x patch^2 x temporal patch x w           (patch embedding)
    + positions x w                                     (learned position table, where it has one)
    + projectors x (merged x text hidden (+ merged^2 when m x m patches merge: merged = w m^2))
      (Qwen3-VL adds a projector per "deepstack" layer it feeds into the language model)

Norms and biases are left out (well under 1 % of a tower). The projector's exact form differs per
architecture (one linear for Gemma 3, a two-layer merger for Qwen); the formula above is within a
few tens of millions of parameters of each, against towers of 0.4-0.7 B.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, kw_only=True)
class VisionSpec:
    """Shapes of a ViT vision tower and its projector into the language model."""

    kind: str
    """The vision config's model_type (siglip_vision_model, pixtral, qwen3_5, ...), or "vit"."""
    num_layers: int
    width: int
    ffn_size: int
    patch_size: int
    gated_ffn: bool = False
    channels: int = 3
    temporal_patch: int = 1
    merge: int = 1
    """Patches merged per side before the projector (Qwen's spatial_merge_size, Mistral 3's)."""
    positions: int = 0
    text_hidden: int = 0
    projectors: int = 1

    def __post_init__(self) -> None:
        for name in ("num_layers", "width", "ffn_size", "patch_size", "channels", "temporal_patch", "merge"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"vision {name} must be a positive integer, got {value!r}")

    @property
    def params(self) -> float:
        """Parameters of the tower and its projector [count] (module docstring)."""
        w = self.width
        per_layer = 4 * w * w + (3 if self.gated_ffn else 2) * w * self.ffn_size
        patch = self.channels * self.patch_size**2 * self.temporal_patch * w
        merged = w * self.merge**2
        projector = merged * self.text_hidden + (merged * merged if self.merge > 1 else 0)
        return self.num_layers * per_layer + patch + self.positions * w + self.projectors * projector


class VisionConfigError(ValueError):
    """A vision_config that cannot be read (the caller adds the config.json context)."""


def vision_from_config(config: Mapping[str, Any], text_hidden: int) -> VisionSpec | None:
    """The tower a multimodal config.json describes, None when it has no ``vision_config``."""
    vision = config.get("vision_config")
    if vision is None:
        return None
    if not isinstance(vision, Mapping):
        raise VisionConfigError("invalid field 'vision_config': expected an object")

    def number(*keys: str, default: int | None = None) -> int:
        for key in keys:
            value = vision.get(key)
            if value is not None:
                if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 10**7:
                    raise VisionConfigError(f"invalid field 'vision_config.{key}': {value!r}")
                return value
        if default is None:
            raise VisionConfigError(f"missing field 'vision_config.{keys[0]}'")
        return default

    width = number("hidden_size", "embed_dim", "vt_hidden_size")
    patch = number("patch_size")
    positions = number("num_position_embeddings", default=0)
    if not positions and vision.get("image_size") and vision.get("model_type") == "siglip_vision_model":
        positions = (number("image_size") // patch) ** 2  # SigLIP: one learned position per patch
    merge = vision.get("spatial_merge_size") or config.get("spatial_merge_size") or 1
    if isinstance(kernel := vision.get("merge_kernel_size"), list) and kernel:  # Kimi K2.5's MoonViT
        merge = kernel[0]
    deepstack = vision.get("deepstack_visual_indexes") or []
    try:
        return VisionSpec(
            kind=str(vision.get("model_type") or "vit"),
            num_layers=number("num_hidden_layers", "depth", "vt_num_hidden_layers"),
            width=width,
            ffn_size=number("intermediate_size", "vt_intermediate_size", default=4 * width),
            patch_size=patch,
            gated_ffn=vision.get("hidden_act") == "silu",
            channels=number("num_channels", "in_channels", "in_chans", default=3),
            temporal_patch=number("temporal_patch_size", default=1),
            merge=merge,
            positions=positions,
            text_hidden=text_hidden,
            projectors=1 + len(deepstack) if isinstance(deepstack, list) else 1,
        )
    except ValueError as err:
        raise VisionConfigError(str(err)) from None
