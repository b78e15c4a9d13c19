"""A headline number's explanation one click away: its formula, this scenario's values in it, the
result as the page shows it, and the rule's source (core/estimate/explain.py).

Popovers are lazy (Streamlit 1.67, ``on_change="rerun"`` and ``.open``): a closed one builds
nothing, so explanations cost a slider step nothing until someone opens one.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from core.estimate.explain import Explanation
from core.planning.explain import plan_explanations
from ui import fmt
from ui.i18n import t

WRAP_CHARS = 90  # a substituted formula longer than this breaks at its "=" signs, one step per line


def aligned(latex: str) -> str:
    """A long chain "a = b = c" as an aligned block, one "= ..." per line, so it never runs past
    the page or the popover. Only "=" outside braces and parentheses count, and a ``\\quad``
    remark (such as "(B = 16, R = 11)") stays whole at the end of the last line."""
    chain, quad, remark = latex.partition(r"\quad")
    if len(latex) <= WRAP_CHARS:
        return latex
    parts, depth, start = [], 0, 0
    for i, char in enumerate(chain):
        depth += char in "{("
        depth -= char in "})"
        if depth == 0 and chain.startswith(" = ", i):
            parts.append(chain[start:i])
            start = i + 3
    parts.append(chain[start:] + quad + remark)
    if len(parts) < 3:
        return latex
    return r"\begin{aligned}" + parts[0] + " &= " + r" \\ &= ".join(parts[1:]) + r"\end{aligned}"


TEX_WORDS = {  # words inside the formulas' \text{}: core writes them in English, the page in its language
    "KV budget": "tex_kv_budget",
    "KV space": "tex_kv_space",
    "KV/request": "tex_kv_request",
    "B params": "tex_b_params",
    "output tokens/s": "tex_output_rate",
    "fits": "tex_fits",
    "and": "tex_and",
    "bytes": "tex_bytes",
    "compute-bound": "tex_compute_bound",
    "ms, below the front end's": "tex_below_frontend",
    "ms per step": "tex_ms_per_step",
    "plain": "tex_plain",
    "params": "tex_params",
    "MiB per adapter": "tex_mib_per_adapter",
    "tokens, attending to the ": "tex_tokens_attending",
    " cached": "tex_cached",
    "tokens/step": "tex_tokens_per_step",
    "state/request": "tex_state_request",
    "state/layer": "tex_state_layer",
    "of B requests sent at t = 0, V1 admission stepped": "tex_burst_sent",  # data/messages/learn30.toml
    "steps": "tex_steps",
    "preemptions": "tex_preemptions",
    "rounds of": "tex_rounds_of",
    "ms of all-reduces and sends": "tex_allreduce_sends",  # data/messages/step30.toml
    "ms gathering the logits: sequences": "tex_logits_gather",
    "per step": "tex_per_step",
    "kWh per 1M": "tex_kwh_per_million",  # data/messages/energy.toml
    "USD per 1M": "tex_usd_per_million",
    "tokens/J": "tex_tokens_per_joule",
    "GPU price": "tex_gpu_price",
    "price": "tex_electricity_price",
}


def in_language(latex: str) -> str:
    """``latex`` with the words of its ``\\text{}`` in the page's language."""
    for words, key in TEX_WORDS.items():
        latex = latex.replace(rf"\text{{{words}}}", rf"\text{{{t(f'explain.{key}')}}}")
    return latex


def latex(formula: str) -> None:
    """``st.latex`` with the formula's words in the page's language."""
    st.latex(in_language(aligned(formula)))


def show_explanation(item: Explanation, shown: str) -> None:
    """The explanation's body: what the symbols mean, the formula, the values, the result ``shown``."""
    st.markdown(f"**{t(f'explain.{item.key}_title')}**")
    st.latex(in_language(item.formula))
    st.latex(in_language(aligned(item.values)))
    st.markdown(t("explain.result", shown=shown))
    st.caption(t(f"explain.{item.key}_symbols"))
    st.caption(t("explain.source", source=item.source))


def explain_popover(explained: Callable[[], dict[str, Explanation]], key: str, shown: str, container=None) -> None:
    """A small "how" button under a number; opening it shows :func:`show_explanation` of
    ``explained()[key]`` (``explained`` is called only then)."""
    where = container if container is not None else st
    with where.popover(t("explain.button"), icon=":material/function:", key=f"explain_{key}", on_change="rerun") as box:
        if box.open:
            show_explanation(explained()[key], shown)


MEMORY_PARTS = ("weights", "activations", "overhead", "kv_budget", "kv_per_token", "kv_in_use", "max_concurrency")


def explain_memory_popover(explained: Callable[[], dict[str, Explanation]]) -> None:
    """One popover under the memory chart: every part's explanation, each with its number as the
    chart's hover shows it (GiB with two decimals; bytes per token; requests)."""
    with st.popover(
        t("explain.memory_heading"), icon=":material/function:", key="explain_memory", on_change="rerun"
    ) as box:
        if box.open:
            for key in MEMORY_PARTS:
                item = explained()[key]
                in_gib = item.unit == "B" and key != "kv_per_token"
                show_explanation(
                    item, fmt.gib(item.value) if in_gib else f"{fmt.count(item.value)} {t(f'unit.{item.unit}')}"
                )


def explain_plan(plan) -> None:
    """The Plan's steady-state TTFT, TPOT and throughput and its memory numbers, one click away."""
    found = plan_explanations(plan)
    with st.popover(
        t("explain.plan_heading"), icon=":material/function:", key="explain_plan", on_change="rerun"
    ) as box:
        if box.open:
            for key, item in found.items():
                if item.unit == "s":
                    shown = fmt.duration(item.value)
                elif item.unit == "tok/s":
                    shown = fmt.rate(item.value)
                elif item.unit == "B" and key != "kv_per_token":
                    shown = fmt.gib(item.value)
                else:
                    shown = f"{fmt.count(item.value)} {t(f'unit.{item.unit}')}"
                show_explanation(item, shown)
