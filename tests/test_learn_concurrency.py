""" "Max concurrency" said for what it is (review 2026-12 §4): KV budget / KV(prompt + answer) is the count
that runs without preemption, neither what vLLM logs (KV tokens / max_model_len) nor what V1 runs (it
admits on the prompt's blocks and preempts). The Explorer and Learn label it so and show the V1 figure
(the stepped burst's peak running batch) and the logged one beside it."""

from __future__ import annotations

from app_helpers import metrics, open_app

from core.estimate.result import estimate
from core.teaching.exercises import exercise
from ui import fmt

TUNING = exercise("tuning")  # 16 requests of 2,048 + 512 tokens on one A10: 11 fit at full length


def _expected():
    dep, work = TUNING.scenario.build()
    return estimate(dep, work)


def test_v1_runs_more_at_once_than_fit_without_preemption():
    result = _expected()
    burst, kv = result.burst, result.kv
    assert burst.source == "simulator" and burst.preemptions > 0
    assert kv.max_concurrency_at_request_len < burst.peak_running <= min(result.workload.batch, result.max_running)


def test_the_explorer_labels_the_figure_and_shows_v1_and_the_logged_one_beside_it():
    result = _expected()
    at = open_app(**TUNING.scenario.query())
    shown = metrics(at)
    assert "Max concurrent requests" not in shown  # never the bare label
    assert shown["Max concurrent requests without preemption"] == fmt.count(result.kv.max_concurrency_at_request_len)
    line = next(c.value for c in at.caption if c.value.startswith("Concurrency: "))
    assert f"ran up to {result.burst.peak_running} at once in this burst of 16" in line
    assert f"{result.kv.max_concurrency_at_max_model_len:,.2f}x" in line
    assert f"{result.kv.max_concurrency_at_request_len} requests of 2,560 tokens fit without preemption" in line


def test_learn_shows_the_same_line_and_chinese_says_no_preemption():
    at = open_app(**TUNING.scenario.query())
    line = next(c.value for c in at.caption if c.value.startswith("Concurrency: "))
    at.switch_page("pages/learn_page.py").run()
    assert not at.exception
    assert line in [c.value for c in at.caption]
    zh = open_app(lang="zh", **TUNING.scenario.query())
    assert "最大并发请求数（不抢占）" in metrics(zh)


def test_sglang_gets_no_vllm_log_figure():
    """SGLang logs no "Maximum concurrency" line: the figure beside is the stepped scheduler's, said so."""
    at = open_app(engine="SGLang", **TUNING.scenario.query())
    assert not at.exception
    line = next(c.value for c in at.caption if c.value.startswith("Concurrency: "))
    assert "the scheduler as the simulator steps it" in line and "start-up log" not in line
