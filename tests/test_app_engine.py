"""The engine and its release in the sidebar: the Explorer says which numbers it shows, they are core's
for that engine, and a release the tool cannot model is refused with the reason, inputs kept."""

from __future__ import annotations

from core.estimate.result import estimate
from core.spec.engine_defaults import default_memory_fraction
from core.spec.release import CURRENT, parse_release
from tests.app_helpers import DEFAULT, DEFAULT_WORK, metrics, open_app, shown
from ui import fmt


def test_explorer_states_the_engine_and_release():
    at = open_app()
    assert any(f"vLLM {CURRENT['vllm']}" in c.value for c in at.caption)


def test_sglang_numbers_are_cores_with_its_default_fraction(deploy, catalog):
    at = open_app(engine="SGLang", engine_version="0.5.5")  # links carry display names
    release = parse_release("sglang", "0.5.5")
    fraction = default_memory_fraction(release, catalog.gpu("a10").memory_bytes, 1)
    expected = estimate(deploy(**DEFAULT, release=release, gpu_memory_utilization=fraction), DEFAULT_WORK)
    assert metrics(at)["TPOT"] == fmt.duration(expected.latency.tpot_s)
    assert metrics(at)["Max concurrent requests without preemption"] == fmt.count(
        expected.kv.max_concurrency_at_request_len
    )
    assert any("SGLang 0.5.5" in c.value for c in at.caption)
    assert at.sidebar.slider(key="util").value == fraction


def test_a_release_too_old_is_refused_with_the_reason_and_inputs_kept():
    at = open_app(engine_version="0.1.0", batch="4")  # not the default: the link keeps it
    assert not at.exception
    assert any("older than the oldest release" in shown(e) for e in at.error)
    assert at.sidebar.text_input(key="engine_version").value == "0.1.0"
    assert at.query_params["batch"] == ["4"] or at.query_params["batch"] == "4"


def test_learn_shows_the_engines_own_budget_formula(deploy, catalog):
    release = parse_release("sglang", "")
    fraction = default_memory_fraction(release, catalog.gpu("a10").memory_bytes, 1)
    expected = estimate(deploy(**DEFAULT, release=release, gpu_memory_utilization=fraction), DEFAULT_WORK)
    at = open_app(engine="SGLang")
    at.switch_page("pages/learn_page.py").run()
    assert not at.exception
    budget = next(x.value for x in at.latex if "KV budget" in x.value)  # the symbols, then the values
    assert r"u \cdot (M - C) - W" in budget
    ceiling = [x.value for x in at.latex if "N_{max}" in x.value][1]  # the formula with the values
    assert ceiling.rstrip("$\n ").endswith(f"= {expected.kv.max_concurrency_at_request_len:,}".replace(",", "{,}"))
