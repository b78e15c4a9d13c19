"""One scenario, one answer (issue 28): for generated scenarios and page orders, the Explorer after
the click path, the copied link reopened in a new session, the export and ``python -m core`` give
the same numbers; Plan's answer equals ``python -m core check``'s.

A session starts on the A10 (the default), switches to the scenario's GPU, visits pages in the
generated order and comes back: the audit's D2 path, generalised. The copied URL itself is
reopened in Chromium by tests/test_browser_one_answer.py. The numbers compared are the
Explorer's headline metrics as shown, the answer sentence, the export's JSON and the CLI's JSON.
"""

from __future__ import annotations

import json

import pytest
from app_helpers import metrics, open_app
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from core.estimate.export import export_document
from core.estimate.result import estimate
from core.spec import units
from ui.fmt import count, duration, rate

MODELS = ("llama-3.1-8b", "qwen3-8b", "qwen3-32b", "mistral-7b")
GPUS = ("a10", "l4", "h100-sxm", "a100-80gb", "l40s")
PAGES = ("plan", "compare", "learn", "loadtest", "workshop", "catalog")

scenarios = st.fixed_dictionaries(
    {
        "model": st.sampled_from(MODELS),
        "gpu": st.sampled_from(GPUS),
        "input_len": st.sampled_from((128, 512, 2048)),
        "output_len": st.sampled_from((128, 512)),
        "batch": st.sampled_from((1, 8, 32)),
        "pages": st.lists(st.sampled_from(PAGES), min_size=1, max_size=3),
    }
)


def _switch(at: AppTest, page: str) -> None:
    at.switch_page(f"pages/{page}_page.py").run()
    assert not at.exception, page


def _shown(e) -> dict[str, str]:
    """The Explorer's headline metrics for estimate ``e``, formatted as the page formats them."""
    return {
        "Max concurrent requests without preemption": count(e.kv.max_concurrency_at_request_len),
        "TTFT (median)": duration(e.burst.median_s),
        "TPOT": duration(e.latency.tpot_s),
        "Throughput": rate(e.throughput.output_tokens_per_s),
    }


@pytest.fixture(scope="module")
def known_models(catalog):
    return [m for m in MODELS if any(x.id == m for x in catalog.models)]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scenario=scenarios)
def test_every_page_link_export_and_cli_agree(scenario, known_models, cli):
    if scenario["model"] not in known_models:
        return
    work = {k: str(scenario[k]) for k in ("input_len", "output_len", "batch")}
    at = open_app(model=scenario["model"], **work)  # on the A10, then the GPU chosen in the list
    if scenario["gpu"] != "a10":
        at.selectbox(key="gpu").set_value(scenario["gpu"]).run()
    for page in scenario["pages"]:
        _switch(at, page)
    _switch(at, "explorer")
    if at.session_state["scenario"] is None:
        return
    session = metrics(at)
    answer = (at.error or at.success)[0].value

    # the same scenario opened from a link in a new session (AppTest does not write bound widgets into
    # its query_params as the browser does: tests/test_browser_one_answer.py copies the real URL)
    fresh = open_app(model=scenario["model"], gpu=scenario["gpu"], **work)
    assert metrics(fresh) == session
    assert (fresh.error or fresh.success)[0].value == answer

    # the CLI
    code, out, err = cli(
        "estimate", "--model", scenario["model"], "--gpu", scenario["gpu"], "--input-len", work["input_len"],
        "--output-len", work["output_len"], "--batch", work["batch"], "--json",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    dep = at.session_state["scenario"].deployment
    e = estimate(dep, at.session_state["scenario"].workload)
    assert data["latency"]["ttft_ms"] == pytest.approx(e.latency.ttft_s / units.MS, rel=1e-3, abs=0.05)
    assert data["latency"]["tpot_ms"] == pytest.approx(e.latency.tpot_s / units.MS, rel=1e-3, abs=0.05)
    assert data["throughput"]["output_tokens_per_s"] == pytest.approx(e.throughput.output_tokens_per_s, rel=1e-3)
    assert data["kv"]["max_concurrency_at_request_len"] == e.kv.max_concurrency_at_request_len
    assert {k: session[k] for k in _shown(e)} == _shown(e)

    # the export of the same view
    exported = export_document(e).data
    assert exported["latency"] == data["latency"] and exported["throughput"] == data["throughput"]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    gpu=st.sampled_from(GPUS),
    users=st.sampled_from((5, 50, 200)),
    pages=st.lists(st.sampled_from(PAGES), min_size=0, max_size=2),
)
def test_plan_answer_equals_the_cli_check(gpu, users, pages, cli):
    """Plan, after the GPU changed and other pages were visited, says what ``check`` says: the same
    verdict, binding limit, cheapest fix with its price and figures to quote, word for word."""
    at = open_app()
    _switch(at, "plan")
    at.selectbox(key="gpu").set_value(gpu).run()
    for page in pages:
        _switch(at, page)
    _switch(at, "plan")
    at.number_input(key="plan_users").set_value(users).run()
    answer = (at.error or at.warning or at.success)[0].value
    code, out, err = cli(
        "check", "--model", "llama-3.1-8b", "--gpu", gpu, "--users", str(users), "--think-time-s", "30",
        "--prompt-len", "1500", "--answer-len", "300", "--ttft-slo-ms", "1000", "--tokens-per-s-per-user", "20",
        "--json",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert answer == data["answer"]
