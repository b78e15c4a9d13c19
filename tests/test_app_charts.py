"""Charts people can read: log axes ticked 1, 2, 5, 10, ..., the tradeoff radar's labels inside the
figure, and the Compare memory chart naming the scenario that does not fit."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.messages import message
from tests.app_helpers import figures, open_app
from ui.charts import log_axis


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
    axes = [(f["layout"]["title"]["text"], name, axis) for f in seen for name, axis in log_axes(f)]
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
