"""Model names as people type them: catalog ids, display names and Hugging Face ids, and the repos
derived from them (instruct and chat tunes, dated releases, quantized uploads).

A name is cut into lower-case tokens (``meta-llama/Llama-3.1-8B-Instruct`` -> llama, 3.1, 8b,
instruct; the organisation is dropped). Ollama's ``family:tag`` names cut the same way: the colon is
a separator and a family's letters are split from its version (``llama3.1:8b`` -> llama, 3.1, 8b;
``qwen3-32b`` and ``qwen-3-32b`` are one name). Tokens that name a tune (instruct, chat, it,
thinking, latest, ...) or a weight format (fp8, awq, gptq-int4, bnb-4bit, mxfp4, nvfp4, w4a16, w8a8,
fp16, ...) leave the architecture unchanged and are set aside, the format giving the weights. What
is left is matched against every catalog model's keys (its id, display name and HF id, cut the same
way), first exactly, then without a release date (``-2507``, ``-0324``) or a version (``-v0.1``),
then as a subset of a model's tokens ("llama 8b instruct"), the closest first.

A name that matches none of these is never resolved by likeness: :func:`closest_models` only
suggests the catalog models whose keys are nearest by edit distance (``lama-3.1-8b`` ->
llama-3.1-8b), and :func:`unknown_model` says so in one line (:mod:`core.spec.suggestions`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from core.messages import message
from core.spec.model import ModelSpec
from core.spec.suggestions import MAX_TYPED, SUGGESTIONS, UnknownName, closest

TUNE_TOKENS = frozenset({"instruct", "chat", "it", "base", "hf", "sft", "rl", "thinking", "exp", "latest", "text"})
"""Fine-tunes and packaging that keep the architecture (weights differ, shapes do not): Qwen's
``-Thinking`` reasoning tunes, DeepSeek's ``-Exp`` preview of V3.2 (the same config as V3.2),
Ollama's ``:latest`` and ``-text`` (base) tags."""
ORG_TOKENS = frozenset({"meta"})
"""Leading tokens some repos add to the name (``Meta-Llama-3-8B``)."""
QUANT_TOKENS: dict[str, str | None] = {
    # token -> the weight format it implies (None: it only qualifies another token)
    "fp8": "fp8",
    "dynamic": None,
    "static": None,
    "block": None,
    "awq": "int4",
    "gptq": "int4",
    "int4": "int4",
    "int8": "int8",
    "w4a16": "int4",
    "w8a8": "int8",
    "w8a16": "int8",
    "bnb": "int4",
    "4bit": "int4",
    "8bit": "int8",
    "mxfp4": "mxfp4",
    "nvfp4": "nvfp4",
    "fp4": "nvfp4",
    "quantized": None,
    "fp16": "fp16",
    "bf16": "bf16",
}
"""Weight formats a name states: quantized uploads, and Ollama's ``-fp16`` tag. A bit width named
beside a method wins (``GPTQ-Int8`` is 8-bit)."""
BIT_TOKENS = ("int8", "8bit", "w8a8", "w8a16", "int4", "4bit", "w4a16")
DATE = re.compile(r"^\d{4}$")  # -2507, -0324, -0528: a dated release of the same architecture
VERSION = re.compile(r"^v\d+(\.\d+)*$")  # -v0.1, -v0.3
_REPO_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9_])?"
REPO_ID = re.compile(rf"^(?!.*(?:--|\.\.))(?!.*\.git$){_REPO_PART}/{_REPO_PART}$")
"""A Hugging Face repo id (``owner/name``) by the Hub's rules (at most 96 characters a part, no
``--`` or ``..``, no ``.git`` at the end, no ``-`` or ``.`` at either end of a part), judged from the
text alone (:mod:`core.spec.hub` uses it too)."""
SEPARATORS = re.compile(r"[\s_\-:]+")
GLUED = re.compile(r"^([a-z]{2,})(\d.*)$")
"""A family glued to its version (qwen3, llama3.1, phi4): split so it reads as qwen 3. One letter
before digits stays whole: it is part of the name (v3, r1, k2, a3b, m2.5)."""


@dataclass(frozen=True)
class Parsed:
    """A typed model name cut into what names the architecture and what does not."""

    tokens: tuple[str, ...]
    tune: tuple[str, ...]
    quantization: tuple[str, ...]
    weight_dtype: str | None


def parse_name(name: str) -> Parsed:
    """Cut ``name`` into architecture tokens, tune tokens, quantization tokens and the weight format."""
    base = name.strip().lower().rstrip("/").rsplit("/", 1)[-1]
    base = base.replace("quantized.", "quantized-")
    tokens = [part for t in SEPARATORS.split(base) if t for part in _unglued(t)]
    while tokens and tokens[0] in ORG_TOKENS and len(tokens) > 1:
        tokens = tokens[1:]
    keep = [t for t in tokens if t not in TUNE_TOKENS and t not in QUANT_TOKENS]
    quant = [t for t in tokens if t in QUANT_TOKENS]
    return Parsed(
        tokens=tuple(keep),
        tune=tuple(t for t in tokens if t in TUNE_TOKENS),
        quantization=tuple(quant),
        weight_dtype=_weight_dtype(quant),
    )


def _unglued(token: str) -> tuple[str, ...]:
    """``qwen3`` -> (qwen, 3); tune and format tokens (fp8, int4, mxfp4) stay whole."""
    glued = GLUED.match(token)
    if glued is None or token in TUNE_TOKENS or token in QUANT_TOKENS:
        return (token,)
    return glued.groups()


def _weight_dtype(quant: list[str]) -> str | None:
    bits = next((QUANT_TOKENS[t] for t in quant if t in BIT_TOKENS), None)
    if bits is not None:
        return bits
    return next((QUANT_TOKENS[t] for t in quant if QUANT_TOKENS[t] is not None), None)


def model_keys(model: ModelSpec) -> set[tuple[str, ...]]:
    """The token tuples a catalog model answers to: its id, display name and HF id, parsed."""
    return {parse_name(n).tokens for n in (model.id, model.name, model.hf_id) if n}


def _without(tokens: tuple[str, ...], pattern: re.Pattern[str]) -> tuple[str, ...]:
    return tuple(t for t in tokens if not pattern.match(t))


@dataclass(frozen=True)
class ModelMatch:
    """What a typed name resolved to."""

    typed: str
    model: ModelSpec
    how: str
    """'id' (a catalog id, name or HF id as it stands), 'derived' (a tune, release or quantized
    upload of a catalog architecture), 'closest' (the best of several tokens-only matches),
    'config' (a config.json file) or 'hub' (the repo's config.json fetched from the Hub)."""
    weight_dtype: str | None = None
    """The weight format the name states (``-FP8``, ``-AWQ``); None when it states none."""
    unread_dtype: str | None = None
    """The torch_dtype the model's config.json states that was not understood (quoted), its
    weights taken as bf16 instead (:func:`core.spec.hf_config.unread_dtype`): said beside the
    answer (:meth:`notices`), never silently."""

    @property
    def served_name(self) -> str:
        """What to pass to ``vllm serve``: the repo the user named (a repo id in shape, ``owner/name``),
        else the catalog's HF id."""
        typed = self.typed.strip()
        if self.how != "config" and REPO_ID.match(typed):
            return typed
        return self.model.hf_id or self.model.id

    def describe(self, weights: str, lang: str = "en") -> str:
        """One line: ``meta-llama/Llama-3.1-8B-Instruct -> Llama-3.1-8B architecture, bf16``."""
        stored = (
            f" ({self.model.quantization})" if self.model.quantization and weights == self.model.native_dtype else ""
        )
        return message(
            "names.match", lang, typed=self.typed.strip(), model=self.model.name, weights=weights, stored=stored
        )

    def as_dict(self, weights: str) -> dict[str, str]:
        """The match as JSON: what was typed, the architecture, how it matched, the weights, the served name."""
        return {
            "typed": self.typed.strip(),
            "architecture": self.model.id,
            "matched_by": self.how,
            "weight_dtype": weights,
            "served_as": self.served_name,
            "summary": self.describe(weights),
        } | ({"notices": self.notices()} if self.notices() else {})

    def notices(self, lang: str = "en") -> list[str]:
        """What was not understood in the model's config.json and what was assumed, one line each."""
        return [message("hostile_config.dtype_assumed", lang, value=self.unread_dtype)] if self.unread_dtype else []

    def deployed_model(self) -> ModelSpec:
        """The architecture as the named checkpoint: served under the typed repo's name, its weights
        in the format the name states (a ``-FP8`` upload is an FP8 checkpoint, not one to quantize)."""
        changes = {}
        if self.served_name != self.model.hf_id:
            changes["hf_id"] = self.served_name
        if self.weight_dtype is not None:
            changes["native_dtype"] = self.weight_dtype
        return dataclasses.replace(self.model, **changes) if changes else self.model


def find_models(name: str, models: Iterable[ModelSpec]) -> tuple[list[ModelSpec], str]:
    """Catalog models that ``name`` may mean, best first, and how they matched ('id', 'derived',
    'closest' or '' when none did)."""
    models = list(models)
    if len(name) > MAX_TYPED:  # names nothing, and is not read (a link's model= may carry 500 KB)
        return [], ""
    key = name.strip().lower()
    exact = [m for m in models if key in (m.id.lower(), m.name.lower(), m.hf_id.lower())]
    if exact:
        return exact[:1], "id"
    parsed = parse_name(name)
    if not parsed.tokens:
        return [], ""
    for tokens in (parsed.tokens, _without(parsed.tokens, DATE), _without(_without(parsed.tokens, DATE), VERSION)):
        found = [m for m in models if tokens in model_keys(m)]
        if found:
            return found[:1], "derived"
    wanted = set(parsed.tokens)
    ranked = sorted((score, m.id, m) for m in models if (score := _extra_tokens(wanted, m)) is not None)
    return [m for _, _, m in ranked], "closest" if ranked else ""


def _extra_tokens(wanted: set[str], model: ModelSpec) -> int | None:
    """How many tokens the closest of ``model``'s keys has beyond ``wanted`` (None: no key holds them all)."""
    return min((len(set(k) - wanted) for k in model_keys(model) if wanted <= set(k)), default=None)


def match_model(name: str, models: Iterable[ModelSpec]) -> ModelMatch | None:
    """The catalog model ``name`` means, or None; a tokens-only match must be closer than the next."""
    return pick_match(name, *find_models(name, list(models)))


def pick_match(name: str, found: list[ModelSpec], how: str) -> ModelMatch | None:
    """The match among ``find_models``' answer (``found``, ``how``) for ``name``, or None when there
    is none or the two closest tokens-only matches are equally close."""
    if not found:
        return None
    if how == "closest" and len(found) > 1:
        wanted = set(parse_name(name).tokens)
        if _extra_tokens(wanted, found[0]) == _extra_tokens(wanted, found[1]):
            return None
    weight_dtype = parse_name(name).weight_dtype if how != "id" else None
    return ModelMatch(typed=name, model=found[0], how=how, weight_dtype=weight_dtype)


def closest_models(name: str, models: Iterable[ModelSpec], limit: int = SUGGESTIONS) -> list[ModelSpec]:
    """The catalog models whose keys (tokens joined by spaces) are most like ``name``'s
    (:func:`closest`), in id order among equals. Only ever offered, never resolved."""
    if len(name) > MAX_TYPED:
        return []
    typed = " ".join(parse_name(name).tokens)
    entries = ((m, (" ".join(k) for k in model_keys(m))) for m in sorted(models, key=lambda m: m.id))
    return closest(typed, entries, limit)


def unknown_model(name: str, models: Sequence[ModelSpec]) -> UnknownName:
    """Why ``name`` names no single model: the equally close ones when several fit (``find_models``),
    else the closest by likeness."""
    found, how = find_models(name, models)
    ambiguous = how == "closest" and len(found) > 1
    offered = found if ambiguous else closest_models(name, models)
    return UnknownName(
        "model",
        name,
        [m.id for m in offered],
        ambiguous=ambiguous,
        known=len(models),
        labels=[f"{m.id} ({m.hf_id})" if ambiguous and m.hf_id else m.id for m in offered],
    )
