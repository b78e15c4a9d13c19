"""Plan's "Best deployment" section: the search over GPUs, layouts, formats and serving modes for
the page's load (:mod:`core.planning.search`) within the user's filters (:mod:`ui.search_filters`),
its two Pareto fronts, and loading a point into the sidebar (GPU, tp, formats, replicas,
max_num_batched_tokens; data-parallel attention has no sidebar input, which a caption says).

A loaded point changes the sidebar's setup, which the search starts from; the front it was picked
from stays drawn, the point marked, until the user asks for a new search or changes the load, the
SLOs, the filters or the sidebar again (:func:`ui.search_filters.pinned`)."""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict

import pandas as pd
import streamlit as st

from core.energy.power import EnergyInputs
from core.planning.pareto import OBJECTIVES, SIGNIFICANT, search_to_dict
from core.planning.requirement import Requirement
from core.planning.search import MODES, Candidates, SearchSpace, search
from core.spec.catalog import load_catalog
from core.spec.deployment import Deployment
from ui.engine_inputs import AUTO, BATCH_TOKENS
from ui.figure import Figure, chart
from ui.i18n import t
from ui.money import gpu_price_cell
from ui.search_filters import FRONT, PIN, filters, pinned, unpin

COLORS = {"aggregated": "#2563eb", "disaggregated": "#d97706"}


SEARCHES = 16
"""Searches kept per server process, the most recently used."""
_searched: OrderedDict[tuple[Deployment, Requirement, SearchSpace], Candidates] = OrderedDict()
_searched_lock = threading.Lock()


def _search(
    dep: Deployment, req: Requirement, space: SearchSpace, progress, objective: str, energy: EnergyInputs | None
) -> dict:
    """The search's front as a dict for ``objective`` at ``energy``'s electricity price; the candidates
    are kept per process, so choosing another objective or price re-ranks them without searching again.
    Not ``st.cache_data``: a cached function replays the elements it drew, and the progress bar it moves
    lives outside it, so every later session that met the cached search got Streamlit's
    CacheReplayClosureError instead of the result (tests/test_search.py runs it twice)."""
    key = (dep, req, space)
    with _searched_lock:
        found = _searched.get(key)
        if found is not None:
            _searched.move_to_end(key)
    if found is None:
        found = search(load_catalog(), dep, req, space, progress=progress)
        with _searched_lock:
            _searched[key] = found
            while len(_searched) > SEARCHES:
                _searched.popitem(last=False)
    return search_to_dict(found, space.modes, objective, energy)  # a new dict: each session its own


def _layout(p: dict) -> str:
    if p["mode"] == "disaggregated":
        return t("search.layout_disaggregated", prefill=p["prefill_instances"], decode=p["decode_instances"])
    return t("search.layout_aggregated", replicas=p["replicas"])


def _split(p: dict) -> str:
    """tp and pp, and dp with ep where the point runs data-parallel attention."""
    dp = p.get("dp", 1)
    return f"tp {p['tp']} pp {p['pp']}" + (f" dp {dp} ep {p['ep']}" if dp > 1 else "")


def _batched_tokens(p: dict) -> str:
    """max_num_batched_tokens in effect, marked when it is the engine's own."""
    tokens = p.get("max_num_batched_tokens")
    if tokens is None:
        return "-"
    return f"{tokens:,} ({AUTO})" if p.get("batched_tokens_default", True) else f"{tokens:,}"


def _label(p: dict, gpus: dict[str, str]) -> str:
    layout = f"{_split(p)} · {_layout(p)}"
    tokens = f"{p['max_num_batched_tokens']:,}" if not p.get("batched_tokens_default", True) else ""
    chunk = f" · {t('search.batched', tokens=tokens)}" if tokens else ""
    return f"{gpus[p['gpu']]} × {p['num_gpus']} · {layout} · {p['weight_dtype']}/{p['kv_dtype']}{chunk}"


HOVER = {"cost_per_million_output_tokens": "search.hover_cost", "tokens_per_s_per_user": "search.hover_speed"}
"""Each front's hover line: its axes with units, to the figures the front tells points apart by."""
CHOSEN = {"symbol": "circle-open", "size": 22, "color": "#111827", "line": {"width": 3}}


def _front_figure(
    points: list[dict], x: str, y: str, gpus: dict[str, str], x_title: str, y_title: str, chosen: dict | None = None
):
    """One front, a trace per serving mode; ``chosen`` (the point loaded into the sidebar) circled."""
    digits = f".{SIGNIFICANT}g"
    hover = "%{text}<br>" + t(HOVER[x], x=f"%{{x:{digits}}}", y=f"%{{y:{digits}}}") + "<extra></extra>"
    figure = Figure()
    for mode in MODES:
        picked = [(i, p) for i, p in enumerate(points) if p["mode"] == mode]
        if not picked:
            continue
        figure.add_scatter(
            x=[p[x] for _, p in picked],
            y=[p[y] for _, p in picked],
            customdata=[i for i, _ in picked],
            text=[_label(p, gpus) for _, p in picked],
            mode="lines+markers",
            name=t(f"search.mode_{mode}"),
            marker={"color": COLORS[mode], "size": 9},
            line={"color": COLORS[mode], "width": 1, "dash": "dot"},
            hovertemplate=hover,
        )
    if chosen is not None and chosen in points:
        figure.add_scatter(
            x=[chosen[x]],
            y=[chosen[y]],
            customdata=[points.index(chosen)],
            text=[_label(chosen, gpus)],
            mode="markers",
            name=t("search.chosen"),
            marker=CHOSEN,
            hovertemplate=hover,
        )
    figure.update_layout(
        xaxis_title=x_title,
        yaxis_title=y_title,
        margin={"l": 60, "r": 20, "t": 30, "b": 50},
        height=360,
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom"},  # rows grow upwards, off the points
    )
    return figure.build()


AXES = {"cost": ("axis_cost", "axis_tpot"), "throughput": ("axis_user", "axis_gpu")}


def _front_chart(
    points: list[dict], key: str, front: str, fields: tuple[str, str], gpus: dict[str, str], chosen: dict | None
) -> None:
    """One front's heading and chart; a click on a point loads it (:func:`_load_point`)."""
    x_title, y_title = (t(f"search.{a}") for a in AXES[front])
    st.markdown(f"**{t(f'search.front_{front}')}**")
    chart(
        st,
        _front_figure(points, *fields, gpus, x_title, y_title, chosen),
        key=key,
        on_select=lambda: _load_point(key, points),
        selection_mode="points",
    )


def _load_point(chart_key: str, points: list[dict]) -> None:
    """Callback: the chosen front point becomes the sidebar's GPU, tp, dp, formats, replicas and its
    max_num_batched_tokens where the sidebar offers it (the engine's own: auto); the search it was
    picked from (``FRONT``) stays drawn with it (``PIN``)."""
    selection = st.session_state.get(chart_key)
    chosen = selection.selection.points if selection else []
    if not chosen:
        return
    p = points[int(chosen[0]["customdata"])]
    st.session_state["gpu"] = p["gpu"]
    st.session_state["tp"] = p["tp"]
    st.session_state["dp"] = p.get("dp", 1)
    st.session_state["weights"] = p["weight_dtype"]
    st.session_state["kv"] = "fp8" if p["kv_dtype"] == "fp8" else AUTO
    st.session_state["plan_replicas"] = p["replicas"]
    if p.get("batched_tokens_default", False):
        st.session_state["mnbt"] = AUTO
    elif p.get("max_num_batched_tokens") in BATCH_TOKENS:
        st.session_state["mnbt"] = p["max_num_batched_tokens"]
    st.session_state["search_loaded"] = p
    if (shown := st.session_state.get(FRONT)) is not None:
        st.session_state[PIN] = {**shown, "point": p, "dep": None}


def best_deployment_section(dep: Deployment, req: Requirement, energy: EnergyInputs | None = None) -> dict | None:
    """The section; returns the search's JSON (:func:`core.planning.pareto.search_to_dict`) when it
    ran, for the page's reports. ``energy``: the page's electricity price and PUE (each point's bill)."""
    st.subheader(t("search.title"))
    st.caption(t("search.caption"))
    gpus = {g.id: g.name for g in load_catalog().gpus}
    if loaded := st.session_state.pop("search_loaded", None):
        st.success(t("search.loaded", deployment=_label(loaded, gpus)))
    if not st.toggle(t("search.run"), key="search_on"):
        unpin()
        return None
    space = filters(gpus)
    objective = (
        st.segmented_control(
            t("search.objective"),
            OBJECTIVES,
            default=OBJECTIVES[0],
            format_func=lambda o: t(f"search.objective_{o.replace('-', '_')}"),
            key="search_objective",
            help=t("search.objective_help"),
        )
        or OBJECTIVES[0]
    )
    req = dataclasses.replace(req, replicas=1)  # the search counts replicas itself
    if pin := pinned(dep, req, space):
        data, chosen = pin["data"], pin["point"]
        st.info(t("search.kept", deployment=_label(chosen, gpus)))
        st.button(t("search.again"), key="search_again", on_click=unpin)
    else:
        bar = st.progress(0.0, text=t("search.progress"))
        moved = lambda share: bar.progress(share, text=t("search.progress"))  # noqa: E731
        data, chosen = _search(dep, req, space, moved, objective, energy), None
        bar.progress(1.0, text=t("search.done", candidates=f"{data['candidates_evaluated']:,}"))
    st.session_state[FRONT] = {"req": req, "space": space, "data": data}
    st.markdown(
        t(
            "search.summary",
            candidates=f"{data['candidates_evaluated']:,}",
            shapes=f"{data['shapes_evaluated']:,}",
            modes=", ".join(t(f"search.mode_{m}") for m in data["modes_evaluated"]),
            meeting=f"{data['meeting_slo']:,}",
        )
    )
    if (best := data["best"]) is None:
        st.warning(t("search.none_meets"))
    else:
        price = gpu_price_cell(best["gpu"], best["cost_per_hour"], best["num_gpus"])  # with its source (ui.money)
        by_energy = data.get("objective") == "tokens-per-joule"
        per_joule = "—" if best["tokens_per_joule"] is None else f"{best['tokens_per_joule']:,.3g}"
        st.success(
            t(
                "search.best_line_energy" if by_energy else "search.best_line",
                deployment=_label(best, gpus),
                price=price,
                ttft=f"{best['ttft_ms']:,.0f}",
                tpot=f"{best['tpot_ms']:,.1f}",
                **({"per_joule": per_joule} if by_energy else {}),
            )
        )
        if best["weight_dtype"] != dep.model.native_dtype or best["kv_dtype"] == "fp8":
            st.caption(t("search.quantized_caveat_filter"))
    left, right = st.columns(2)
    cost_points, speed_points = data["pareto"], data["pareto_throughput"]
    with left:
        cost_axes = ("cost_per_million_output_tokens", "tpot_ms")
        _front_chart(cost_points, "search_cost_front", "cost", cost_axes, gpus, chosen)
    with right:
        speed_axes = ("tokens_per_s_per_user", "tokens_per_s_per_gpu")
        _front_chart(speed_points, "search_speed_front", "throughput", speed_axes, gpus, chosen)
    st.caption(t("search.pick_hint"))
    table = pd.DataFrame(
        {
            t("search.deployment"): [_label(p, gpus) for p in cost_points],
            "dp / ep": [f"{p['dp']} / {p['ep']}" for p in cost_points],
            "max_num_batched_tokens": [_batched_tokens(p) for p in cost_points],
            t("prices.per_hour_header"): [
                gpu_price_cell(p["gpu"], p["cost_per_hour"], p["num_gpus"]) for p in cost_points
            ],
            t("search.per_million"): [
                t("plan.no_catalog_price")
                if p["cost_per_million_output_tokens"] is None
                else f"${p['cost_per_million_output_tokens']:,.3f}"
                for p in cost_points
            ],
            "TTFT [ms]": [f"{p['ttft_ms']:,.0f}" for p in cost_points],
            "TPOT [ms]": [f"{p['tpot_ms']:,.1f}" for p in cost_points],
            t("search.tokens_per_joule"): [
                "—" if p["tokens_per_joule"] is None else f"{p['tokens_per_joule']:,.3g}" for p in cost_points
            ],
            t("search.meets"): [t("status.ok") if p["meets_slo"] else t("status.failed") for p in cost_points],
        }
    )
    st.dataframe(table, hide_index=True, width="stretch", key="search_table")
    return data
