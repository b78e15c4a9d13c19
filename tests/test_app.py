"""AppTest for every page: no exception, the numbers and chart traces are core's, inputs change them."""

from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.estimate.result import estimate
from core.estimate.sweep import sweep
from core.spec import units
from core.spec.deployment import Workload
from tests.app_helpers import (
    DATA,
    DEFAULT,
    DEFAULT_WORK,
    PAGES,
    figures,
    metrics,
    open_app,
    open_form,
    shown,
    submit_gpu_form,
    values,
)
from ui import fmt


@pytest.fixture
def app() -> AppTest:
    return open_app()


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_page_runs_in_both_languages(page, lang):
    at = open_app(lang=lang)
    at.switch_page(page).run()
    assert not at.exception
    assert len(at.sidebar.children) > 5  # the shared sidebar is there on every page
    assert at.title


def test_explorer_numbers_are_cores(app, deploy):
    expected = estimate(deploy(**DEFAULT), DEFAULT_WORK)
    shown = metrics(app)
    assert shown["TPOT"] == fmt.duration(expected.latency.tpot_s)
    # the burst as V1 admits it: the median, as vllm bench serve prints it (not the static rounds' last)
    assert shown["TTFT (median)"] == fmt.duration(expected.burst.median_s)
    assert shown["Throughput"] == fmt.rate(expected.throughput.output_tokens_per_s)
    assert shown["Max concurrent requests without preemption"] == fmt.count(expected.kv.max_concurrency_at_request_len)
    assert shown["Fits"] == ("yes" if expected.fits else "no")


def test_explorer_chart_traces_are_cores(app, deploy):
    dep = deploy(**DEFAULT)
    expected = estimate(dep, DEFAULT_WORK)
    charts = figures(app)
    memory = next(f for f in charts if f["layout"]["title"]["text"] == "Memory per GPU")
    weights = next(trace for trace in memory["data"] if trace["name"] == "Weights")
    assert weights["x"][0] == pytest.approx(expected.memory.weights / units.GiB)
    triangle = next(f for f in charts if f["layout"]["title"]["text"].startswith("Throughput against TPOT"))
    current = next(trace for trace in triangle["data"] if trace["name"] == "current setting")
    assert current["x"][0] == pytest.approx(expected.latency.tpot_s / units.MS)
    assert current["y"][0] == pytest.approx(expected.throughput.output_tokens_per_s)
    grid = sweep(dep, np.arange(1, 1025), [2048], 512)
    fits = next(trace for trace in triangle["data"] if trace["name"] == "fits in memory")
    assert len(values(fits["x"])) == int(grid.max_concurrency[0])  # the memory wall cuts the solid curve
    titles = [f["layout"]["title"]["text"] for f in charts]
    assert not any(title.startswith("Max concurrent requests") for title in titles)  # its tab is closed
    app.session_state["explorer_view"] = "Concurrency ceiling"
    app.run()
    charts = figures(app)
    bars = next(f for f in charts if f["layout"]["title"]["text"].startswith("Max concurrent requests"))
    assert bars["data"][0]["y"][0] == expected.kv.max_concurrency_at_request_len
    assert bars["data"][0]["y"][1] == pytest.approx(expected.kv.max_concurrency_at_max_model_len)
    assert not any(f["layout"]["title"]["text"].startswith("Throughput against TPOT") for f in charts)


def test_moving_the_batch_slider_changes_the_numbers(app, deploy):
    before = metrics(app)
    app.select_slider(key="batch_steps").set_value(2).run()
    assert not app.exception
    assert app.number_input(key="batch").value == 2  # the slider drives the number that holds the batch
    assert app.query_params["batch"] in ("2", ["2"])  # and the link
    after = metrics(app)
    assert after["Throughput"] != before["Throughput"]
    expected = estimate(deploy(**DEFAULT), Workload(input_len=2048, output_len=512, batch=2))
    assert after["Throughput"] == fmt.rate(expected.throughput.output_tokens_per_s)
    assert after["Fits"] == "yes"


def test_the_default_scenario_fits():
    assert metrics(open_app())["Fits"] == "yes"


def test_any_batch_and_length_can_be_typed_and_the_slider_follows(app, deploy):
    # small batches are one slider step each (1.5x apart), not a few pixels of a 1-1024 line
    assert app.select_slider(key="batch_steps").options[:8] == ["1", "2", "3", "4", "6", "8", "12", "16"]
    app.number_input(key="batch").set_value(5)
    app.number_input(key="input_len").set_value(1800)
    app.number_input(key="output_len").set_value(250).run()
    assert not app.exception
    expected = estimate(deploy(**DEFAULT), Workload(input_len=1800, output_len=250, batch=5))
    assert metrics(app)["TPOT"] == fmt.duration(expected.latency.tpot_s)
    assert app.select_slider(key="batch_steps").value == 5  # the typed value is among the slider's steps
    assert app.select_slider(key="input_len_steps").value == 1800
    app.select_slider(key="batch_steps").set_value(12).run()
    assert app.number_input(key="batch").value == 12 and "5" not in app.select_slider(key="batch_steps").options


def test_scenario_comes_from_the_url(deploy):
    at = open_app(model="Qwen3-8B", gpu="NVIDIA L4", weights="int4", kv="fp8", batch="8", input_len="1024")
    expected = estimate(
        deploy(model="qwen3-8b", gpu="l4", weights="int4", kv="fp8", max_model_len=8192),
        Workload(input_len=1024, output_len=512, batch=8),
    )
    assert metrics(at)["TPOT"] == fmt.duration(expected.latency.tpot_s)
    assert at.selectbox(key="model").value == "qwen3-8b"


def test_hand_edited_url_with_bad_values_falls_back(app):
    at = open_app(model="<script>alert(1)</script>", batch="99999999", tp="3", lang="xx")
    assert metrics(at)["Fits"] in ("yes", "no")
    assert at.selectbox(key="model").value == "llama-3.1-8b"


def test_chinese_labels(deploy):
    at = open_app(lang="zh")
    shown = metrics(at)
    assert "吞吐" in shown and "放得下" in shown
    assert at.title[0].value == "大模型推理权衡探索器"


def test_batch_over_the_ceiling_gets_fixes(deploy):
    # 16 requests of 2560 tokens need 5 GiB of KV on an A10 that has 3.69 GiB for it
    # (vLLM 0.33's default utilization 0.92): 11 fit
    app = open_app(batch="16")
    fit = estimate(
        deploy(**DEFAULT), Workload(input_len=2048, output_len=512, batch=16)
    ).kv.max_concurrency_at_request_len
    assert metrics(app)["Fits"] == "no" and fit == 11
    text = " ".join(m.value for m in app.markdown)
    assert "quantize weights to INT4" in text
    assert f"run at most {fit} requests at once" in text
    assert "split the model over 2 GPUs" in text


def test_model_that_cannot_fit_says_so(app):
    # Llama-3.1-405B: 756 GiB of BF16 weights, more than even 8 A10s hold (a 70B model now fits
    # 8 of them: 0.2 GiB of NCCL buffers per GPU over PCIe, not NVLink's 2.1 GiB)
    app.selectbox(key="model").set_value("llama-3.1-405b").run()
    assert not app.exception
    assert metrics(app)["Fits"] == "no"
    assert any("does not fit" in w.value for w in app.warning)
    assert any("No single change" in i.value for i in app.info)


def test_impossible_tensor_parallel_is_a_message_not_a_traceback(app):
    app.selectbox(key="model").set_value("qwen2.5-0.5b")  # 14 attention heads
    app.selectbox(key="tp").set_value(4).run()
    assert not app.exception
    assert any("tp (4) must divide" in shown(e) for e in app.error)
    assert any("4 GPUs cannot split" in w.value for w in app.warning)


def test_request_longer_than_max_model_len_is_a_message(app):
    app.select_slider(key="max_model_len").set_value(2048)
    app.number_input(key="input_len").set_value(4096).run()
    assert not app.exception
    assert any("longer than max_model_len" in shown(e) for e in app.error)


def test_learn_page_substitutes_this_scenarios_values(app):
    app.switch_page("pages/learn_page.py").run()
    latex = " ".join(element.value for element in app.latex)
    # Llama-3.1-8B: 2 x 32 x 8 x 128 x 2 = 131,072 B per token
    assert r"2 \times 32 \times 8 \times 128 \times 2 = 131{,}072" in latex  # {,}: LaTeX's thousands comma
    step, roofline = figures(app)[:2]  # the decode step's terms against the batch, then the roofline
    assert {trace["name"] for trace in step["data"]} >= {"weight reads", "KV reads", "compute", "step time (TPOT)"}
    assert {trace["name"] for trace in roofline["data"]} >= {"prefill", "decode"}


def test_compare_saves_and_overlays_scenarios(app):
    app.switch_page("pages/compare_page.py").run()
    app.button(key="save_scenario").click().run()
    app.number_input(key="batch").set_value(4).run()
    app.button(key="save_scenario").click().run()
    assert not app.exception
    assert len(app.session_state["saved"]) == 2
    table = app.dataframe[0].value
    assert list(table.columns) == ["#1", "#2"]
    curves, memory = figures(app)
    assert len(curves["data"]) == 4 and len(memory["data"]) >= 4  # a curve and a point per scenario
    points = [trace for trace in curves["data"] if trace["name"].endswith("current setting")]
    assert [p["customdata"][0] for p in points] == [8, 4]


def test_catalog_lists_everything_and_imports_a_config(app, catalog):
    app.switch_page("pages/catalog_page.py").run()
    assert len(app.dataframe[0].value) == len(catalog.models)
    assert len(app.dataframe[1].value) == len(catalog.gpus)
    app.text_area(key="catalog_paste").input((DATA / "tiny_llama_config.json").read_text())
    app.text_input(key="catalog_model_name").input("tiny llama")
    app.button(key="catalog_add_model").click().run()
    assert not app.exception
    assert "custom-tiny-llama" in app.session_state["custom_models"]
    assert "tiny llama" in app.selectbox(key="model").options


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"model_type": "llama",', "invalid JSON"),
        (
            json.dumps(
                {
                    "model_type": "llama",
                    "hidden_size": 0,
                    "intermediate_size": 8,
                    "num_hidden_layers": 2,
                    "num_attention_heads": 2,
                    "vocab_size": 8,
                    "max_position_embeddings": 8,
                }
            ),
            "invalid field 'hidden_size'",
        ),
        ('{"model_type": "llama", "num_hidden_layers": 1000000000000}', "invalid field 'num_hidden_layers'"),
        ('{"model_type": "bert"}', "unsupported model_type"),
        ("<b>bold</b>", "invalid JSON"),
    ],
)
def test_bad_config_json_is_a_message_and_state_survives(app, text, message):
    app.number_input(key="batch").set_value(3).run()
    open_form(app, "import")
    app.text_area(key="sidebar_paste").input(text)
    app.button(key="sidebar_add_model").click().run()
    assert not app.exception
    assert any(message in shown(e) for e in app.error)
    assert app.number_input(key="batch").value == 3


def test_imported_model_is_selected_at_once(app):
    config = {
        "model_type": "qwen3",
        "hidden_size": 1024,
        "intermediate_size": 3072,
        "num_hidden_layers": 28,
        "num_attention_heads": 16,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "vocab_size": 151936,
        "max_position_embeddings": 40960,
    }
    open_form(app, "import")
    app.text_area(key="sidebar_paste").input(json.dumps(config))
    app.text_input(key="sidebar_model_name").input("my qwen")
    app.button(key="sidebar_add_model").click().run()
    assert not app.exception
    assert app.selectbox(key="model").value == "custom-my-qwen"
    assert any("Added my qwen" in s.value for s in app.success)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("memory", 0.0, "memory_bytes must be > 0"),
        ("bf16", 0.0, "must be above 0"),
        ("bandwidth", 0.0, "memory_bandwidth must be > 0"),
    ],
)
def test_impossible_custom_gpu_is_a_message(app, field, value, message):
    open_form(app, "gpu")
    app.number_input(key=f"sidebar_gpu_{field}").set_value(value)
    submit_gpu_form(app)
    assert not app.exception
    assert any(message in shown(e) for e in app.error)
    assert app.selectbox(key="gpu").value == "a10"


def test_custom_gpu_is_added_and_selected(app):
    open_form(app, "gpu")
    app.text_input(key="sidebar_gpu_name").input("Lab card")
    app.number_input(key="sidebar_gpu_memory").set_value(40.0)
    submit_gpu_form(app)
    assert not app.exception
    assert app.selectbox(key="gpu").value == "custom-lab-card"
    assert metrics(app)["Fits"] in ("yes", "no")


def test_plan_page_answers_with_cores_verdict(deploy, cli):
    from core.planning.check import check
    from core.planning.report import verdict_sentence
    from core.planning.requirement import Requirement

    at = open_app()
    at.switch_page("pages/plan_page.py").run()
    assert not at.exception
    # defaults: 50 users thinking 30 s, 1500 + 300 tokens, TTFT 1 s, 20 tokens/s per user, on one A10;
    # max_model_len auto: the 1,800-token P95 request rounded up to 2,048, as check sizes it
    code, out, _ = cli(
        "check", "--model", "llama-3.1-8b", "--gpu", "a10", "--users", "50", "--think-time-s", "30",
        "--prompt-len", "1500", "--answer-len", "300", "--ttft-slo-ms", "1000", "--tokens-per-s-per-user", "20",
        "--json",
    )  # fmt: skip
    assert code == 0
    launch = next(c.value for c in at.code if c.value.startswith("vllm serve"))  # after the answer's copy block
    assert launch == json.loads(out)["launch"]["command"]  # one scenario, one launch command
    assert "--max-model-len 2048" in launch
    assert at.code[0].value == json.loads(out)["answer"]  # the answer first, word for word the CLI's
    expected = check(
        deploy(gpu="a10", max_model_len=2048),
        Requirement(
            load="users",
            users=50,
            think_time_s=30.0,
            prompt_len=1500,
            answer_len=300,
            prompt_len_p95=1500,
            answer_len_p95=300,
            ttft_slo_s=1.0,
            tpot_slo_s=0.05,
        ),
    )
    assert at.error[0].value.startswith(verdict_sentence(expected))  # the answer starts with the verdict
    assert launch.startswith("vllm serve meta-llama/Llama-3.1-8B")
    assert len(at.dataframe) >= 2  # checks and fixes
    at.number_input(key="plan_users").set_value(5).run()
    assert not at.exception
    assert at.success[0].value.startswith("Feasible")


@pytest.mark.parametrize("preset", ["chat", "batch", "api"])
def test_plan_presets_fill_the_inputs(preset):
    from core.planning.presets import load_presets

    at = open_app(lang="zh")
    at.switch_page("pages/plan_page.py").run()
    # select by position: AppTest formats labels outside the session, in English
    at.selectbox(key="plan_preset").select_index(["custom", "chat", "batch", "api"].index(preset)).run()
    assert not at.exception
    req = load_presets()[preset]
    assert at.number_input(key="plan_prompt").value == req.prompt_len
    assert at.segmented_control(key="plan_load").value == req.load
    verdicts = [e.value for e in (*at.error, *at.warning, *at.success)]
    assert any(v.startswith(("可行", "临界", "不可行")) for v in verdicts)


def test_plan_load_kind_and_numbers_live_in_the_url():
    at = open_app(load="rate", plan_rate="3.5")
    at.switch_page("pages/plan_page.py").run()
    assert not at.exception
    assert at.segmented_control(key="plan_load").value == "rate"
    assert at.number_input(key="plan_rate").value == 3.5


def test_load_test_page_shows_the_simulators_numbers(deploy):
    from core.serving.load_sweep import summarize
    from core.serving.simulate import simulate
    from core.serving.traffic import Lengths, Traffic

    at = open_app(lt_rate="2.0", lt_count="300")
    at.switch_page("pages/loadtest_page.py").run()
    assert not at.exception
    expected = summarize(
        simulate(
            deploy(gpu="a10", max_model_len=8192),
            Traffic(mode="rate", rate_per_s=2.0),
            300,
            Lengths(mean=1000),
            Lengths(mean=200),
            0,
        )
    )
    shown = metrics(at)
    assert shown["TTFT P99"] == fmt.duration(expected["ttft"]["p99"])
    assert shown["TPOT P50"] == fmt.duration(expected["tpot"]["p50"])
    assert len(figures(at)) == 2
    at.button(key="lt_run_sweep").click().run()
    assert not at.exception
    sweep_chart = figures(at)[2]
    assert any(trace["name"].startswith("knee") for trace in sweep_chart["data"])


def test_load_test_goodput_without_an_slo_says_so_in_both_languages():
    at = open_app(lt_count="100", lt_ttft_ms="0", lt_tpot_ms="0")
    at.switch_page("pages/loadtest_page.py").run()
    assert not at.exception
    assert metrics(at)["Goodput"] == "no SLO set"
    at = open_app(lt_count="100", lt_ttft_ms="0", lt_tpot_ms="0", lang="zh")
    at.switch_page("pages/loadtest_page.py").run()
    assert metrics(at)["达标率"] == "未设 SLO"


def test_load_test_closed_loop_from_the_url():
    at = open_app(traffic="concurrency", lt_clients="4", lt_count="100")
    at.switch_page("pages/loadtest_page.py").run()
    assert not at.exception
    assert at.segmented_control(key="lt_mode").value == "concurrency"


def test_validation_page_and_calibration_from_a_startup_log(deploy):
    from core.memory.budget import gpu_memory
    from core.spec import units

    log = (DATA / "vllm_startup_h100.log").read_text()
    at = open_app(gpu="NVIDIA H100 SXM5 80GB", util="0.95", max_model_len="16384")
    at.switch_page("pages/validation_page.py").run()
    assert not at.exception
    assert len(figures(at)) == 1  # the parity plot
    at.text_area(key="val_log").input(log).run()
    assert not at.exception
    at.button(key="val_apply").click().run()
    assert not at.exception
    # the sidebar now carries the overhead correction, and the session's budget is the logged one
    assert at.session_state["overhead_fix"] != 0
    budget = gpu_memory(at.session_state["scenario"].deployment).kv_budget
    assert budget / units.GiB == pytest.approx(58.11, abs=0.01)


def test_validation_page_rejects_junk(app):
    app.switch_page("pages/validation_page.py").run()
    app.text_area(key="val_bench").input("<script>alert(1)</script>").run()
    assert not app.exception
    assert any("found no benchmark results" in shown(e) for e in app.error)


def test_plan_reports_download_every_section_with_the_restoring_link(monkeypatch):
    """The Plan page's four reports, built on a click, carry the page's link, the inputs in words,
    the limits of the setup and the cheapest GPUs, as the page shows them."""
    from streamlit.delta_generator import DeltaGenerator

    data, original = {}, DeltaGenerator.download_button

    def record(self, label, payload, *args, **kwargs):
        data[kwargs["key"]] = payload
        return original(self, label, payload, *args, **kwargs)

    monkeypatch.setattr(DeltaGenerator, "download_button", record)
    at = open_app(plan_users="60")  # the query string a browser sends once the input is moved
    at.context["url"] = "http://localhost:8501/plan"
    at.switch_page("pages/plan_page.py").run()
    assert not at.exception
    markdown = data["download_md"]()
    report = json.loads(data["download_json"]())
    link = report["report"]["link"]
    assert link.startswith("http://localhost:8501/plan?") and "plan_users=60" in link and link in markdown
    assert "60 users, 30 s think time between requests" in markdown
    assert "Max load that passes" in markdown and "Cheapest catalog GPUs for this load" in markdown
    assert report["solvers"]["cheapest_gpus"] and report["verdict"] in ("feasible", "marginal", "not_feasible")
    assert data["download_csv"]().startswith("kind,name,status") and "<!doctype html>" in data["download_html"]()
