"""Serving scope in the estimate: B requests arriving together against B closed-loop clients, and the
batch the engine admits (core.estimate.scope)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.estimate.result import estimate, latency_and_throughput
from core.serving.simulate import simulate
from core.serving.traffic import Lengths, Traffic
from core.spec.deployment import Workload


def test_a_batch_beyond_the_kv_cache_runs_in_rounds(deploy):
    # Llama-3.1-8B on an A10: 11 requests of 2048 + 512 tokens fit; 64 arrive together -> 6 rounds
    dep = deploy(gpu="a10")
    e = estimate(dep, Workload(input_len=2048, output_len=512, batch=64), enforce_context=False)
    assert e.kv.max_concurrency_at_request_len == 11 and e.running_batch == 11
    one_round, _ = latency_and_throughput(dep, 11, 2048, 512)
    assert e.latency.tpot_s == pytest.approx(float(one_round.tpot_s))  # TPOT with the 11 that run
    assert e.latency.ttft_s == pytest.approx(5 * float(one_round.e2e_s) + float(one_round.ttft_s))
    assert e.throughput.output_tokens_per_s == pytest.approx(64 * 512 / e.latency.e2e_s)
    assert any(w.code == "batch_runs_in_rounds" for w in e.warnings)


def test_max_num_seqs_caps_the_running_batch(deploy):
    dep = deploy(gpu="h100-sxm", max_num_seqs=16)
    e = estimate(dep, Workload(input_len=512, output_len=128, batch=40))
    assert e.running_batch == 16
    assert math.ceil(40 / 16) == 3 and e.latency.ttft_s > 2 * e.closed_loop.tpot_s * 127


def test_a_batch_that_fits_is_unchanged(deploy):
    dep = deploy(gpu="h100-sxm")
    e = estimate(dep, Workload(input_len=1024, output_len=256, batch=32))
    latency, throughput = latency_and_throughput(dep, 32, 1024, 256)
    assert e.running_batch == 32 and e.latency.ttft_s == pytest.approx(float(latency.ttft_s))
    assert e.throughput.output_tokens_per_s == pytest.approx(float(throughput.output_tokens_per_s))
    assert not any(w.code == "batch_runs_in_rounds" for w in e.warnings)


@pytest.mark.parametrize(
    ("model", "gpu", "tp", "clients", "prompt", "answer"),
    [
        ("llama-3.1-8b", "h100-sxm", 1, 32, 1024, 256),
        ("llama-3.1-8b", "a10", 1, 8, 2048, 256),
        ("qwen3-8b", "l40s", 1, 64, 512, 512),
        ("llama-3.1-70b", "h100-sxm", 4, 16, 2000, 200),
    ],
)
def test_closed_loop_steady_state_agrees_with_the_simulator(deploy, model, gpu, tp, clients, prompt, answer):
    # lengths spread +-30 % so the clients do not stay in lock-step (as they do with identical requests)
    dep = deploy(model=model, gpu=gpu, tp=tp)
    loop = estimate(dep, Workload(input_len=prompt, output_len=answer, batch=clients)).closed_loop
    spread = {"distribution": "uniform", "spread": 0.3}
    sim = simulate(
        dep,
        Traffic(mode="concurrency", concurrency=clients),
        max(20 * clients, 400),
        Lengths(mean=prompt, **spread),
        Lengths(mean=answer, **spread),
    )
    assert loop.stable
    assert loop.ttft_s == pytest.approx(float(np.median(sim.ttft)), rel=0.25)
    assert loop.tpot_s == pytest.approx(float(np.median(sim.tpot)), rel=0.15)
    assert loop.output_tokens_per_s == pytest.approx(sim.output_tokens_per_s, rel=0.10)
