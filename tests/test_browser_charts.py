"""Charts and formulas readable in a real browser at 1440x900 (a laptop, a projector) and 390x844 (a
phone), in English and Chinese (issue 28, item 12; audit D12-D14).

For every chart a page draws: no label (title, annotation, tick label, axis title, legend entry,
text on a trace) runs outside the figure or, for text on a trace, outside the plot area; no two
labels overlap, no annotation lies on a bar, the legend needs no scrolling, and the mode bar covers
no text. Numeric axes are ticked at round values (1-2-5 steps; 1, 2, 5 x 10^n on log axes). The
memory chart's over-budget bar starts at the capacity line. Learn's formulas fit their column and
the Explorer's metrics show their whole label and value.

Reuses tests/test_browser.py's server and browser (outside CI the tests skip without Chromium; in CI
a missing browser fails). Nothing leaves loopback.
"""

from __future__ import annotations

import itertools
import math
import re

import pytest

from core.messages import message
from tests.test_browser import ARTIFACTS, WAIT_MS, browser, local_context, server, settled  # noqa: F401 (fixtures)

VIEWPORTS = {"desktop": (1440, 900), "phone": (390, 844)}
OVER_BUDGET = "?model=llama-3.1-8b&gpu=a10&batch=32"
"""The audit's memory chart: 32 requests of 2,560 tokens where an A10 holds 11."""

LABELS_JS = """
(plot) => {
  const svg = plot.querySelector('svg.main-svg');
  const frame = svg.getBoundingClientRect();
  const box = (el) => {
    const r = el.getBoundingClientRect();
    return {x0: r.left, y0: r.top, x1: r.right, y1: r.bottom};
  };
  const visible = (el) => {
    for (let node = el; node && node !== plot; node = node.parentElement) {
      const style = getComputedStyle(node);
      if (style.display === 'none' || style.visibility === 'hidden' || style.opacity === '0') return false;
    }
    return el.textContent.trim() !== '' && el.getBoundingClientRect().width > 0;
  };
  const kinds = [
    ['title', '.gtitle'],
    ['annotation', '.annotation-text-g text'],
    ['tick', '.xtick text, .ytick text, .x2tick text, .y2tick text'],
    ['polar', '.angularaxistick text, .radialaxistick text, g.angular-axis text, g.radial-axis text'],
    ['axis title', '.g-xtitle text, .g-ytitle text, .g-x2title text, .g-y2title text'],
    ['legend', '.legendtext'],
    ['trace text', '.textpoint text, text.bartext'],
  ];
  const labels = [];
  const seen = new Set();
  for (const [kind, selector] of kinds) {
    for (const el of plot.querySelectorAll(selector)) {
      if (seen.has(el) || el.closest('.hoverlayer') || !visible(el)) continue;
      seen.add(el);
      const axis = el.closest('[class*="tick"]');
      labels.push({kind, text: el.textContent, axis: kind === 'tick' ? (axis ? axis.getAttribute('class') : '') : '',
                   ...box(el)});
    }
  }
  const areas = [...plot.querySelectorAll('.draglayer .nsewdrag')].map(box);
  const bars = [...plot.querySelectorAll('.barlayer .point path')].map(box).filter((b) => b.x1 - b.x0 > 0.5);
  const legend = plot.querySelector('.legend .bg');
  const scrollbar = plot.querySelector('.legend .scrollbar');
  const modebar = plot.querySelector('.modebar');
  // on a desktop the bar shows only under the mouse (opacity 0 otherwise); on a touch screen always
  const shown = modebar && modebar.getBoundingClientRect().width > 0 && getComputedStyle(modebar).opacity !== '0';
  const modebarBox = shown ? box(modebar) : null;
  const title = plot.querySelector('.gtitle');
  return {
    title: title ? title.textContent : '',
    frame: {x0: frame.left, y0: frame.top, x1: frame.right, y1: frame.bottom},
    labels, areas, bars,
    legend: legend ? box(legend) : null,
    legendScrolls: !!scrollbar && scrollbar.getBoundingClientRect().height > 0,
    modebar: modebarBox,
  };
}
"""


def _inside(inner: dict, outer: dict, slack: float = 1.0) -> bool:
    return (
        inner["x0"] >= outer["x0"] - slack
        and inner["y0"] >= outer["y0"] - slack
        and inner["x1"] <= outer["x1"] + slack
        and inner["y1"] <= outer["y1"] + slack
    )


def _overlap(a: dict, b: dict, slack: float = 1.0) -> bool:
    return (
        min(a["x1"], b["x1"]) - max(a["x0"], b["x0"]) > slack and min(a["y1"], b["y1"]) - max(a["y0"], b["y0"]) > slack
    )


def problems(chart: dict) -> list[str]:
    """What a reader could not read on one chart (see the module docstring), as sentences."""
    found = []
    where = chart["title"] or "untitled chart"
    labels = chart["labels"]
    for label in labels:
        if not _inside(label, chart["frame"]):
            found.append(f"{where}: {label['kind']} {label['text']!r} runs outside the figure")
        if label["kind"] == "trace text" and not any(_inside(label, area) for area in chart["areas"]):
            found.append(f"{where}: {label['text']!r} is cut by the plot area")
        if label["kind"] == "annotation" and any(_overlap(label, bar) for bar in chart["bars"]):
            found.append(f"{where}: annotation {label['text']!r} lies on a bar")
        if chart["modebar"] and _overlap(label, chart["modebar"]):
            found.append(f"{where}: the mode bar covers {label['text']!r}")
        if label["kind"] == "legend" and chart["legend"] and not _inside(label, chart["legend"]):
            found.append(f"{where}: legend entry {label['text']!r} is cut off")
        if label["kind"] != "legend" and chart["legend"] and _overlap(label, chart["legend"]):
            found.append(f"{where}: the legend covers {label['kind']} {label['text']!r}")
    for i, a in enumerate(labels):
        for b in labels[i + 1 :]:
            if _overlap(a, b):
                found.append(f"{where}: {a['kind']} {a['text']!r} overlaps {b['kind']} {b['text']!r}")
    if chart["legendScrolls"]:
        found.append(f"{where}: the legend scrolls")
    return found


SI = {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "m": 1e-3, "µ": 1e-6, "μ": 1e-6}


def _number(text: str) -> float | None:
    match = re.fullmatch(r"\s*([−-]?[\d,]*\.?\d+)\s*([kMGTmµμ]?)\s*(%|GiB|ms|s|x|×)?\s*", text)
    if not match:
        return None
    value = float(match.group(1).replace(",", "").replace("−", "-"))
    return value * SI.get(match.group(2), 1.0)


def _round_step(step: float) -> bool:
    mantissa = step / 10 ** math.floor(math.log10(step) + 1e-9)
    return any(math.isclose(mantissa, m, rel_tol=1e-6) for m in (1, 2, 2.5, 5))


def unround_axes(chart: dict) -> list[str]:
    """Numeric axes whose ticks are not at round values: linear axes step 1, 2, 2.5 or 5 x 10^n from
    a multiple of the step; log axes at 1, 2 or 5 x 10^n."""
    by_axis: dict[str, list[float]] = {}
    for label in chart["labels"]:
        if label["kind"] == "tick":
            by_axis.setdefault(label["axis"], []).append(_number(label["text"]))
    found = []
    for axis, values in by_axis.items():
        if None in values or len(values) < 2:
            continue  # categories
        values = sorted(values)
        steps = [b - a for a, b in itertools.pairwise(values)]
        linear = all(math.isclose(s, steps[0], rel_tol=1e-3) for s in steps)
        if linear:
            ok = _round_step(steps[0]) and all(abs(v / steps[0] - round(v / steps[0])) < 1e-6 for v in values)
        else:
            ok = all(
                v > 0 and any(math.isclose(v / 10 ** math.floor(math.log10(v) + 1e-9), m) for m in (1, 2, 5))
                for v in values
            )
        if not ok:
            found.append(f"{chart['title']}: {axis} ticks {values}")
    return found


@pytest.fixture
def open_at(browser, server):  # noqa: F811 (the fixtures imported above)
    """Open a page in a new context of the given viewport (a phone: touch, mobile)."""
    contexts = []

    def open_(path: str, viewport: str):
        width, height = VIEWPORTS[viewport]
        phone = viewport == "phone"
        context = local_context(
            browser,
            server,
            viewport={"width": width, "height": height},
            is_mobile=phone,
            has_touch=phone,
            device_scale_factor=1,
        )
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(f"{server}/{path}")
        return page

    yield open_
    for context in contexts:
        context.close()


def charts_drawn(page, count: int) -> list[dict]:
    """Wait for ``count`` drawn charts after the script run ends; each chart's labels and boxes."""
    from playwright.sync_api import expect

    settled(page)
    plots = page.locator(".js-plotly-plot")
    expect(plots).to_have_count(count)
    for index in range(count):
        expect(plots.nth(index).locator("svg.main-svg").first).to_be_visible()
    page.wait_for_function(
        "n => [...document.querySelectorAll('.js-plotly-plot')].filter(p => p._fullLayout).length >= n", arg=count
    )
    return [plots.nth(index).evaluate(LABELS_JS) for index in range(count)]


def check(page, count: int, name: str) -> list[str]:
    """Problems and unround axes of the ``count`` charts shown; a screenshot for the record."""
    drawn = charts_drawn(page, count)
    ARTIFACTS.mkdir(exist_ok=True)
    plots = page.locator(".js-plotly-plot")
    for index in range(count):
        plots.nth(index).screenshot(path=str(ARTIFACTS / f"chart-{name}-{index}.png"))
    return list(dict.fromkeys(p for chart in drawn for p in (*problems(chart), *unround_axes(chart))))


def open_view(page, view: str, lang: str) -> None:
    page.get_by_role("tab", name=message(f"explorer.view_{view}", lang)).click()
    settled(page)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_explorer_charts_are_readable(open_at, viewport, lang):
    page = open_at(f"{OVER_BUDGET}&lang={lang}", viewport)
    found = check(page, 3, f"explorer-{viewport}-{lang}")  # memory, throughput against TPOT, TTFT
    for view, count in (("concurrency", 3), ("tradeoff", 2), ("sensitivity", 2)):
        open_view(page, view, lang)
        found += check(page, count, f"explorer-{view}-{viewport}-{lang}")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_the_over_budget_bar_starts_at_capacity(open_at, viewport):
    """The audit's chart drew "held back" and "reserved" after the overflow, beyond the capacity."""
    page = open_at(OVER_BUDGET, viewport)
    charts_drawn(page, 3)
    memory = page.locator(".js-plotly-plot").first
    found = memory.evaluate(
        """(plot, name) => {
            const layout = plot._fullLayout, x = layout.xaxis;
            const capacity = layout.shapes.find((s) => s.line.dash === 'dash').x0;
            const traces = [...plot.querySelectorAll('.barlayer .trace')];
            const index = plot._fullData.findIndex((d) => d.name === name);
            const bar = traces[index].querySelector('path').getBoundingClientRect();
            const left = plot.querySelector('.draglayer .nsewdrag').getBoundingClientRect().left;
            return {bar: bar.left, capacity: left + x.l2p(capacity)};
        }""",
        message("memory.kv_over"),
    )
    assert found["bar"] == pytest.approx(found["capacity"], abs=1.5), found


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_load_test_charts_are_readable(open_at, viewport, lang):
    page = open_at(f"load-test?lang={lang}&lt_count=200", viewport)
    found = check(page, 2, f"loadtest-{viewport}-{lang}")
    page.get_by_role("button", name=message("lt.run_sweep", lang)).click()
    found += check(page, 4, f"loadtest-sweep-{viewport}-{lang}")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_learn_and_validation_charts_are_readable(open_at, viewport, lang):
    found = check(open_at(f"learn?lang={lang}", viewport), 2, f"learn-{viewport}-{lang}")
    found += check(open_at(f"validation?lang={lang}", viewport), 1, f"validation-{viewport}-{lang}")
    assert not found, "\n".join(found)


FORMULAS_JS = """
() => {
  const main = document.querySelector('[data-testid="stMainBlockContainer"]').getBoundingClientRect();
  return [...document.querySelectorAll('.katex-display')].map((k) => {
    const formula = k.querySelector('.katex').getBoundingClientRect();
    const column = k.closest('[data-testid="stElementContainer"]').getBoundingClientRect();
    return [formula.right, Math.min(column.right, main.right, window.innerWidth), k.textContent.slice(0, 60)];
  }).filter(([right, limit]) => right > limit + 1);
}
"""


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    "levers",
    ["", "&spec=draft&prefix=1024&lora_n=4&attn=eager&offload_w=1.0"],
    ids=["levers off (example settings)", "every lever on"],
)
def test_learn_formulas_fit_their_column_at_1440(open_at, levers, lang):
    """The audit (levers off) saw the prefix line end at "..., I = 2,048, b = 1" and the LoRA sum run
    off at "... + (4,096 + 14,336) + ("; every formula's right edge within its column and the page."""
    from playwright.sync_api import expect

    page = open_at(f"learn?lang={lang}{levers}", "desktop")
    settled(page)
    expect(page.locator(".katex-display").first).to_be_visible()
    overflowing = page.evaluate(FORMULAS_JS)
    assert not overflowing, overflowing


D13 = "?model=llama-3.1-8b&gpu=a100-80gb&input_len=128&output_len=128&batch=32"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_explorer_metrics_show_their_whole_label_and_value_at_1440(open_at, lang):
    """The audit read "Max concurrent req..." and "1,873 t..." on this scenario."""
    from playwright.sync_api import expect

    page = open_at(f"{D13}&lang={lang}", "desktop")
    settled(page)
    expect(page.get_by_test_id("stMetricValue").first).to_be_visible()
    cut = page.evaluate(
        """() => [...document.querySelectorAll('[data-testid="stMetricLabel"], [data-testid="stMetricValue"]')]
            .flatMap((el) => [...el.querySelectorAll('*')].concat([el]))
            .filter((el) => el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0)
            .map((el) => el.textContent)"""
    )
    assert not cut, cut


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_compare_charts_are_readable(open_at, viewport, lang):
    """Two saved scenarios, the second one not fitting (32 requests on an A10 that holds 11)."""
    from playwright.sync_api import expect

    page = open_at(f"compare?lang={lang}", viewport)
    save = page.get_by_role("button", name=message("compare.save", lang))
    save.click()
    expect(page).to_have_url(re.compile(r"cmp="))
    settled(page)
    page.goto(re.sub(r"([?&])batch=\d+&?", r"\1", page.url) + "&batch=32")
    save.click()
    found = check(page, 2, f"compare-{viewport}-{lang}")
    assert not found, "\n".join(found)


def test_the_catalog_shows_many_models_at_once_at_1440(open_at):
    from playwright.sync_api import expect

    page = open_at("catalog", "desktop")
    settled(page)
    table = page.get_by_test_id("stDataFrame").first
    expect(table).to_be_visible()
    assert table.bounding_box()["height"] >= 600  # about 17 rows; the default box showed 10
