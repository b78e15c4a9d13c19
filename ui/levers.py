"""The sidebar's "Optimizations" section: the what-if levers, every input bound to the URL.

Bound widgets write their displayed option to the URL, so options show language-independent
names (method and kernel names, model names) and a shared link survives a language switch. The
settings are returned as plain values; the sidebar builds the :class:`core.levers.settings.Levers` with the
rest of the scenario, so an impossible combination is reported once, with its other errors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import streamlit as st

from core.levers.settings import (
    ATTENTION_KERNELS,
    LORA_TARGETS,
    MAX_DRAFT_TOKENS,
    SPEC_METHODS,
    Levers,
    Lora,
    Offload,
    PrefixCaching,
    Speculative,
)
from core.levers.speculative import ACCEPTANCE_RANGES, draft_candidates
from core.memory.weights import weight_bytes_per_gpu
from core.spec import units
from core.spec.engine import Parallelism
from core.spec.model import ModelSpec
from ui import url_inputs
from ui.i18n import t

OFF = "off"
LORA_RANKS = (8, 16, 32, 64, 128)
MAX_HOST_KV_GIB = 512
MAX_ADAPTERS = 512
OFFLOAD_STEP_GIB = 0.5


@dataclass(frozen=True)
class LeverInputs:
    """What the user set; :meth:`build` turns it into core settings (may raise ValueError)."""

    method: str
    draft_id: str | None
    k: int
    acceptance: float
    prefix_tokens: int
    hit_rate: float
    offload_weights_gib: float
    offload_kv_gib: float
    adapters: int
    rank: int
    targets: str
    attention: str

    def build(self, models: dict[str, ModelSpec]) -> Levers:
        speculative = None
        if self.method != OFF:
            draft = models.get(self.draft_id) if self.method == "draft" and self.draft_id else None
            if self.method == "draft" and draft is None:
                raise ValueError(t("levers.no_draft"))
            speculative = Speculative(method=self.method, draft=draft, k=self.k, acceptance=self.acceptance)
        return Levers(
            speculative=speculative,
            prefix=PrefixCaching(shared_tokens=self.prefix_tokens, hit_rate=self.hit_rate),
            offload=Offload(
                weights_bytes=self.offload_weights_gib * units.GiB, kv_bytes=self.offload_kv_gib * units.GiB
            ),
            lora=Lora(adapters=self.adapters, rank=self.rank, targets=self.targets) if self.adapters else None,
            attention=self.attention,
        )


LEVER_PARAMS = ("spec", "prefix", "prefix_hit", "offload_w", "offload_kv", "lora_n", "attn")


def active_lever_params() -> list[str]:
    """Lever inputs set away from their defaults (the section opens when there are some)."""
    defaults = {"spec": OFF, "attn": "flash"}
    return [
        key
        for key in LEVER_PARAMS
        if st.session_state.get(key, st.query_params.get(key)) not in (None, 0, 0.0, "0", "0.0", defaults.get(key))
    ]


def lever_inputs(model: ModelSpec, models: dict[str, ModelSpec], weights, tp: int) -> LeverInputs:
    """Draw the section's widgets (inside the sidebar) and return what they hold."""
    st.caption(t("levers.intro"))
    st.markdown(f"**{t('levers.spec')}**")
    method = st.selectbox(
        t("levers.spec_method"),
        [OFF, *SPEC_METHODS],
        key="spec",
        bind="query-params",
        help=t("levers.spec_help"),
    )
    draft_id, k, acceptance = None, 4, 0.7
    if method != OFF:
        if method == "draft":
            candidates = [m.id for m in draft_candidates(model, models.values())]
            if candidates:
                draft_id = st.selectbox(
                    t("levers.draft"),
                    candidates,
                    key="draft",
                    bind="query-params",
                    format_func=lambda i: models[i].name,
                    help=t("levers.draft_help"),
                )
            else:
                st.warning(t("levers.no_draft_for", model=model.name))
        low, high = ACCEPTANCE_RANGES[method]
        k = st.slider(t("levers.k"), 1, MAX_DRAFT_TOKENS, 4, key="spec_k", bind="query-params", help=t("levers.k_help"))
        acceptance = st.slider(
            t("levers.acceptance"),
            0.0,
            1.0,
            round((low + high) / 2, 2),
            0.01,
            key="spec_acc",
            bind="query-params",
            help=t("levers.acceptance_help", low=f"{low:.1f}", high=f"{high:.1f}"),
        )
    st.markdown(f"**{t('levers.prefix')}**")
    prefix_tokens = url_inputs.number(
        "prefix", t("levers.prefix_tokens"), 0, 0, model.max_context, help=t("levers.prefix_help")
    )
    hit_rate = st.slider(
        t("levers.hit_rate"), 0.0, 1.0, 0.0, 0.05, key="prefix_hit", bind="query-params", help=t("levers.hit_help")
    )
    st.markdown(f"**{t('levers.offload')}**")
    held_gib = weight_bytes_per_gpu(model, weights, Parallelism(tp=tp)) / units.GiB
    top = max(math.floor(held_gib * 2 - 0.01) / 2, OFFLOAD_STEP_GIB)  # whole half-GiB below the weights
    if st.session_state.get("offload_w", 0.0) > top:  # a smaller model was chosen: keep the value in range
        st.session_state["offload_w"] = top
    offload_weights = st.slider(
        t("levers.offload_weights"),
        0.0,
        top,
        0.0,
        OFFLOAD_STEP_GIB,
        key="offload_w",
        bind="query-params",
        help=t("levers.offload_weights_help"),
    )
    offload_kv = st.slider(
        t("levers.offload_kv"),
        0.0,
        float(MAX_HOST_KV_GIB),
        0.0,
        1.0,
        key="offload_kv",
        bind="query-params",
        help=t("levers.offload_kv_help"),
    )
    st.markdown(f"**{t('levers.lora')}**")
    adapters = url_inputs.number("lora_n", t("levers.adapters"), 0, 0, MAX_ADAPTERS, help=t("levers.adapters_help"))
    rank, targets = 16, "all-linear"
    if adapters:
        rank = st.select_slider(t("levers.rank"), LORA_RANKS, value=16, key="lora_r", bind="query-params")
        targets = st.selectbox(
            t("levers.targets"),
            LORA_TARGETS,
            index=1,
            key="lora_t",
            bind="query-params",
            help=t("levers.targets_help"),
        )
    attention = st.selectbox(
        t("levers.attention"),
        ATTENTION_KERNELS,
        key="attn",
        bind="query-params",
        help=t("levers.attention_help"),
    )
    return LeverInputs(
        method=method,
        draft_id=draft_id,
        k=int(k),
        acceptance=float(acceptance),
        prefix_tokens=int(prefix_tokens),
        hit_rate=float(hit_rate),
        offload_weights_gib=float(offload_weights),
        offload_kv_gib=float(offload_kv),
        adapters=int(adapters),
        rank=int(rank),
        targets=targets,
        attention=attention,
    )


def active_summary(levers: Levers) -> str:
    """The levers that are on, in the UI language ("" when none)."""
    return ", ".join(t(f"levers.short_{name}") for name in levers.active)
