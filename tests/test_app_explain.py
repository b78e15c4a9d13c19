"""Each headline number on Explorer, Plan and Learn explains itself one click away, and the
explanation's result is the number shown (core/estimate/explain.py, ui/explain.py)."""

from __future__ import annotations

import re

import pytest

from core.estimate.result import estimate
from tests.app_helpers import DEFAULT, DEFAULT_WORK, figures, metrics, open_app
from ui import fmt

HEADLINES = {  # Explorer metric label -> its explanation's popover key
    "Fits": "fits",
    "Max concurrent requests without preemption": "max_concurrency",
    "TTFT (median)": "ttft_burst",
    "TPOT": "tpot",
    "Throughput": "throughput",
    "Decode bound": "bound",
}
RESULT = re.compile(r"^= \*\*(.+?)\*\*")
LAST = re.compile(r"= ([\d{},.]+)\\ \\text\{(ms|tok/s|GiB|B)\}")


def results(at) -> list[str]:
    """The shown results of the open explanations, in page order."""
    return [m.group(1) for m in (RESULT.match(md.value) for md in at.markdown) if m]


def latex_result(latex: str) -> tuple[float, str]:
    """The number a substituted formula ends with, and its unit."""
    found = LAST.findall(latex)
    assert found, latex
    number, unit = found[-1]
    return float(number.replace("{,}", "")), unit


def test_explanations_are_closed_until_opened():
    at = open_app()
    assert not results(at)  # lazy: nothing built, nothing sent
    assert not at.latex


@pytest.mark.parametrize("query", [{}, {"model": "qwen3-30b-a3b", "gpu": "h100-sxm", "tp": "2"}, {"lang": "zh"}])
def test_each_explorer_headline_explains_the_number_shown(query):
    at = open_app(**query)
    shown = metrics(at)
    for key in HEADLINES.values():
        at.session_state[f"explain_{key}"] = True
    at.run()
    assert not at.exception
    labels = list(shown)[: len(HEADLINES)]
    assert results(at) == [shown[label] for label in labels]  # popovers in the metrics' order
    substituted = [x.value for x in at.latex][1::2]  # formula, then values, per explanation
    for latex, label in zip(substituted, labels, strict=True):
        if label in ("TTFT (median)", "TTFT（中位数）", "TPOT"):  # the formula's own result, as the page shows it
            value, unit = latex_result(latex.split(r"\quad")[0])
            assert unit == "ms" and fmt.duration(value / 1e3) == shown[label]


def test_the_memory_popover_matches_the_chart():
    at = open_app()
    at.session_state["explain_memory"] = True
    at.run()
    spec = next(f for f in figures(at) if f["layout"]["title"]["text"] == "Memory per GPU")
    weights = next(trace for trace in spec["data"] if trace["name"] == "Weights")
    found = results(at)
    assert found[0] == f"{weights['x'][0]:,.2f} GiB"  # weights first, as the chart's hover shows it
    assert len(found) == 7


def test_plan_operating_point_explained():
    at = open_app()
    at.switch_page("pages/plan_page.py").run()
    at.session_state["explain_plan"] = True
    at.run()
    assert not at.exception
    caption = next(c.value for c in at.markdown if "Steady state, the figures to quote" in c.value)
    ttft, tpot, throughput, *memory = results(at)
    assert f"TTFT {ttft}," in caption and f"TPOT {tpot}," in caption and f"{throughput} per replica" in caption
    assert len(memory) == 4 and memory[0].endswith(" GiB")


def test_learn_uses_the_explorers_numbers(deploy):
    at = open_app()
    shown = metrics(at)
    at.switch_page("pages/learn_page.py").run()
    assert not at.exception
    found = results(at)
    assert shown["TPOT"] in found and shown["Throughput"] in found
    # Learn teaches the static model's TTFT (the last request, in rounds); the Explorer heads with the burst's
    # median as V1 admits it, and its How of "ttft" keeps the static number
    static = estimate(deploy(**DEFAULT), DEFAULT_WORK)
    assert fmt.duration(static.latency.ttft_s) in found
    assert any("One decode step against the batch" in f["layout"]["title"]["text"] for f in figures(at))


def test_a_long_chain_breaks_only_at_its_own_equals_signs():
    from ui.explain import aligned

    chain = (
        r"\text{TTFT} = (2 - 1) \times 26{,}667 + 20 + \max\left(1.5, \frac{a = b}{c}\right) + 3{,}745"
        r" = 30{,}432\ \text{ms}\quad (B = 16,\ R = 11,\ k = 2)"
    )
    lines = aligned(chain).removeprefix(r"\begin{aligned}").removesuffix(r"\end{aligned}").split(r" \\ ")
    assert len(lines) == 2 and lines[0].startswith(r"\text{TTFT} &= (2 - 1)")
    assert lines[1] == r"&= 30{,}432\ \text{ms}\quad (B = 16,\ R = 11,\ k = 2)"  # the remark kept whole
