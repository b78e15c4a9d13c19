"""One answer on the Learn page (issue 30, item 4): Learn teaches the TTFT the Explorer heads with, the
burst's median as vLLM V1 admits it (core/estimate/burst.py), and keeps the static rounds only as the
labelled teaching simplification. Before: Learn's TTFT was the static last request (22.4 s where the
Explorer said the median; review 2026-12 §1.4)."""

from __future__ import annotations

import pytest
from app_helpers import metrics, open_app

from core.estimate.result import estimate
from core.spec.deployment import Workload
from ui import fmt

SCENARIOS = [  # query of a link, and the workload it gives
    ({}, Workload(input_len=2048, output_len=512, batch=8)),  # all fit at once
    ({"batch": "64"}, Workload(input_len=2048, output_len=512, batch=64)),  # the A10 holds 11: V1 preempts
]


def _result_after(at, title: str) -> str:
    """The shown result ("= **x**, the number shown") of the explanation whose bold title is ``title``."""
    texts = [md.value for md in at.markdown]
    start = texts.index(f"**{title}**")
    return next(text for text in texts[start:] if text.startswith("= **")).split("**")[1]


@pytest.mark.parametrize(("query", "work"), SCENARIOS)
def test_learn_teaches_the_explorers_headline_ttft(query, work, deploy):
    at = open_app(**query)
    headline = metrics(at)["TTFT (median)"]
    at.switch_page("pages/learn_page.py").run()
    assert not at.exception
    assert _result_after(at, "TTFT of a burst: median, P99 and the last request") == headline
    result = estimate(deploy(model="llama-3.1-8b", gpu="a10", max_model_len=4096), work)
    burst = result.burst
    assert headline == fmt.duration(burst.median_s)
    body = next(md.value for md in at.markdown if "headline TTFT is the median" in md.value)
    assert f"**{headline}**" in body and fmt.duration(burst.p99_s) in body and fmt.duration(burst.last_s) in body
    # the static rounds stay, labelled as the simplification, with their own (last-request) number
    texts = [md.value for md in at.markdown]
    assert "**The teaching simplification: static rounds (the last request)**" in texts
    assert _result_after(at, "TTFT: waiting rounds, request overhead and the prefill") == fmt.duration(
        result.latency.ttft_s
    )


def test_a_memory_bound_burst_shows_a_median_below_the_static_last_request(deploy):
    """The reproduction's shape: past the KV fit the static last request is well above the median."""
    result = estimate(deploy(model="llama-3.1-8b", gpu="a10", max_model_len=4096), SCENARIOS[1][1])
    assert result.burst.source == "simulator"
    assert result.burst.median_s < 0.8 * result.latency.ttft_s


def test_learn_in_chinese_shows_the_same_median():
    at = open_app(lang="zh", batch="64")
    headline = next(m.value for m in at.metric if m.label.startswith("TTFT"))
    at.switch_page("pages/learn_page.py").run()
    assert not at.exception
    assert _result_after(at, "突发请求的 TTFT：中位数、P99 与最后一条") == headline


def test_the_workshops_tuning_answer_quotes_the_explorers_ttft():
    """The tuning exercise (16 requests on an A10, memory binds): its baseline TTFT and the memory step quote
    the Explorer's headline for the same scenario (the median, 3.25 s), not the static last request (28.9 s),
    and the fixes' TTFT column is the median too."""
    from core.estimate.advice import fit_suggestions
    from core.teaching.answers import answer
    from core.teaching.exercises import exercise
    from core.teaching.text import Table

    ex = exercise("tuning")
    at = open_app(**ex.scenario.query())
    headline = metrics(at)["TTFT (median)"]
    shown = answer(ex)
    texts = {step.key: step.render("en") for step in shown.steps if not isinstance(step, Table)}
    dep, work = ex.scenario.build()
    result = estimate(dep, work)
    assert headline == fmt.duration(result.burst.median_s) != fmt.duration(result.latency.ttft_s)
    assert f"TTFT {headline} (the median" in texts["workshop.tuning_baseline"]
    assert (
        headline in texts["workshop.tuning_memory"]
        and fmt.duration(result.burst.last_s) in texts["workshop.tuning_memory"]
    )
    assert fmt.duration(result.latency.ttft_s) not in " ".join(texts.values())
    assert shown.values["ttft_s"] == result.burst.median_s
    headers, rows = next(step for step in shown.steps if isinstance(step, Table)).render("en")
    assert headers[2] == "TTFT (median)"
    fixes = fit_suggestions(dep, work, result)
    assert [row[2] for row in rows] == [fmt.duration(s.result.burst.median_s) for s in fixes]


def test_the_burst_explanation_is_three_figures_not_a_chain(deploy):
    """The How of the headline: last, P99 and the median side by side (braced, so the page's line breaking
    never shows "TTFT_last = 28,236, TTFT_p99" as one equality), ending with the median shown."""
    from core.estimate.explain import explain, ms
    from ui.explain import aligned

    result = estimate(deploy(model="llama-3.1-8b", gpu="a10", max_model_len=4096), SCENARIOS[1][1])
    values = explain(result)["ttft_burst"].values
    assert aligned(values) == values
    figures = values.split(r"\quad")[0]
    assert rf"{{\text{{TTFT}}_{{last}} = {ms(result.burst.last_s)}}}" in figures  # braced: no chain
    assert figures.rstrip(" \\").endswith(rf"\text{{TTFT}}_{{p50}} = {ms(result.burst.median_s)}\ \text{{ms}}")


def test_the_knee_exercise_says_its_ttft_is_the_static_last_request():
    from core.teaching.answers import answer
    from core.teaching.exercises import exercise

    gain = next(step for step in answer(exercise("knee")).steps if getattr(step, "key", "") == "workshop.knee_gain")
    text = gain.render("en")
    assert "the static rounds' last request, not the Explorer's median" in text
    assert "最后一条" in gain.render("zh")
