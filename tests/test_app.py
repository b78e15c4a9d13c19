"""AppTest: the app runs, its numbers are core's numbers, and inputs change them."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.deployment import Workload
from core.estimate import estimate

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


@pytest.fixture
def app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    at.run()
    assert not at.exception
    return at


def test_explorer_shows_core_numbers_for_the_defaults(app, deploy):
    # defaults: Llama-3.1-8B on an A10, bf16, 2048 + 512 tokens, batch 16
    expected = estimate(deploy(model="llama-3.1-8b", gpu="a10"), Workload(input_len=2048, output_len=512, batch=16))
    shown = metrics(app)
    assert shown["TPOT"] == f"{expected.latency.tpot_s * 1e3:,.1f} ms"
    assert shown["Throughput"] == f"{expected.throughput.output_tokens_per_s:,.0f} tok/s"
    assert shown["Max concurrent requests"] == f"{expected.kv.max_concurrency_at_request_len:,}"
    assert shown["Fits"] == ("yes" if expected.fits else "no")
    assert len(app.get("plotly_chart")) == 1


def test_moving_the_batch_slider_changes_throughput(app):
    before = metrics(app)["Throughput"]
    app.slider(key="batch").set_value(2).run()
    assert not app.exception
    assert metrics(app)["Throughput"] != before


def test_impossible_tensor_parallel_is_a_message_not_a_traceback(app):
    # Phi-3-mini has 32 heads: fine; gpt-oss-20b with 64 heads over 8 GPUs also fine; use a model/tp mismatch:
    app.selectbox(key="model").set_value("qwen2.5-0.5b")  # 14 attention heads
    app.selectbox(key="tp").set_value(4).run()
    assert not app.exception
    assert any("tp (4) must divide" in e.value for e in app.error)


def test_model_that_does_not_fit_says_so(app):
    app.selectbox(key="model").set_value("llama-3.1-70b").run()
    assert not app.exception
    assert metrics(app)["Fits"] == "no"
    assert any("does not fit" in w.value for w in app.warning)


def test_switching_to_a_shorter_context_model_keeps_the_session_working(app):
    app.selectbox(key="model").set_value("llama-2-7b").run()  # 4096-token context
    assert not app.exception
    assert app.select_slider(key="max_model_len").value <= 4096
    assert metrics(app)["Fits"] in ("yes", "no")


def test_request_longer_than_max_model_len_is_a_message(app):
    app.select_slider(key="max_model_len").set_value(2048)
    app.select_slider(key="input_len").set_value(4096).run()
    assert not app.exception
    assert any("exceeds max_model_len" in e.value for e in app.error)
