"""Plan: can the sidebar's setup serve this load within these SLOs? Verdict, checks, fixes, command."""

from __future__ import annotations

import dataclasses
import json

import pandas as pd
import streamlit as st

from core.deploy.section import deploy_section
from core.planning.answer import operating_point, plan_answer, queue_sentence
from core.planning.cost import cost
from core.planning.launch import serve_command
from core.planning.report import headroom_line, plan_to_dict, solvers_to_dict
from core.planning.report_csv import csv_report
from core.planning.report_formats import html_report, markdown_report
from core.planning.requirement import DEFAULT_TPOT_SLO_S, DEFAULT_TTFT_SLO_S, Requirement
from core.report.money import with_price
from core.report.render import to_data
from core.spec import units
from core.spec.engine_defaults import sized_max_model_len
from ui import fmt
from ui.answer import show_answer
from ui.apply_fix import applied_note, fix_chooser
from ui.benchcheck import benchmark_section
from ui.best_deployment import best_deployment_section
from ui.defaults import show_set
from ui.deploy_download import deploy_downloads
from ui.download import download_button
from ui.energy import plan_energy_line
from ui.explain import explain_plan
from ui.i18n import lang, notice_text, t
from ui.levers import active_summary
from ui.money import current_rate, gpu_price_cell, plan_price, price_help, shown
from ui.plan_checks import checks_table
from ui.plan_inputs import FOLLOWING, PREFIX, apply_preset, following, load_kind, number
from ui.planning import plan_bundle
from ui.safe import escape_markdown
from ui.share import view_link
from ui.sidebar import max_model_len_is_auto, require_scenario

st.title(t("plan.title"))
st.caption(t("plan.subtitle"))
dep = require_scenario().deployment
answer_box = st.container()  # the answer first, above the inputs (filled once the plan is known)
if summary := active_summary(dep.levers):
    st.info(t("levers.on", levers=summary))

st.selectbox(
    t("plan.preset"),
    ["custom", "chat", "batch", "api"],
    key="plan_preset",
    on_change=apply_preset,
    format_func=lambda name: t(f"plan.preset_{name}"),
)
kind = load_kind()
left, middle, right = st.columns(3)
with left:
    if kind == "users":
        users = number(t("plan.users"), "users", 50, 1, 10_000_000)
        think = number(t("plan.think_time"), "think", 30.0, 0.0, 86_400.0)
    elif kind == "in_flight":
        in_flight = number(t("plan.in_flight"), "in_flight", 16, 1, 10_000_000)
    else:
        rate = number(t("plan.rate"), "rate", 1.0, 0.001, 1_000_000.0)
    replicas = number(t("plan.replicas"), "replicas", 1, 1, 100_000)
with middle:
    prompt = number(t("plan.prompt_len"), "prompt", 1500, 1, 10_000_000)
    # a P95 follows its typical length until the user sets it (no spread unless one is stated)
    prompt_p95 = following(t("plan.prompt_len_p95"), "prompt_p95", prompt, 1, 10_000_000)
    answer = number(t("plan.answer_len"), "answer", 300, 1, 10_000_000)
    answer_p95 = following(t("plan.answer_len_p95"), "answer_p95", answer, 1, 10_000_000)
    shared_prefix = number(
        t("plan.shared_prefix"), "shared_prefix", 0, 0, 10_000_000, help=t("plan.shared_prefix_help")
    )
    st.caption(t("plan.own_lengths"))  # the sidebar's lengths sit beside these: this page does not use them
with right:
    # the SLOs every check uses unless set (check, search, simulate and the Load test: the same)
    ttft_ms = number(t("plan.ttft_slo"), "ttft_ms", DEFAULT_TTFT_SLO_S / units.MS, 0.0, 3_600_000.0)
    user_rate = number(t("plan.user_rate"), "user_rate", 1 / DEFAULT_TPOT_SLO_S, 0.0, 100_000.0)
    catalog_price = dep.gpu.price_per_hour or 0.0
    price = following(  # the GPU's catalog price, until the user sets one
        t("plan.price"),
        "price",
        float(catalog_price),
        0.0,
        1_000_000.0,
        help=price_help(dep.gpu),  # the catalog price's provider and date (ui.money)
    )
# an input set by the user no longer follows the GPU or the typical length: say so, with a way back
show_set(
    [PREFIX + name for name in FOLLOWING],
    lambda key: t(FOLLOWING[key.removeprefix(PREFIX)]),
    lambda key, value: "—" if value is None else (f"${value:,.2f}" if key == "plan_price" else f"{value:,}"),
)

try:
    req = Requirement(
        load=kind,
        users=users if kind == "users" else 1,
        think_time_s=think if kind == "users" else 0.0,
        in_flight=in_flight if kind == "in_flight" else 1,
        rate_per_s=rate if kind == "rate" else 1.0,
        prompt_len=prompt,
        answer_len=answer,
        prompt_len_p95=prompt_p95,
        answer_len_p95=answer_p95,
        ttft_slo_s=ttft_ms * units.MS if ttft_ms > 0 else None,
        tpot_slo_s=1 / user_rate if user_rate > 0 else None,
        replicas=replicas,
        shared_prefix_len=shared_prefix,
    )
except ValueError as err:
    st.error(t("error.impossible", error=escape_markdown(str(err))))
    st.stop()
if price > 0:
    dep = dataclasses.replace(dep, gpu=dataclasses.replace(dep.gpu, price_per_hour=price))
if max_model_len_is_auto():  # the same rule as check: sized to the P95 request
    dep = dep.with_engine(max_model_len=sized_max_model_len(req.longest_request, dep.model.max_context))
    st.caption(t("plan.max_model_len_sized", tokens=f"{dep.max_model_len:,}", request=f"{req.longest_request:,}"))

bundle = plan_bundle(dep, req)
plan = bundle.plan
status = {"feasible": "ok", "marginal": "marginal", "not_feasible": "failed"}[plan.verdict]
show_answer(answer_box, plan_answer(plan, bundle.fixes, lang(), current_rate()), status, "plan_answer")
with answer_box:
    applied_note(plan)
st.markdown(t("plan.in_flight_line", in_flight=f"{plan.in_flight:,.1f}", worst=plan.worst_case_in_flight))
st.caption(t("plan.in_flight_explain"))
if queue := queue_sentence(plan, lang()):  # the engine is full: the wait for a slot, or no steady state
    (st.error if plan.unbounded else st.warning)(queue)
st.markdown(f"**{operating_point(plan, lang())}**")

explain_plan(plan)

checks_table(plan)

if plan.verdict != "feasible":
    st.subheader(t("plan.fixes_title"))
    if bundle.fixes:
        # the quality caveat next to the fix (it was off-screen at 1440 px); under the table any fix
        # shows its before and after, and applies it (ui/apply_fix.py)
        st.dataframe(
            pd.DataFrame(
                {
                    t("plan.fix"): [notice_text(f.lever) for f in bundle.fixes],
                    t("plan.status"): [
                        t(f"status.{'ok' if f.plan.verdict == 'feasible' else 'marginal'}") for f in bundle.fixes
                    ],
                    t("prices.per_hour_header"): [
                        gpu_price_cell(f.plan.deployment.gpu.id, f.cost_per_hour, f.num_gpus) for f in bundle.fixes
                    ],
                    "⚠": [notice_text(f.caveat) if f.caveat else "" for f in bundle.fixes],
                    t("plan.gpu_count"): [f.num_gpus for f in bundle.fixes],
                    t("plan.fix_group"): [t(f"plan.fix_group_{f.group}").rstrip(":：") for f in bundle.fixes],
                    "": [headroom_line(f.plan.binding, lang()) for f in bundle.fixes],
                }
            ),
            hide_index=True,
            width="stretch",
            key="plan_fixes",
        )
        fix_chooser(plan, bundle.fixes)
        if any(f.cost_per_hour is None for f in bundle.fixes):
            st.caption(t("plan.price_missing_caption"))
    else:
        st.info(t("plan.no_fixes"))

st.subheader(t("plan.solvers"))
cols = st.columns(3)
cols[0].metric(t("plan.max_users"), fmt.count(bundle.max_load) if bundle.max_load > 0 else t("plan.none"))
cols[1].metric(t("plan.max_prompt"), fmt.count(bundle.max_prompt) if bundle.max_prompt > 0 else t("plan.none"))
sizing = bundle.min_gpus
cols[2].metric(
    t("plan.min_gpus"),
    t("plan.min_gpus_value", gpus=sizing.num_gpus, replicas=sizing.replicas, tp=sizing.tp)
    if sizing
    else t("plan.none"),
)
if bundle.gpu_options:
    st.markdown(f"**{t('plan.cheapest')}**")
    st.dataframe(
        pd.DataFrame(
            {
                "GPU": [o.gpu_name for o in bundle.gpu_options],
                t("plan.gpu_count"): [o.sizing.num_gpus for o in bundle.gpu_options],
                t("plan.layout"): [f"{o.sizing.replicas} × tp {o.sizing.tp}" for o in bundle.gpu_options],
                t("prices.per_hour_header"): [
                    gpu_price_cell(o.gpu_id, o.cost_per_hour, o.sizing.num_gpus) for o in bundle.gpu_options
                ],
                t("plan.status"): [
                    t(f"status.{'ok' if o.sizing.plan.verdict == 'feasible' else 'marginal'}")
                    for o in bundle.gpu_options
                ],
            }
        ),
        hide_index=True,
        width="stretch",
        key="plan_gpus",
    )
    st.caption(t("plan.cheapest_caption"))

money = cost(plan, price) if price > 0 else None
if money is not None:
    st.subheader(t("plan.cost"))
    cols = st.columns(3)
    cols[0].metric(t("prices.cost_hour"), shown(money.per_hour, hourly=False))  # CNY first in Chinese (ui.money)
    cols[1].metric(t("prices.cost_million"), shown(money.per_million_output_tokens, hourly=False, digits=3))
    cols[2].metric(t("prices.cost_user_month"), shown(money.per_user_month or None, hourly=False))
    if not money.achievable:
        st.warning(t("plan.cost_not_achievable_short", share=f"{money.delivered_share:.0%}"))
energy = plan_energy_line(plan.estimate)  # power, J per token, the electricity bill (ui/energy.py)

searched = best_deployment_section(dep, req, energy)  # each point's energy at the page's price and PUE

st.subheader(t("plan.command"))
command = serve_command(plan)
st.code(command.command, language="bash")
if command.needs_quantized_checkpoint:
    st.caption(t("plan.quantized_checkpoint", format=dep.weights.label))
st.markdown(t("plan.expected_log"))
st.code("\n".join(command.expected_log), language="text")
deploy_spec = deploy_downloads(plan, dep, req, searched)  # the plan's files as a zip (ui/deploy_download.py)
bench_doc = benchmark_section(plan)  # the benchmark that checks the plan, its result read back (ui/benchcheck.py)

solvers = solvers_to_dict(
    bundle.max_load,
    bundle.max_prompt,
    bundle.min_gpus,
    bundle.gpu_options,
    {o.gpu_id: o.gpu_name for o in bundle.gpu_options},
)
data = plan_to_dict(
    plan,
    bundle.fixes,
    command,
    money,
    lang(),
    solvers=solvers,
    link=view_link(),
    search=searched,
    energy=energy,
    rate=current_rate(),
)
data = with_price(data, plan_price(dep.gpu), current_rate())  # the price and its source in every file
# each report is built when its button is clicked (Streamlit calls a data callable then, outside the script thread)
language = lang()


def extras() -> list:
    """The sections beyond the page's (core.report.blocks), built when a report's button is clicked:
    the deployment files, then the benchmark that checks them."""
    files = deploy_section(deploy_spec, language) if deploy_spec else None
    return [s for s in (files, bench_doc) if s]


reports = {
    "md": ("plan.download_md", lambda: markdown_report(data, plan, bundle.fixes, language, extras()), "text/markdown"),
    "html": ("plan.download_html", lambda: html_report(data, plan, bundle.fixes, language, extras()), "text/html"),
    "json": (
        "plan.download_json",
        lambda: json.dumps(data | {"sections": to_data(extras())}, indent=2, ensure_ascii=False),
        "application/json",
    ),
    "csv": ("plan.download_csv", lambda: csv_report(data), "text/csv"),
}
for col, (ext, (label, build, mime)) in zip(st.columns(len(reports)), reports.items(), strict=True):
    download_button(col, t(label), build, file_name=f"llm-plan.{ext}", mime=mime, key=f"download_{ext}")
