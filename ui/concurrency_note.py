"""The concurrency figures side by side (review 2026-12 §4): what fits without preemption (KV budget /
KV(prompt + answer), the Explorer's headline), how many vLLM V1 ran at once in the burst (it admits on
the prompt's blocks and preempts: :attr:`core.estimate.burst.BurstTtft.peak_running`), and the figure
vLLM logs at start-up (KV tokens / max_model_len)."""

from __future__ import annotations

import streamlit as st

from core.estimate.result import Estimate
from ui import fmt
from ui.i18n import t


def concurrency_line(result: Estimate) -> str:
    """One line: without preemption, what the stepped burst ran, what vLLM logs (vLLM only; "" when
    neither of the last two applies)."""
    kv, burst, work = result.kv, result.burst, result.workload
    common = {
        "static": fmt.count(kv.max_concurrency_at_request_len),
        "tokens": fmt.count(work.request_len),
        "logged": f"{kv.max_concurrency_at_max_model_len:,.2f}",
        "max_model_len": fmt.count(result.deployment.max_model_len),
    }
    vllm = result.deployment.engine.release.engine == "vllm"
    if burst.peak_running is None:
        return t("metric.max_concurrency_v1_rounds", **common) if vllm else ""
    return t(
        "metric.max_concurrency_v1" if vllm else "metric.max_concurrency_v1_other",
        v1=fmt.count(burst.peak_running),
        batch=fmt.count(work.batch),
        preemptions=fmt.count(burst.preemptions),
        **common,
    )


def render_concurrency_line(result: Estimate) -> None:
    """:func:`concurrency_line` as a caption, when it says something."""
    if line := concurrency_line(result):
        st.caption(line)
