"""Log and benchmark parsers on real excerpts; the calibration recovers known factors."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from core.memory.budget import gpu_memory
from core.spec import units
from core.spec.release import parse_release
from core.timing.steady_state import steady_state
from core.validation.calibrate import Calibration, calibrate_memory, calibrate_speed
from core.validation.log_parse import BenchmarkResult, LogError, parse_benchmark, parse_startup_log

DATA = Path(__file__).resolve().parent / "data"


def test_parses_a_vllm_v1_startup_log():
    log = parse_startup_log((DATA / "vllm_startup_h100.log").read_text())
    assert log.values == {
        "weights_gib": 14.99,
        "kv_cache_gib": 58.11,
        "kv_tokens": 476_016,
        "max_model_len": 16_384,
        "max_concurrency": 29.05,
        "total_gib": 79.19,
        "activation_gib": 1.89,
        "non_torch_gib": 0.25,
        "utilization": 0.95,
    }


def test_parses_v0_lines():
    text = "INFO worker.py:241] Loading model weights took 14.9888 GB\nINFO executor_base.py:72] # GPU blocks: 1381\n"
    assert parse_startup_log(text).values == {"weights_gib": 14.9888, "gpu_blocks": 1381}


def test_parses_a_benchmark_result():
    result = parse_benchmark((DATA / "vllm_bench_serve.txt").read_text())
    assert result.values["concurrency"] == 1 and result.values["tpot_ms_median"] == 15.15
    assert result.values["ttft_ms_median"] == 433.09 and result.values["output_tokens_per_s"] == 53.86
    assert result.input_len == 540.5 and result.output_len == 150


@pytest.mark.parametrize("text", ["", "hello world", "<script>alert(1)</script>", "Mean TTFT (ms):"])
def test_text_without_the_lines_is_a_clear_error(text):
    with pytest.raises(LogError, match="found no"):
        parse_startup_log(text)
    with pytest.raises(LogError, match="found no"):
        parse_benchmark(text)


def test_memory_calibration_reproduces_the_logged_budget(deploy):
    dep = deploy(gpu="h100-sxm", gpu_memory_utilization=0.95, max_model_len=16384)
    log = parse_startup_log((DATA / "vllm_startup_h100.log").read_text())
    fit = calibrate_memory(dep, log)
    assert abs(fit.after["kv_cache"]) < 1e-9
    assert gpu_memory(fit.calibration.apply(dep)).kv_budget == pytest.approx(58.11 * units.GiB)


def test_speed_calibration_recovers_known_efficiencies(deploy):
    # synthetic measurement made with compute 0.37 and bandwidth 0.61: the fit must find them again
    dep = deploy(gpu="a100-80gb", max_model_len=4096)
    efficiency = dataclasses.replace(dep.efficiency, compute=0.37, bandwidth=0.61)  # other terms as the default
    truth = dataclasses.replace(dep, engine=dataclasses.replace(dep.engine, efficiency=efficiency))
    state = steady_state(truth, 32.0, 1024, 128)
    bench = BenchmarkResult(
        values={
            "completed": 100,
            "input_tokens": 102_400,
            "output_tokens": 12_800,
            "concurrency": 32,
            "ttft_ms_median": state.ttft_s / units.MS,
            "tpot_ms_median": state.tpot_s / units.MS,
        }
    )
    fit = calibrate_speed(dep, bench)
    assert fit.calibration.bandwidth == pytest.approx(0.61, rel=0.01)
    assert fit.calibration.compute == pytest.approx(0.37, rel=0.02)
    assert abs(fit.after["tpot"]) < 0.005 and abs(fit.after["ttft"]) < 0.01


def test_calibration_round_trips_through_json_and_rejects_junk():
    calibration = Calibration(compute=0.4, bandwidth=0.7, overhead_correction_bytes=1e8, source="test")
    assert Calibration.from_json(calibration.to_json()) == calibration
    for junk, message in (
        ("{", "not JSON"),
        ("[1]", "not a calibration"),
        (
            '{"format": "llm-tradeoff-calibration", "compute": 7}',
            "compute efficiency is 7, not a number from 0.05 to 1",
        ),  # the sidebar's efficiency inputs take 0.05-1
    ):
        with pytest.raises(ValueError, match=message):
            Calibration.from_json(junk)


def test_a_hybrid_log_checks_the_forced_block_size(deploy):
    """vLLM's start-up lines for a hybrid, in their wording in 0.11-0.33 (HybridAttentionMambaModelConfig),
    with the figures worked by hand for Qwen3-Next at tp 2 (a constructed log, not a captured one)."""
    text = (
        "INFO [config.py:376] Setting attention block size to 544 tokens to ensure that attention page size "
        "is >= mamba page size.\n"
        "INFO [config.py:397] Padding mamba page size by 1.49% to ensure that mamba page size and attention "
        "page size are exactly equal.\n"
        "INFO [gpu_worker.py:298] Available KV cache memory: 40.00 GiB\n"
    )
    log = parse_startup_log(text)
    assert log.values["attention_block_size"] == 544 and log.values["mamba_padding_pct"] == 1.49
    # 0.32: the 16-token alignment (0.33 aligns Gated DeltaNet to 64 tokens on SM90)
    dep = deploy("qwen3-next-80b-a3b", "h200", tp=2, max_model_len=32768, release=parse_release("vllm", "0.32.0"))
    fit = calibrate_memory(dep, log)
    assert fit.before["block_size"] == 0.0  # 544 = 16 x ceil(548,864 / (16 x 1,024))
