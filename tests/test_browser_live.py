"""Real browser: a slider step updates the Explorer's charts in place (ui/plotly_component), from local
assets only.

Skips without Chromium outside CI and fails in CI (the fixtures of tests/test_browser.py).
"""

from __future__ import annotations

import re

import pytest

from tests.test_browser import ROOT, WAIT_MS, browser, expected, metric, press, run_server, server  # noqa: F401
from ui import fmt

CHARTS = "[data-testid='stLivePlotlyChart']"
PLOTTED = re.compile(r"\bjs-plotly-plot\b")  # the class plotly.js gives a node it has drawn


@pytest.fixture
def page_and_outside(browser, server):  # noqa: F811
    """A page whose requests to any other host are recorded (and refused), so a test can assert none,
    and whose requests to the server are recorded too."""
    outside: list[str] = []
    local: list[str] = []

    def route(request_route):
        url = request_route.request.url
        if url.startswith(server):
            local.append(url)
            request_route.continue_()
        else:
            outside.append(url)
            request_route.abort()

    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.route("**/*", route)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    yield page, outside, local
    context.close()


def _drawn(page) -> list[str]:
    """Each live chart's plotted traces as plotly.js holds them (``gd.data``), as JSON."""
    return page.eval_on_selector_all(CHARTS, "nodes => nodes.map(n => JSON.stringify(n.data))")


def test_a_batch_step_updates_the_charts_in_place_without_outside_requests(page_and_outside, server):  # noqa: F811
    from playwright.sync_api import expect

    page, outside, local = page_and_outside
    page.goto(f"{server}/?batch=4")
    throughput = metric(page, "Throughput")
    expect(throughput).to_have_text(fmt.rate(expected(batch=4).throughput.output_tokens_per_s))
    charts = page.locator(CHARTS)
    expect(charts).to_have_count(3)  # memory; throughput against TPOT and TTFT in the open first tab
    for i in range(3):
        expect(charts.nth(i)).to_have_class(PLOTTED)
    # tag each chart's DOM node: a remounted chart is a new node without the tag
    page.eval_on_selector_all(CHARTS, "nodes => nodes.forEach((n, i) => { n.__liveTag = i; })")
    before = _drawn(page)

    press(page.get_by_role("slider", name="Concurrent requests (batch)"), "ArrowRight", "6")
    expect(throughput).to_have_text(fmt.rate(expected(batch=6).throughput.output_tokens_per_s))
    page.wait_for_function(
        "([selector, before]) => [...document.querySelectorAll(selector)]"
        ".every((n, i) => JSON.stringify(n.data) !== before[i])",
        arg=[CHARTS, before],
    )

    assert page.eval_on_selector_all(CHARTS, "nodes => nodes.map(n => n.__liveTag)") == [0, 1, 2]
    after = _drawn(page)
    assert all(a != b for a, b in zip(after, before, strict=True))
    assert "Memory per GPU" in charts.first.inner_text()
    expect(page.get_by_test_id("stException")).to_have_count(0)
    assert outside == []
    # plotly.js came from this server's copy of the plotly package, once for the three charts and the step
    assert [url for url in local if url.endswith("/plotly.min.js")] == [
        f"{server}/component/ui.plotly_component.plotlyjs/plotly.min.js"
    ]


def test_a_live_chart_hovers_and_follows_its_containers_width(page_and_outside, server):  # noqa: F811
    from playwright.sync_api import expect

    page, outside, _ = page_and_outside
    page.goto(f"{server}/?batch=4")
    memory = page.locator(CHARTS).first
    expect(memory).to_have_class(PLOTTED)
    # the widest bar's centre, by mouse position: plotly's drag layer above the bars takes the pointer
    memory.scroll_into_view_if_needed()
    box = memory.evaluate(
        """node => [...node.querySelectorAll('.barlayer .point')].map(p => p.getBoundingClientRect())
                     .reduce((a, b) => (b.width * b.height > a.width * a.height ? b : a)).toJSON()"""
    )
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    expect(memory.locator(".hoverlayer .hovertext").first).to_be_visible()

    svg = memory.locator(".main-svg").first
    wide = float(svg.get_attribute("width"))
    assert wide == pytest.approx(memory.evaluate("n => n.parentElement.clientWidth"), abs=1)
    page.set_viewport_size({"width": 900, "height": 1000})
    page.wait_for_function(
        "([n, w]) => parseFloat(n.getAttribute('width')) < w - 300", arg=[svg.element_handle(), wide]
    )
    assert float(svg.get_attribute("width")) == pytest.approx(
        memory.evaluate("n => n.parentElement.clientWidth"), abs=1
    )

    assert outside == []


SIDE_BY_SIDE = """
import streamlit as st

from tests.test_browser import expected
from ui import charts
from ui.figure import chart

figure = charts.memory_figure(expected())
st.plotly_chart(figure, width="stretch", key="streamlit")
chart(st, figure, key="live")
"""

# What the theme decides, read from plotly.js's resolved layout (gd._fullLayout) and traces.
RESOLVED = """gd => { const L = gd._fullLayout; const axis = a => ({tickfont: a.tickfont, gridcolor: a.gridcolor,
  tickcolor: a.tickcolor, title: a.title, showgrid: a.showgrid, zeroline: a.zeroline});
  return JSON.parse(JSON.stringify({font: L.font, title: L.title, paper: L.paper_bgcolor, plot: L.plot_bgcolor,
    colorway: L.colorway, width: L.width, height: L.height, margin: L.margin, hoverlabel: L.hoverlabel,
    legend: {font: L.legend.font, bordercolor: L.legend.bordercolor, valign: L.legend.valign},
    xaxis: axis(L.xaxis), yaxis: axis(L.yaxis), traces: gd._fullData.map(t => [t.name, t.marker.color]),
    modebar: [...gd.querySelectorAll('.modebar-btn')].map(b => b.getAttribute('data-title'))})); }"""


def test_a_live_chart_is_themed_as_st_plotly_chart(browser, tmp_path):  # noqa: F811
    """The same figure drawn by st.plotly_chart and by ui.figure.chart on one page: every resolved font,
    colour, margin, size and trace colour agrees (the title differs only in Streamlit's doubled <b>), and
    the mode bar's tools but Streamlit's Fullscreen."""
    script = tmp_path / "side_by_side.py"
    script.write_text(f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n{SIDE_BY_SIDE}")
    with run_server(script) as url:
        context = browser.new_context(viewport={"width": 1400, "height": 1400})
        context.route("**/*", lambda r: r.continue_() if r.request.url.startswith(url) else r.abort())
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(url)
        page.wait_for_selector("[data-testid='stPlotlyChart'] .js-plotly-plot .main-svg")
        page.wait_for_selector(f"{CHARTS} .main-svg")
        streamlit = page.eval_on_selector("[data-testid='stPlotlyChart'] .js-plotly-plot", RESOLVED)
        live = page.eval_on_selector(CHARTS, RESOLVED)
        context.close()
    streamlit_title, live_title = streamlit.pop("title"), live.pop("title")
    text = live_title.pop("text")
    assert text.startswith("<b>Memory per GPU") and text.endswith("</b>")
    assert streamlit_title.pop("text") == f"<b>{text}</b>"  # Streamlit applies its bold twice
    assert live_title == streamlit_title
    # the same tools, less Streamlit's Fullscreen (the charts keep only "download as PNG": ui/chart_style.py)
    assert [tool for tool in streamlit.pop("modebar") if tool != "Fullscreen"] == live.pop("modebar")
    assert live == streamlit
