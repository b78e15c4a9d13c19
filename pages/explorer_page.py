"""Explorer: does it fit, how many requests at once, how fast, and the tradeoff between them."""

from __future__ import annotations

import functools

import numpy as np
import streamlit as st

from core.estimate.advice import fit_suggestions
from core.estimate.answer import estimate_answer
from core.estimate.explain import explain
from core.estimate.export import FILE_STEM, MIME_TYPES, RENDERERS, export_document
from core.estimate.result import estimate
from core.estimate.sweep import Sweep
from core.estimate.tradeoff import tradeoff_scores
from core.memory.accounting import measured_margin
from core.spec import units
from core.validation.sensitivity import sensitivity
from ui import charts, fmt, sim_charts, speed_charts
from ui.answer import show_answer
from ui.cache import batch_sweep, concurrency_by_length, sweep_lengths
from ui.concurrency_note import render_concurrency_line
from ui.download import download_button
from ui.energy import render_energy
from ui.explain import explain_memory_popover, explain_popover
from ui.figure import chart
from ui.i18n import lang, notice_text, t
from ui.levers_panel import render_optimizations
from ui.likely_range import render_likely_range
from ui.money import current_rate
from ui.share import view_link
from ui.sidebar import require_scenario

st.title(t("explorer.title"))
st.caption(t("explorer.subtitle"))

scenario = require_scenario()
dep, work = scenario.deployment, scenario.workload
result = estimate(dep, work)
mem, kv, lat, tput = result.memory, result.kv, result.latency, result.throughput
suggestions = [] if result.fits and result.engine_starts else fit_suggestions(dep, work, result)
show_answer(  # the answer first: verdict, what binds, the cheapest fix and its price, the figures to quote
    st.container(),
    estimate_answer(result, suggestions, lang(), current_rate()),
    "ok" if result.fits and result.engine_starts else "failed",
    "explorer_answer",
)
st.caption(t("explorer.engine", release=dep.engine.release.name))
st.caption(t(f"memory_release.{mem.sizing}", floor=f"{measured_margin(0.0, dep.gpu.vendor) / units.GiB:g}"))

burst = result.burst  # V1 admission stepped on the burst: median, P99 and last TTFT (core/estimate/burst.py)
explained = functools.cache(lambda: explain(result))  # built when a popover opens
headlines = (  # label, the number as shown, its tooltip, its explanation (one click away)
    (t("metric.fits"), t("metric.yes") if result.fits else t("metric.no"), t("metric.fits_help"), "fits"),
    (
        t("metric.max_concurrency"),
        fmt.count(kv.max_concurrency_at_request_len),
        t("metric.max_concurrency_help", tokens=work.request_len),
        "max_concurrency",
    ),
    (
        t("metric.ttft_burst"),
        fmt.duration(burst.median_s),
        t(
            "metric.ttft_burst_help",
            batch=work.batch,
            median=fmt.duration(burst.median_s),
            p99=fmt.duration(burst.p99_s),
            last=fmt.duration(burst.last_s),
            source=t(f"metric.ttft_source_{burst.source}"),
        ),
        "ttft_burst",
    ),
    ("TPOT", fmt.duration(lat.tpot_s), t("metric.tpot_help"), "tpot"),
    (t("metric.throughput"), fmt.rate(tput.output_tokens_per_s), t("metric.throughput_help"), "throughput"),
    (t("metric.decode_bound"), t(f"bound.{result.bound_decode}"), t("metric.bound_help"), "bound"),
)
# three to a row: six in one row cut "Max concurrent requests" and "1,873 tok/s" at 1440 px
cells = [col for _ in range(0, len(headlines), 3) for col in st.columns(3)]
for col, (label, shown, help_text, key) in zip(cells, headlines, strict=True):
    col.metric(label, shown, help=help_text)
    explain_popover(explained, key, shown, col)
render_concurrency_line(result)  # beside the headline: V1's figure and the one vLLM logs (ui/concurrency_note.py)

loop = result.closed_loop
if loop.stable:
    st.caption(
        t(
            "explorer.closed_loop",
            clients=loop.clients,
            running=loop.running,
            ttft=fmt.duration(loop.ttft_s),
            tpot=fmt.duration(loop.tpot_s),
            rate=fmt.rate(loop.output_tokens_per_s),
        )
    )
render_likely_range(result)
energy = render_energy(result)  # board power, J per token, the electricity bill (ui/energy.py)

for item in result.warnings:
    st.warning(notice_text(item))

chart(st, charts.memory_figure(result), key="memory_chart")
explain_memory_popover(explained)
if mem.host_weights or mem.host_kv:
    st.caption(t("memory.host", weights=fmt.gib(mem.host_weights), kv=fmt.gib(mem.host_kv)))
if not (result.fits and result.engine_starts):
    if suggestions:
        st.markdown(f"**{t('advice.title')}**")
        st.markdown(
            "\n".join(
                f"- {notice_text(s.notice)}: "
                + t(
                    "advice.result",
                    concurrency=fmt.count(s.result.kv.max_concurrency_at_request_len),
                    tpot=fmt.duration(s.result.latency.tpot_s),
                    rate=fmt.rate(s.result.throughput.output_tokens_per_s),
                )
                for s in suggestions
            )
        )
    else:
        st.info(t("advice.none"))

render_optimizations(dep, work)


def speed_grid() -> tuple[Sweep, int]:
    """The batch sweep across prompt lengths around this one, and the row of this prompt length."""
    grid = batch_sweep(dep, sweep_lengths(work.input_len, dep.max_model_len - work.output_len), work.output_len)
    return grid, int(np.flatnonzero(grid.input_lens == work.input_len)[0])


# Below the memory chart, one view at a time: a tab's charts are computed and drawn only while it is
# open, so a slider step redraws the memory chart and one view, not every chart on the page
# (docs/benchmarks.md, "Browser latency", records what this bought).
VIEWS = ("triangle", "concurrency", "tradeoff", "sensitivity")
tabs = st.tabs([t(f"explorer.view_{view}") for view in VIEWS], key="explorer_view", on_change="rerun")
view = dict(zip(VIEWS, tabs, strict=True))

with view["triangle"]:
    if view["triangle"].open:
        grid, row = speed_grid()
        left, right = st.columns(2)
        chart(
            left,
            speed_charts.throughput_tpot_figure(grid, row, work.batch, int(grid.max_concurrency[row])),
            key="throughput_tpot",
        )
        chart(right, speed_charts.ttft_figure(grid, work.batch, work.input_len), key="ttft")

with view["concurrency"]:
    if view["concurrency"].open:
        left, right = st.columns(2)
        chart(left, charts.concurrency_bars(result), key="concurrency_bars")
        lengths, counts = concurrency_by_length(dep)
        chart(
            right,
            charts.concurrency_curve(lengths, counts, work.request_len, kv.max_concurrency_at_request_len),
            key="concurrency_curve",
        )
        st.caption(
            t(
                "concurrency.caption",
                per_token=fmt.count(kv.bytes_per_token),
                budget=fmt.gib(mem.kv_budget),
                tokens=fmt.count(kv.capacity_tokens),
            )
        )
        if dep.model.is_hybrid:  # the linear layers' state: per request, whatever its length
            st.caption(t("concurrency.state_caption", state=fmt.count(kv.state_bytes_per_request), block=kv.block_size))

with view["tradeoff"]:
    if view["tradeoff"].open:
        grid, row = speed_grid()
        scores = tradeoff_scores(result, grid, row)
        left, right = st.columns([1, 2])
        chart(left, charts.tradeoff_figure(vars(scores)), key="tradeoff")
        right.markdown(
            t(
                "tradeoff.explain",
                memory=f"{scores.memory:.0%}",
                latency=f"{scores.latency:.0%}",
                throughput=f"{scores.throughput:.0%}",
            )
        )
        right.page_link("pages/learn_page.py", label=t("explorer.how_computed"), icon=":material/school:")

with view["sensitivity"]:
    if view["sensitivity"].open:
        labels = {
            "tpot": "TPOT",
            "ttft": "TTFT",
            "throughput": t("metric.throughput"),
            "max_concurrency": t("metric.max_concurrency"),
        }
        chosen = st.selectbox(t("sens.metric"), list(labels), format_func=labels.get, key="sens_metric")
        chart(
            st,
            sim_charts.sensitivity_figure(sensitivity(dep, work, chosen), labels[chosen]),
            key="sensitivity",
        )
        st.caption(t("sens.explain"))

st.subheader(t("export.heading"))
st.caption(t("export.caption"))
# each file is built only when its button is clicked (Streamlit calls a data callable then, outside
# the script thread, so the link and the language are read here)
link, lang_code = view_link(), lang()
rate = current_rate()  # the sidebar's USD -> CNY rate: the Chinese files show CNY at it
document = functools.cache(lambda: export_document(result, link, lang_code, suggestions, rate=rate, energy=energy))
labels = {
    "md": t("export.download_md"),
    "html": t("export.download_html"),
    "json": t("export.download_json"),
    "csv": t("export.download_csv"),
}
for col, ext in zip(st.columns(len(RENDERERS)), RENDERERS, strict=True):
    download_button(
        col,
        labels[ext],
        functools.partial(lambda ext: RENDERERS[ext](document()), ext),
        file_name=f"{FILE_STEM}.{ext}",
        mime=MIME_TYPES[ext],
        key=f"explorer_download_{ext}",
    )
