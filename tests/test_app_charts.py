"""Charts people can read: log axes ticked 1, 2, 5, 10, ..., the tradeoff radar's labels inside the
figure, and the Compare memory chart naming the scenario that does not fit."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from core.estimate.result import estimate
from core.levers.settings import Offload
from core.messages import message
from core.spec import units
from core.spec.deployment import Workload
from tests.app_helpers import DEFAULT, DEFAULT_WORK, figures, open_app
from ui.chart_style import TITLE_COLUMNS, _columns, log_axis, wrap_title
from ui.charts import CATEGORY_COLUMNS, memory_parts


def log_axes(figure: dict) -> list[tuple[str, dict]]:
    layout = figure["layout"]
    return [(name, axis) for name, axis in layout.items() if isinstance(axis, dict) and axis.get("type") == "log"]


def readable(axis: dict) -> bool:
    """Ticks at 1, 2 and 5 times a power of ten (or powers of ten only), labelled with the number."""
    values = axis.get("tickvals")
    if not values or len(values) < 2:
        return False
    mantissas = {round(v / 10 ** math.floor(math.log10(v) + 1e-9), 6) for v in values}
    labels = [float(text.replace(",", "")) for text in axis["ticktext"]]
    return mantissas <= {1, 2, 5} and labels == pytest.approx(values)


def test_every_log_axis_the_pages_draw_is_ticked_1_2_5():
    seen = []
    at = open_app(spec="ngram")  # the speculation chart: TPOT against batch on a log axis
    seen += figures(at)
    at.session_state["explorer_view"] = "Concurrency ceiling"
    at.run()
    seen += figures(at)
    at.switch_page("pages/learn_page.py").run()
    seen += figures(at)
    at = open_app(lt_count="200")
    at.switch_page("pages/loadtest_page.py").run()
    at.button(key="lt_run_sweep").click().run()
    seen += figures(at)
    at.switch_page("pages/validation_page.py").run()
    seen += figures(at)
    axes = [(f["layout"]["title"]["text"].replace("<br>", " "), name, axis) for f in seen for name, axis in log_axes(f)]
    titles = {title for title, _, _ in axes}
    assert {"Predicted against measured", "Roofline of this GPU with the current operating points"} <= titles
    assert len(axes) >= 10
    unreadable = [(title, name, axis.get("ticktext")) for title, name, axis in axes if not readable(axis)]
    assert not unreadable


@pytest.mark.parametrize(
    ("values", "ticks"),
    [
        ([1, 1024], ["1", "2", "5", "10", "20", "50", "100", "200", "500", "1,000"]),
        ([0.06, 125], ["0.1", "0.2", "0.5", "1", "2", "5", "10", "20", "50", "100"]),
        ([0.1, 10_000], ["0.1", "1", "10", "100", "1,000", "10,000"]),  # over four decades: powers of ten
        ([256, 4096], ["500", "1,000", "2,000"]),
        # over five decades every other power of ten ("1,000" to "1,000,000" ran together on a phone)
        ([0.5, 3e6], ["1", "100", "10,000", "1,000,000"]),
    ],
)
def test_log_axis_ticks(values, ticks):
    assert log_axis("x", np.array(values))["ticktext"] == ticks


def test_a_log_axis_without_two_such_ticks_keeps_plotlys():
    assert log_axis("x", [3, 4]) == {"type": "log", "title": "x"}  # 3-4 holds no 1, 2 or 5
    assert log_axis("x", [0, -1, np.nan]) == {"type": "log", "title": "x"}


def test_the_tradeoff_radar_puts_memory_on_top_with_room_for_every_label():
    at = open_app()
    at.session_state["explorer_view"] = "Three-way tradeoff"
    at.run()
    radar = next(f for f in figures(at) if f["data"][0]["type"] == "scatterpolar")
    assert radar["data"][0]["theta"][0] == message("tradeoff.memory")
    assert radar["layout"]["polar"]["angularaxis"]["rotation"] == 90  # the first label centred on top
    margin = radar["layout"]["margin"]
    assert margin["l"] >= 80 and margin["r"] >= 80 and margin["t"] >= 80


def test_compare_memory_marks_the_scenario_that_does_not_fit():
    at = open_app()
    at.switch_page("pages/compare_page.py").run()
    at.button(key="save_scenario").click().run()
    at.number_input(key="batch").set_value(32).run()  # an A10 holds 11 such requests
    at.button(key="save_scenario").click().run()
    memory = next(f for f in figures(at) if f["layout"]["title"]["text"] == message("compare.memory_title"))
    xaxis = memory["layout"]["xaxis"]
    assert xaxis["type"] == "category"  # "#1", "#2" stay names, not the numbers 1, 2
    assert xaxis["ticktext"][0] == "#1" and "#2 ✗" in xaxis["ticktext"][1]
    [note] = memory["layout"]["annotations"]
    assert note["x"] == "#2" and note["text"] == message("compare.does_not_fit")
    names = [trace["name"] for trace in memory["data"]]
    assert message("memory.kv_over") in names and message("memory.engine_limit") in names


OVER_BUDGET = Workload(input_len=2048, output_len=512, batch=32)
"""32 requests of 2,560 tokens where the A10 holds 11 (the audit's memory chart)."""


def _starts(parts) -> dict[str, float]:
    """Where each part of the bar starts [bytes]."""
    starts, at = {}, 0.0
    for key, value in parts:
        starts[key] = at
        at += value
    return starts


def test_memory_parts_fill_the_gpu_and_what_does_not_fit_starts_at_capacity(deploy):
    """The audit's chart drew "held back" and "reserved" after the overflow, beyond the capacity."""
    m = estimate(deploy(**DEFAULT), OVER_BUDGET).memory
    parts = memory_parts(m)
    keys = [key for key, _ in parts]
    assert keys[-3:] == ["held_back", "reserved", "kv_over"]
    assert _starts(parts)["kv_over"] == pytest.approx(m.capacity)
    assert dict(parts)["kv_over"] == pytest.approx(m.kv_in_use - m.kv_budget)  # no host KV
    assert dict(parts)["kv_used"] == pytest.approx(m.kv_budget)
    limit = m.capacity - m.driver_reserved - m.held_back
    assert _starts(parts)["held_back"] == pytest.approx(limit)  # the engine's parts fill its limit


def test_memory_parts_of_a_batch_that_fits_add_up_to_the_capacity(deploy):
    m = estimate(deploy(**DEFAULT), DEFAULT_WORK).memory
    parts = memory_parts(m)
    assert "kv_over" not in dict(parts) and "over" not in dict(parts)
    assert sum(value for _, value in parts) == pytest.approx(m.capacity)
    assert dict(parts)["kv_free"] == pytest.approx(m.kv_budget - m.kv_in_use)


def test_weights_that_do_not_fit_are_over_the_gpus_memory_not_kv(deploy):
    m = estimate(deploy(model="llama-3.1-70b", gpu="a10", max_model_len=4096), DEFAULT_WORK).memory
    parts = memory_parts(m)
    limit = m.capacity - m.driver_reserved - m.held_back
    assert "kv_over" not in dict(parts) and _starts(parts)["over"] == pytest.approx(m.capacity)
    # everything the engine needs beyond its limit: weights, peak, overhead and the batch's KV
    assert dict(parts)["over"] == pytest.approx(m.weights + m.activations + m.overhead + m.kv_in_use - limit)
    assert sum(value for key, value in parts if key not in ("over", "kv_host")) == pytest.approx(m.capacity)


def test_kv_in_host_memory_comes_after_the_gpu(deploy):
    dep = deploy(**DEFAULT).with_levers(offload=Offload(kv_bytes=4 * units.GiB))
    m = estimate(dep, OVER_BUDGET).memory
    parts = memory_parts(m)
    assert [key for key, _ in parts][-2:] == ["kv_over", "kv_host"]
    assert dict(parts)["kv_host"] == pytest.approx(4 * units.GiB)
    assert dict(parts)["kv_over"] == pytest.approx(m.kv_in_use - m.kv_budget - 4 * units.GiB)
    assert _starts(parts)["kv_over"] == pytest.approx(m.capacity)


def test_the_memory_charts_labels_sit_above_the_bar_on_their_own_rows():
    at = open_app(batch="32")
    memory = next(f for f in figures(at) if f["layout"]["title"]["text"] == message("memory.title"))
    notes = {note["text"]: note for note in memory["layout"]["annotations"]}
    capacity, limit = notes[message("memory.capacity", value="22.5")], notes[message("memory.engine_limit")]
    for note in (capacity, limit):  # above the plot area: no bar can cover them
        assert note["yref"] == "paper" and note["y"] == 1 and note["yanchor"] == "bottom"
        # they end at their line (both are right of the middle), so the figure's edge cannot cut them
        assert note["xanchor"] == "right"
    assert capacity["yshift"] > limit["yshift"]
    names = [trace["name"] for trace in memory["data"]]
    assert names[-3:] == [message("memory.held_back"), message("memory.reserved"), message("memory.kv_over")]
    assert memory["layout"]["legend"]["yref"] == "container"  # below the axis title, not on it


def test_the_engines_kv_axis_is_ticked_0_to_100_by_20():
    at = open_app(lt_count="200")
    at.switch_page("pages/loadtest_page.py").run()
    series = next(f for f in figures(at) if f["layout"]["title"]["text"] == message("lt.series_title"))
    axis = series["layout"]["yaxis2"]
    assert (axis["tickmode"], axis["tick0"], axis["dtick"]) == ("linear", 0, 20) and axis["range"][1] <= 110
    assert axis["showgrid"] is False  # the left axis's grid only


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("Memory per GPU", ["Memory per GPU"]),
        (
            "TTFT against batch and prompt length (arriving together)",
            ["TTFT against batch and prompt length", "(arriving together)"],
        ),
        ("一步 decode 的耗时随 batch 的变化（按各项拆分）", ["一步 decode 的耗时随 batch 的变化（按各", "项拆分）"]),
    ],
)
def test_long_titles_wrap_between_words_or_cjk_characters(text, lines):
    assert wrap_title(text).split("<br>") == lines


def test_every_chart_title_fits_a_phone_and_leaves_the_mode_bar_its_row():
    """Plotly never wraps a title: one longer than a phone's chart ran off it, and the mode bar
    (always shown on a touch screen) sat on it."""
    seen = []
    for lang in ("en", "zh"):
        at = open_app(lang=lang, batch="32")
        for view in ("concurrency", "tradeoff", "sensitivity"):
            seen += figures(at)
            at.session_state["explorer_view"] = message(f"explorer.view_{view}", lang)
            at.run()
        seen += figures(at)
        at.switch_page("pages/learn_page.py").run()
        seen += figures(at)
    assert len(seen) >= 20
    for figure in seen:
        layout = figure["layout"]
        lines = layout["title"]["text"].split("<br>")
        assert all(sum(_columns(c) for c in line) <= TITLE_COLUMNS for line in lines), lines
        assert layout["title"]["yref"] == "container" and layout["title"]["pad"]["t"] >= 28
        assert layout["margin"]["t"] >= layout["title"]["pad"]["t"] + 24 * len(lines)
        assert "toimage" not in layout["modebar"]["remove"] and "zoom" in layout["modebar"]["remove"]


def test_the_ceilings_names_wrap_and_the_radar_has_no_labels_on_its_polygon():
    at = open_app()
    at.session_state["explorer_view"] = "Concurrency ceiling"
    at.run()
    bars = next(f for f in figures(at) if f["layout"]["title"]["text"] == message("concurrency.title"))
    names = bars["data"][0]["x"]
    assert [name.replace("<br>", " ") for name in names] == [
        message("concurrency.paged"),
        message("concurrency.vllm"),
        message("concurrency.contiguous"),
    ]
    assert all(sum(_columns(c) for c in line) <= CATEGORY_COLUMNS for name in names for line in name.split("<br>"))
    at.session_state["explorer_view"] = "Three-way tradeoff"
    at.run()
    radar = next(f for f in figures(at) if f["data"][0]["type"] == "scatterpolar")
    assert radar["layout"]["polar"]["radialaxis"]["showticklabels"] is False


def test_the_catalog_tables_put_the_columns_people_compare_first_and_link_their_sources():
    """The audit saw 10 of 75 models in a 3,930 px wide box, parameters and sources far to the right."""
    at = open_app()
    at.switch_page("pages/catalog_page.py").run()
    models, gpus = at.dataframe[0].proto, at.dataframe[1].proto
    assert list(models.column_order)[:4] == ["name", "params_total_b", "params_active_b", "attention"]
    assert list(gpus.column_order)[:3] == ["name", "memory_gib", "memory_bandwidth_gb_s"]
    for table in (models, gpus):
        assert "source_url" in list(table.column_order)[:8]
        assert json.loads(table.columns)["source_url"]["type_config"]["type"] == "link"
        assert len(table.column_order) == len(set(table.column_order))  # every column kept, once
