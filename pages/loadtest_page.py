"""Load test: simulate continuous batching under traffic and find where TTFT avalanches."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.planning.requirement import DEFAULT_TPOT_SLO_S, DEFAULT_TTFT_SLO_S
from core.serving.load_sweep import load_sweep, predicted_rates, summarize
from core.serving.traffic import LENGTH_DISTRIBUTIONS, Traffic, longest_request, read_lengths_csv
from core.spec import units
from core.spec.engine_defaults import sized_max_model_len
from ui import fmt, sim_charts
from ui.figure import chart
from ui.i18n import t
from ui.levers import active_summary
from ui.safe import escape_markdown
from ui.sidebar import max_model_len_is_auto, require_scenario
from ui.sim_inputs import lengths, number, run_simulation, sweep_rates, traffic_mode

st.title(t("lt.title"))
st.caption(t("lt.subtitle"))
dep = require_scenario().deployment
if summary := active_summary(dep.levers):
    st.info(t("levers.on", levers=summary))

mode = traffic_mode()
left, middle, right = st.columns(3)
with left:
    if mode == "rate":
        rate = number(t("lt.rate"), "rate", 1.0, 0.001, 100_000.0)
        burst = number(t("lt.burstiness"), "burst", 1.0, 0.1, 10.0, help=t("lt.burstiness_help"))
    elif mode == "concurrency":
        clients = number(t("lt.concurrency"), "clients", 16, 1, 100_000)
    else:
        users = number(t("lt.users"), "users", 50, 1, 100_000)
        think = number(t("lt.think"), "think", 30.0, 0.0, 86_400.0)
    count = number(t("lt.num_requests"), "count", 1000, 10, 20_000)
with middle:
    prompt_mean = number(t("lt.prompt_mean"), "prompt", 1000, 1, 1_000_000)
    answer_mean = number(t("lt.answer_mean"), "answer", 200, 1, 1_000_000)
    distribution = st.selectbox(
        t("lt.distribution"), LENGTH_DISTRIBUTIONS, key="lt_dist", bind="query-params", help=t("lt.distribution_help")
    )
    spread = number(t("lt.spread"), "spread", 0.5, 0.0, 3.0)
    st.caption(t("lt.own_lengths"))  # the sidebar's lengths sit beside these: this page does not use them
with right:
    ttft_ms = number(t("lt.ttft_slo"), "ttft_ms", DEFAULT_TTFT_SLO_S / units.MS, 0.0, 3_600_000.0)
    tpot_ms = number(t("lt.tpot_slo"), "tpot_ms", DEFAULT_TPOT_SLO_S / units.MS, 0.0, 3_600_000.0)
    seed = number(t("lt.seed"), "seed", 0, 0, 2**31 - 1)
    upload = st.file_uploader(t("lt.csv"), type=["csv"], key="lt_csv", help=t("lt.csv_help"))

ttft_slo = ttft_ms * units.MS if ttft_ms > 0 else None
tpot_slo = tpot_ms * units.MS if tpot_ms > 0 else None
try:
    if mode == "rate":
        traffic = Traffic(mode="rate", rate_per_s=rate, burstiness=burst)
    elif mode == "concurrency":
        traffic = Traffic(mode="concurrency", concurrency=clients)
    else:
        traffic = Traffic(mode="users", users=users, think_time_s=think)
    if upload is not None:
        prompts, answers = read_lengths_csv(upload.getvalue())
        st.caption(t("lt.csv_loaded", rows=len(prompts)))
    else:
        prompts, answers = lengths(prompt_mean, distribution, spread), lengths(answer_mean, distribution, spread)
    if max_model_len_is_auto():  # as simulate sizes it: the longest request drawn, else the model's context
        longest = longest_request(prompts, answers)
        sized = dep.model.max_context if longest is None else sized_max_model_len(longest, dep.model.max_context)
        dep = dep.with_engine(max_model_len=sized)
    with st.spinner(t("lt.running_sim")):
        result = run_simulation(dep, traffic, count, prompts, answers, seed)
except ValueError as err:
    st.error(t("lt.error", error=escape_markdown(str(err))))
    st.stop()

stats = summarize(result)
st.caption(t("lt.scope"))  # which figure this is: a simulated percentile, beside the steady state to quote
if result.ranks > 1:  # data-parallel attention: one rank simulated
    st.caption(t("sim_dp.one_rank", ranks=result.ranks, requests=f"{len(result.arrival):,}"))
cols = st.columns(6)
cols[0].metric("TTFT P50", fmt.duration(stats["ttft"]["p50"]))
cols[1].metric("TTFT P99", fmt.duration(stats["ttft"]["p99"]))
cols[2].metric("TPOT P50", fmt.duration(stats["tpot"]["p50"]))
cols[3].metric("TPOT P99", fmt.duration(stats["tpot"]["p99"]))
cols[4].metric(t("metric.throughput"), fmt.rate(result.output_tokens_per_s))
goodput = t("lt.no_slo") if ttft_slo is None and tpot_slo is None else f"{result.goodput(ttft_slo, tpot_slo):.1%}"
cols[5].metric(t("lt.goodput"), goodput, help=t("lt.goodput_help"))
st.caption(
    t(
        "lt.summary",
        requests=f"{len(result.arrival):,}",
        duration=fmt.duration(result.duration_s),
        rate=f"{result.request_throughput_per_s:.2f}",
        preemptions=result.preemptions,
        itl=fmt.duration(stats["itl"]["p99"]),
        e2e=fmt.duration(stats["e2e"]["p50"]),
    )
)
left, right = st.columns(2)
chart(left, sim_charts.distribution_figure(result), key="lt_distribution")
chart(right, sim_charts.series_figure(result), key="lt_series")

st.subheader(t("lt.sweep_heading"))
mean_prompt = int(np.mean(prompts)) if isinstance(prompts, np.ndarray) else prompt_mean
mean_answer = int(np.mean(answers)) if isinstance(answers, np.ndarray) else answer_mean
static, naive = predicted_rates(dep, max(mean_prompt, 1), max(mean_answer, 1))
st.markdown(t("lt.sweep_intro", static=f"{static:.2f}", naive=f"{naive:.3f}"))
sweep_key = (
    "lt_sweep",
    dep,
    mean_prompt,
    mean_answer,
    upload is not None,
    distribution,
    spread,
    seed,
    ttft_slo,
    tpot_slo,
    count,
)
if st.button(t("lt.run_sweep"), key="lt_run_sweep", type="primary"):
    bar = st.progress(0.0, text=t("lt.sweeping"))
    sweep = load_sweep(
        dep,
        sweep_rates(static),
        min(count, 2000),
        prompts,
        answers,
        ttft_slo,
        tpot_slo,
        seed,
        progress=lambda done, total: bar.progress(done / total, text=t("lt.sweeping")),
    )
    bar.empty()
    st.session_state["lt_sweep_result"] = (sweep_key, sweep)
stored = st.session_state.get("lt_sweep_result")
if stored and stored[0] == sweep_key:
    sweep = stored[1]
    left, right = st.columns(2)
    chart(left, sim_charts.sweep_figure(sweep, ttft_slo), key="lt_sweep_chart")
    chart(right, sim_charts.sweep_throughput_figure(sweep), key="lt_sweep_throughput")
    knee = f"{sweep.knee_rate:.2f}" if sweep.knee_rate else t("plan.none")
    within = f"{sweep.max_rate_under_slo:.2f}" if sweep.max_rate_under_slo else t("plan.none")
    st.markdown(
        t("lt.sweep_result", knee=knee, slo=within, static=f"{sweep.static_rate:.2f}", naive=f"{sweep.naive_rate:.3f}")
    )
