"""Plan in a real browser (issue 28, item 11; audit D6, D11): the check bars as drawn (the 100 % mark
inside every track, failing rows red, each bar as long as its percentage), in English and Chinese;
the deployment search filtered to chosen GPUs, and a click on a front point that loads it while the
front it was picked from stays drawn with the point circled.

Reuses tests/test_browser.py's server and browser (outside CI the tests skip without Chromium; in CI
a missing browser fails). Nothing leaves loopback.
"""

from __future__ import annotations

import pytest

from core.messages import message
from core.planning.report_formats import BAR_SCALE, STATUS_COLORS
from tests.test_browser import ARTIFACTS, WAIT_MS, browser, open_page, server, settled  # noqa: F401 (fixtures)

BARS_JS = """
(table) => [...table.querySelectorAll('tr')].map((row) => {
  const cells = row.querySelectorAll('td');
  const track = cells[2].firstElementChild;
  const [fill, mark] = track.children;
  const box = (el) => {
    const r = el.getBoundingClientRect(); return {x0: r.left, x1: r.right, y0: r.top, y1: r.bottom};
  };
  return {
    name: cells[0].textContent, status: cells[1].textContent, text: cells[3].textContent,
    colour: getComputedStyle(cells[1].firstElementChild).color, fillColour: getComputedStyle(fill).backgroundColor,
    track: box(track), fill: box(fill), mark: box(mark), markBorder: getComputedStyle(mark).borderLeftWidth,
    over: cells[2].textContent.includes('▶'),
  };
})
"""

TRACES_JS = """
(plot) => plot.data ? plot.data.map((t) => ({name: t.name, x: Array.from(t.x), y: Array.from(t.y),
                                             text: Array.from(t.text)})) : null
"""


def traces(plot, ready=lambda found: True) -> list[dict]:
    """The plotted traces, once Plotly has drawn them and ``ready`` holds: st.plotly_chart remounts a
    chart whose spec changed, so right after a rerun the node found may not carry its data yet, or
    still show the previous rerun's figure, and for a moment the old node and the new one are both
    on the page (all three seen under load in the full CI run): the newest node that is ready."""
    import time

    deadline = time.monotonic() + WAIT_MS / 1000
    while True:
        drawn = [found for found in plot.evaluate_all(f"(plots) => plots.map({TRACES_JS.strip()})") if found]
        ready_now = [found for found in drawn if ready(found)]
        if ready_now:
            return ready_now[-1]
        assert time.monotonic() < deadline, f"the chart was never drawn as expected: {drawn!r:.300}"
        time.sleep(0.1)


FILTERED = ("NVIDIA A10 ", "NVIDIA L4 ", "NVIDIA H100 ")


def _filtered(found: list[dict]) -> bool:
    """The front of the three GPUs chosen: an H100 on it, nothing else than the three."""
    labels = [label for trace in found for label in trace["text"]]
    return any(label.startswith("NVIDIA H100") for label in labels) and all(
        label.startswith(FILTERED) for label in labels
    )


POINTS_JS = """
(plot) => [...plot.querySelectorAll('.scatterlayer .trace')].map((trace) =>
  [...trace.querySelectorAll('path.point')].map((p) => {
    const r = p.getBoundingClientRect(); return {x: (r.left + r.right) / 2, y: (r.top + r.bottom) / 2, w: r.width};
  }))
"""


def _rgb(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_check_bars_show_the_limit_and_the_failing_rows(open_page, lang):  # noqa: F811
    """The default Plan (one A10, 50 chat users) fails: every track carries a visible 100 % mark at
    two thirds of its width, a failing row's status and bar are red and an ok row's green, each bar
    is its rounded percentage over the 150 % track long, and one past the track is full with ▶."""
    from playwright.sync_api import expect

    page = open_page("plan" + ("?lang=zh" if lang == "zh" else ""), height=2400)
    table = page.get_by_test_id("stHtml").locator("table").filter(has_text=message("check.kv_cache", lang))
    expect(table).to_be_visible()
    settled(page)
    rows = table.evaluate(BARS_JS)
    statuses = {message(f"status.{s}", lang): s for s in STATUS_COLORS}
    assert {statuses[r["status"]] for r in rows} >= {"ok", "failed"}
    for r in rows:
        status = statuses[r["status"]]
        assert r["colour"] == r["fillColour"] == _rgb(STATUS_COLORS[status]), r
        track, fill, mark = r["track"], r["fill"], r["mark"]
        width = track["x1"] - track["x0"]
        assert width > 100 and r["markBorder"] == "2px"
        assert mark["x0"] - track["x0"] == pytest.approx(width / BAR_SCALE, abs=1.5)  # the 100 % mark, inside
        assert mark["y0"] < track["y0"] and mark["y1"] > track["y1"]  # standing out of the track
        percent = int(r["text"].split("%")[0].split()[-1])
        share = (fill["x1"] - fill["x0"]) / width
        if percent > 150:
            assert r["over"] and share == pytest.approx(1, abs=0.01)
        else:
            assert not r["over"] and share == pytest.approx(percent / 100 / BAR_SCALE, abs=0.015)
        if status == "failed":
            assert fill["x1"] > mark["x0"]  # a failing bar crosses the mark
    ARTIFACTS.mkdir(exist_ok=True)
    table.screenshot(path=str(ARTIFACTS / f"plan-checks-{lang}.png"))


def test_a_clicked_front_point_loads_and_the_front_stays(open_page):  # noqa: F811
    """Search only A10, L4 and H100 (the filter, chosen in the browser), click an H100 point on the
    cost front: the sidebar shows the H100, and the cost front is still the one clicked, point for
    point, with the loaded point circled where it was."""
    from playwright.sync_api import expect

    page = open_page("plan", height=3200)
    expect(page.get_by_test_id("stHtml").locator("table").filter(has_text="KV cache")).to_be_visible()
    page.get_by_text(message("search.run", "en")).click()
    settled(page)
    for name in ("NVIDIA A10", "NVIDIA L4", "NVIDIA H100 SXM5 80GB"):
        page.get_by_test_id("stMultiSelect").click()
        page.keyboard.type(name)  # the list is long: filter it
        page.get_by_role("option", name=name, exact=True).click()
        page.keyboard.press("Escape")
        settled(page)
    cost = page.locator(".js-plotly-plot").filter(has=page.locator(".g-xtitle", has_text="USD per 1M output tokens"))
    expect(cost).to_have_count(1)
    expect(cost.locator(".scatterlayer path.point").first).to_be_visible()  # plotted
    before = traces(cost, _filtered)  # the last filter's rerun drawn (its settled state can come first)
    labels = [label for trace in before for label in trace["text"]]
    assert labels and all(label.startswith(FILTERED) for label in labels)
    trace, index = next(
        (k, i) for k, t in enumerate(before) for i, label in enumerate(t["text"]) if label.startswith("NVIDIA H100")
    )
    expect(cost).to_have_count(1)  # a remount's old node gone
    cost.scroll_into_view_if_needed()
    point = cost.evaluate(POINTS_JS)[trace][index]
    page.mouse.click(point["x"], point["y"])
    expect(page.get_by_text("The sidebar now shows the circled point")).to_be_visible()
    settled(page)
    expect(page.get_by_role("combobox", name="GPU", exact=True)).to_have_value("NVIDIA H100 SXM5 80GB")
    expect(page.get_by_test_id("stException")).to_have_count(0)
    after = traces(cost)
    assert after[: len(before)] == before  # the front clicked, point for point
    circled = after[-1]
    assert circled["name"] == message("search.chosen", "en")
    assert (circled["x"], circled["y"]) == ([before[trace]["x"][index]], [before[trace]["y"][index]])
    expect(cost).to_have_count(1)
    drawn = cost.evaluate(POINTS_JS)
    ring, dot = drawn[-1][0], drawn[trace][index]
    assert ring["w"] > dot["w"] and abs(ring["x"] - dot["x"]) < 2 and abs(ring["y"] - dot["y"]) < 2
    ARTIFACTS.mkdir(exist_ok=True)
    cost.screenshot(path=str(ARTIFACTS / "plan-front-clicked-en.png"))
