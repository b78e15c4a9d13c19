"""The benchmark that checks a plan and its result read back (issue 31, items 2 and 3): the command's
flags are the plan's load, the predictions are the simulation of exactly that benchmark, each tool's
result file (written by the project in the tool's documented format, tests/fixtures/benchcheck/) reads
into the same record, calibration moves the prediction onto the measured medians, and garbage gets
one line naming what was expected."""

from __future__ import annotations

import dataclasses
import json
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core.benchcheck.commands import bench_check, note_text, range_ratio
from core.benchcheck.compare import RunError, calibrate_run, compare
from core.benchcheck.result_files import MAX_FILE_BYTES, BenchFileError, read_result
from core.estimate.likely import tier_band
from core.planning.check import check
from core.planning.requirement import Requirement
from core.serving.load_sweep import summarize
from core.serving.simulate import simulate
from core.serving.traffic import Lengths, Traffic
from core.spec import units
from core.spec.release import Release
from core.timing.kernel_speed import kernel_speed
from core.validation.calibrate import SPEED_TOLERANCE, CalibrationError

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "benchcheck"
IN_FLIGHT = Requirement(load="in_flight", in_flight=16, prompt_len=1000, answer_len=200, prompt_len_p95=1450)
RATE = Requirement(load="rate", rate_per_s=6.0, replicas=2, prompt_len=1000, answer_len=200)


def _flags(command: str) -> dict[str, str | bool]:
    words, flags = shlex.split(command), {}
    for i, word in enumerate(words):
        if word.startswith("--"):
            following = words[i + 1] if i + 1 < len(words) else ""
            flags[word] = following if following and not following.startswith("--") else True
    return flags


@pytest.fixture(scope="module")
def h100(deploy):
    return deploy(gpu="h100-sxm", max_model_len=2048)


def test_the_vllm_command_sends_the_plans_load(h100):
    plan = check(h100, IN_FLIGHT)
    found = bench_check(plan)
    flags = _flags(found.commands["vllm"])
    assert found.commands["vllm"].startswith("vllm bench serve ")
    assert flags["--dataset-name"] == "random"
    assert int(flags["--random-input-len"]) == 1000 and int(flags["--random-output-len"]) == 200
    # P95 1450 = 1000 x (1 + 0.9 r): r = 0.5
    assert float(flags["--random-range-ratio"]) == pytest.approx(0.5)
    assert int(flags["--max-concurrency"]) == round(plan.in_flight) == 16
    assert flags["--request-rate"] == "inf"
    # 10 per client is 160, below the 200 the command never goes under
    assert int(flags["--num-prompts"]) == 200 and int(flags["--num-warmups"]) == 16
    assert flags["--save-result"] is True and flags["--ignore-eos"] is True
    assert flags["--model"] == h100.model.hf_id
    aiperf, guidellm = _flags(found.commands["aiperf"]), _flags(found.commands["guidellm"])
    assert int(aiperf["--concurrency"]) == 16 and int(aiperf["--request-count"]) == 200
    assert guidellm["--rate-type"] == "concurrent" and int(guidellm["--rate"]) == 16
    assert "prompt_tokens=1000,output_tokens=200" in guidellm["--data"]


def test_a_rate_load_is_split_over_the_replicas(h100):
    found = bench_check(check(h100, RATE))
    flags = _flags(found.commands["vllm"])
    assert float(flags["--request-rate"]) == 3.0 and "--max-concurrency" not in flags
    assert int(flags["--num-prompts"]) == 3 * 120  # two minutes of arrivals
    assert _flags(found.commands["guidellm"])["--rate-type"] == "poisson"
    assert float(_flags(found.commands["aiperf"])["--request-rate"]) == 3.0
    assert ("one_replica", {"replicas": "2"}) in found.notes
    assert "one replica's endpoint" in note_text(found.notes[0]) and "一个副本" in note_text(found.notes[0], "zh")


def test_an_old_vllm_gets_benchmark_serving_py_without_warmups_or_a_range(h100):
    old = dataclasses.replace(h100, engine=dataclasses.replace(h100.engine, release=Release("vllm", (0, 8, 0))))
    found = bench_check(check(old, IN_FLIGHT))
    flags = _flags(found.commands["vllm"])
    assert found.commands["vllm"].startswith("python benchmarks/benchmark_serving.py ")
    assert "--num-warmups" not in flags and float(flags["--random-range-ratio"]) == 0.0
    assert found.load.range_ratio == 0.0 and ("no_warmups", {"release": "vLLM 0.8.0"}) in found.notes


def test_range_ratio_from_the_p95():
    assert range_ratio(1000, 1000) == 0.0
    assert range_ratio(1000, 1450) == pytest.approx(0.5)
    assert range_ratio(1000, 5000) == 0.9  # capped: vLLM takes [0, 1)


def test_the_predictions_are_the_simulation_of_that_benchmark(h100):
    found = bench_check(check(h100, IN_FLIGHT))
    load = found.load
    prompts = Lengths(mean=1000, distribution="uniform", spread=0.5)
    answers = Lengths(mean=200, distribution="uniform", spread=0.5)
    result = simulate(h100, Traffic(mode="concurrency", concurrency=16), load.num_prompts, prompts, answers, 0)
    stats = summarize(result)
    values = found.predicted.values
    assert values["ttft_ms"] == pytest.approx(stats["ttft"]["p50"] / units.MS)
    assert values["ttft_p99_ms"] == pytest.approx(stats["ttft"]["p99"] / units.MS)
    assert values["tpot_ms"] == pytest.approx(stats["tpot"]["p50"] / units.MS)
    assert values["itl_ms"] == pytest.approx(float(np.median(result.itl)) / units.MS)
    assert values["output_tokens_per_s"] == pytest.approx(result.output_tokens_per_s)
    tier = kernel_speed(h100).tier
    for metric in ("ttft_ms", "tpot_ms", "output_tokens_per_s"):
        band = tier_band(values[metric], metric, tier, "hbm")
        assert found.predicted.bands[metric] == pytest.approx((band.low, band.high))
        assert band.low < values[metric] < band.high
    assert found.predicted.bands["ttft_p99_ms"] is None  # the validation scores no P99 by tier


@pytest.mark.parametrize(
    ("name", "tool", "ttft", "tpot", "concurrency", "rate"),
    [
        ("vllm_bench_serve.json", "vllm bench serve", 348.15, 12.17, 16, None),
        ("guidellm_benchmarks.json", "guidellm", 352.4, 12.21, 16, None),
        ("aiperf_profile_export.json", "aiperf", 68.35, 12.98, None, 4.0),
    ],
)
def test_each_tools_file_reads_into_one_record(name, tool, ttft, tpot, concurrency, rate):
    run = read_result((FIXTURES / name).read_bytes())
    assert (run.tool, run.ttft_ms, run.tpot_ms, run.concurrency, run.configured_rate) == (
        tool,
        ttft,
        tpot,
        concurrency,
        rate,
    )
    assert run.prompts == 200 and run.mean_input_len == 1000 and run.mean_output_len == 200
    assert run.ttft_p99_ms > run.ttft_ms and run.output_tokens_per_s > 0 and run.itl_ms > 0


def test_an_aiperf_time_in_seconds_is_converted():
    data = json.loads((FIXTURES / "aiperf_profile_export.json").read_text())
    data["time_to_first_token"] = {
        k: v / 1000 if isinstance(v, float) else v for k, v in data["time_to_first_token"].items()
    }
    data["time_to_first_token"]["unit"] = "s"
    assert read_result(json.dumps(data)).ttft_ms == pytest.approx(68.35)


@pytest.mark.parametrize("name", ["vllm_bench_serve.json", "guidellm_benchmarks.json", "aiperf_profile_export.json"])
def test_calibration_moves_the_prediction_onto_the_measured_medians(deploy, name):
    dep = deploy(gpu="h100-sxm", max_model_len=2048)
    run = read_result((FIXTURES / name).read_text())
    before = {r.metric: r for r in compare(dep, run).rows}
    assert abs(before["tpot_ms"].ratio - 1) > 0.15  # the default efficiencies are 20-25 % fast here
    fit = calibrate_run(dep, run)
    # what the sidebar takes: two decimals
    rounded = dataclasses.replace(
        fit.calibration, compute=round(fit.calibration.compute, 2), bandwidth=round(fit.calibration.bandwidth, 2)
    )
    after = {r.metric: r for r in compare(rounded.apply(dep), run).rows}
    for metric in ("ttft_ms", "tpot_ms"):
        assert abs(after[metric].ratio - 1) <= SPEED_TOLERANCE, (metric, after[metric].ratio)
    assert fit.calibration.source == f"{run.tool} result"


def test_a_run_no_efficiency_reaches_is_refused_in_one_line(h100):
    data = json.loads((FIXTURES / "vllm_bench_serve.json").read_text())
    data["median_tpot_ms"] = 0.2  # 5,000 tokens/s per user on an 8B model: no bandwidth gives that
    with pytest.raises(CalibrationError) as err:
        calibrate_run(h100, read_result(json.dumps(data)))
    assert "\n" not in str(err.value) and "Median TPOT (ms)" in str(err.value)


GARBAGE = {
    "empty": (b"", "empty"),
    "binary": (bytes(range(256)) * 4, "not_text"),
    "startup log": (b"INFO 12-04 [gpu_worker.py:227] Available KV cache memory: 52.3 GiB\n", "not_json"),
    "a calibration file": (b'{"format": "llm-tradeoff-calibration", "version": 1, "compute": 0.5}', "not_ours"),
    "a config.json": (b'{"architectures": ["LlamaForCausalLM"], "hidden_size": 4096}', "not_ours"),
    "10 MB": (b'{"median_ttft_ms": 1, "pad": "' + b"x" * 10_000_000 + b'"}', "too_large"),
    "deep nesting": (b"[" * 50_000 + b"]" * 50_000, "not_json"),
    "truncated": ((FIXTURES / "vllm_bench_serve.json").read_bytes()[:300], "not_json"),
    "a vllm result without its medians": (b'{"completed": 10, "request_throughput": 1.0}', "missing_key"),
    "a negative time": (b'{"median_ttft_ms": -3, "completed": 1}', "bad_value"),
    "a huge integer": (b'{"median_ttft_ms": ' + b"9" * 5000 + b"}", "not_json"),
    "an empty guidellm report": (b'{"benchmarks": []}', "no_benchmarks"),
}


@pytest.mark.parametrize("case", GARBAGE)
def test_garbage_gets_one_line_naming_what_was_expected(case):
    content, code = GARBAGE[case]
    with pytest.raises(BenchFileError) as err:
        read_result(content)
    assert err.value.code == code
    for lang in ("en", "zh"):
        assert "\n" not in err.value.text(lang) and len(err.value.text(lang)) < 300
    if code in ("empty", "not_text", "not_ours"):
        assert "vllm bench serve" in str(err.value)


def test_the_file_cap_holds_a_real_summary():
    assert max(len(p.read_bytes()) for p in FIXTURES.glob("*.json")) * 50 < MAX_FILE_BYTES


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "core", *args], capture_output=True, text=True, cwd=ROOT, timeout=120, check=False
    )


def test_cli_benchmark_and_readback_calibrate():
    deployment = ("--model", "llama-3.1-8b", "--gpu", "h100-sxm")
    out = _cli("benchmark", *deployment, "--in-flight", "16", "--prompt-len", "1000", "--answer-len", "200", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert set(data["commands"]) == {"vllm", "guidellm", "aiperf"} and data["load"]["concurrency"] == 16
    assert data["bands"]["tpot_ms"][0] < data["predicted"]["tpot_ms"] < data["bands"]["tpot_ms"][1]
    fixture = str(FIXTURES / "vllm_bench_serve.json")
    out = _cli("readback", fixture, *deployment, "--calibrate", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    measured = {row["metric"]: row for row in data["calibration"]["comparison"]}
    assert abs(measured["tpot_ms"]["ratio"] - 1) <= SPEED_TOLERANCE
    assert data["calibration"]["verdict_after"] in ("feasible", "marginal", "not_feasible")
    text = _cli("readback", fixture, *deployment)
    assert text.returncode == 0 and "median TTFT [ms]" in text.stdout


def test_cli_garbage_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "startup.log"
    bad.write_text("INFO Available KV cache memory: 52.3 GiB\n")
    out = _cli("readback", str(bad), "--model", "llama-3.1-8b", "--gpu", "h100-sxm")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("error: FILE: the result file is not JSON")


def test_a_plan_that_does_not_hold_its_load_gets_commands_and_no_prediction(deploy):
    # 50 users of 1,500 + 9,000 tokens on Gemma-2-27B on one H100: the KV cache holds a few of them;
    # simulating the thrash took 100+ s, and measuring it says nothing the failed check does not
    dep = deploy(model="gemma-2-27b", gpu="h100-sxm", max_model_len=8192)
    found = bench_check(check(dep, Requirement(prompt_len=1500, answer_len=9000)))
    assert found.predicted is None and ("not_held", {}) in found.notes
    assert found.commands["vllm"].startswith("vllm bench serve")


def test_a_run_the_kv_cache_cannot_hold_is_refused_before_the_replay(h100):
    data = json.loads((FIXTURES / "vllm_bench_serve.json").read_text())
    data["max_concurrency"] = 5000
    with pytest.raises(RunError) as err:
        compare(h100, read_result(json.dumps(data)))
    assert "KV cache holds" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_report_section_carries_commands_predictions_and_the_comparison(h100, lang):
    from core.benchcheck.report import benchmark_section
    from core.messages import message

    found = bench_check(check(h100, IN_FLIGHT))
    comparison = compare(h100, read_result((FIXTURES / "vllm_bench_serve.json").read_text()))
    title, blocks = benchmark_section(found, lang, comparison)
    assert title == message("benchcheck.ui_title", lang)
    codes = [b.items[0] for b in blocks if b.kind == "code"]
    assert codes == [found.commands[tool] for tool in ("vllm", "guidellm", "aiperf")]
    predicted, compared = [b for b in blocks if b.kind == "table"]
    assert len(predicted.items) == len(found.predicted.values) and len(compared.header) == 5
    assert compared.items[0][2] == f"{comparison.rows[0].measured:,.4g}"
