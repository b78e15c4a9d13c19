"""Roofline latency and throughput: hand-derived values and invariants."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.estimate.result import estimate, latency_and_throughput
from core.estimate.sweep import sweep
from core.memory.weights import weight_bytes
from core.spec import units
from core.spec.deployment import Workload
from core.timing.comm import comm_seconds, logits_gather_seconds
from core.timing.phases import decode_step_time, prefill_time
from core.timing.work import attended_pairs, experts_touched_fraction


def test_attended_pairs_by_hand():
    # 3 new tokens after 2 cached: they see 3, 4 and 5 keys = 12 pairs
    assert attended_pairs(3, 2) == 12
    # with a window of 4: 3, 4, 4 keys = 11 pairs
    assert attended_pairs(3, 2, window=4) == 11
    # a fresh 1000-token prompt: 1000 x 1001 / 2 pairs
    assert attended_pairs(1000, 0) == 500_500


def test_decode_at_batch_1_is_weight_read_over_bandwidth(deploy):
    dep = deploy(model="llama-3.1-8b", gpu="h100-sxm")
    step = decode_step_time(dep, 1, 1024)
    eff = dep.efficiency
    w = weight_bytes(dep.model, dep.weights)
    # bytes: every weight but the embedding table (16.06 GB - 1.05 GB) plus 1025 tokens of 128 KiB KV
    bytes_read = w.total - w.embedding + 1025 * 128 * units.KiB
    # plus the step's fixed cost, 32 layers' launches and one sequence's host work
    fixed = eff.step_overhead_s + 32 * eff.layer_overhead_s
    expected = bytes_read / (3350 * units.GB * eff.bandwidth) + fixed + eff.per_sequence_overhead_s
    assert step.bound == "memory"
    assert step.seconds == pytest.approx(expected)


def test_prefill_is_compute_bound_and_attention_grows_quadratically(deploy):
    dep = deploy(model="llama-3.1-8b", gpu="h100-sxm", max_model_len=32768)
    short, long = prefill_time(dep, 1, 4096), prefill_time(dep, 1, 16384)
    assert short.bound == "compute" and long.bound == "compute"
    # 4x the tokens costs more than 4x the time: the attention term is quadratic
    assert long.compute_s > 4 * short.compute_s


def test_moe_decode_reads_only_routed_experts(deploy):
    moe = deploy(model="qwen3-30b-a3b", gpu="h100-sxm")
    # one token touches 8 of 128 experts per layer; a big batch touches nearly all of them
    assert experts_touched_fraction(moe.model, 1) == pytest.approx(8 / 128)
    assert experts_touched_fraction(moe.model, 512) == pytest.approx(1.0, abs=1e-9)
    dense = deploy(model="qwen3-32b", gpu="h100-sxm")
    # 30B total but ~3B active: batch-1 decode reads several times fewer bytes than a dense 32B, so its
    # kernels take a quarter of the time; the fixed costs (steps, layers, 48 MoE layers' routing) come on top
    moe_step, dense_step = decode_step_time(moe, 1, 1024), decode_step_time(dense, 1, 1024)
    moe_layers = moe.model.num_moe_layers * moe.efficiency.moe_layer_overhead_s
    assert float(moe_step.kernel_seconds) - moe_layers < float(dense_step.kernel_seconds) / 4
    assert moe_step.seconds < dense_step.seconds / 3


def test_tensor_parallel_adds_allreduce_time_and_pcie_is_slower(deploy):
    nvlink = deploy(model="llama-3.1-70b", gpu="h100-sxm", tp=4)
    pcie = deploy(model="llama-3.1-70b", gpu="h100-pcie", tp=4)
    assert comm_seconds(deploy(), 4096, 1) == 0
    eff = nvlink.efficiency
    # 2 x 80 layers + 1 all-reduces of 4096 x 8192 x 2 B, ring factor 2 x 3 / 4, over 450 GB/s x link eff
    message = 4096 * 8192 * 2
    expected = 161 * (eff.allreduce_latency_s + 1.5 * message / (450 * units.GB * eff.link))
    assert comm_seconds(nvlink, 4096, 1) == pytest.approx(expected)
    assert comm_seconds(pcie, 4096, 1) > 5 * comm_seconds(nvlink, 4096, 1)


def test_e2e_is_ttft_plus_remaining_tokens(deploy):
    e = estimate(deploy(), Workload(input_len=512, output_len=100, batch=4))
    assert e.latency.e2e_s == pytest.approx(e.latency.ttft_s + 99 * e.latency.tpot_s)
    assert e.throughput.output_tokens_per_s == pytest.approx(4 * 100 / e.latency.e2e_s)


@pytest.mark.parametrize("model", ["llama-3.1-8b", "gemma-2-9b", "qwen3-30b-a3b"])
def test_sweep_matches_single_estimates(deploy, model):
    dep = deploy(model=model, max_model_len=8192)
    grid = sweep(dep, [1, 8, 64, 256], [128, 2048], 256)
    single = estimate(dep, Workload(input_len=2048, output_len=256, batch=64))
    assert grid.tpot_s[1, 2] == pytest.approx(single.latency.tpot_s)
    assert grid.ttft_s[1, 2] == pytest.approx(single.latency.ttft_s)
    assert grid.output_tokens_per_s[1, 2] == pytest.approx(single.throughput.output_tokens_per_s)
    assert grid.kv_budget == pytest.approx(single.memory.kv_budget)
    assert grid.kv_in_use[1, 2] == pytest.approx(single.memory.kv_in_use)
    assert grid.fits[1, 2] == single.fits
    assert grid.max_concurrency[1] == single.kv.max_concurrency_at_request_len
    assert grid.decode_bound[1, 2] == single.bound_decode


MODELS = ["llama-3.1-8b", "qwen3-30b-a3b", "gemma-2-9b", "deepseek-v2-lite", "phi-3-mini"]
GPUS = ["a10", "l4", "a100-80gb", "h100-sxm", "rtx-4090", "mi300x"]


@settings(max_examples=60, deadline=None)
@given(
    model=st.sampled_from(MODELS),
    gpu=st.sampled_from(GPUS),
    tp=st.sampled_from([1, 2, 4]),
    input_len=st.integers(1, 2000),
    output_len=st.integers(1, 2000),
)
def test_tpot_and_throughput_monotone_in_batch(deploy, model, gpu, tp, input_len, output_len):
    dep = deploy(model=model, gpu=gpu, tp=tp, max_model_len=4096)
    batches = np.arange(1, 1025)
    lat, tput = latency_and_throughput(dep, batches, input_len, output_len)
    # TPOT never falls as the batch grows
    assert np.all(np.diff(lat.tpot_s) >= 0)
    # throughput never falls: it rises, then flattens when compute binds
    for rate in (tput.decode_tokens_per_s, tput.output_tokens_per_s):
        assert np.all(np.diff(rate) >= -1e-9 * rate[1:])
    assert np.all(np.isfinite(lat.e2e_s)) and np.all(lat.e2e_s > 0)


def test_tensor_parallel_gathers_the_logits_of_every_scheduled_sequence(deploy):
    # vLLM V1 all-gathers the vocab-parallel LM head's bf16 logits every step: each GPU receives the
    # other (tp - 1) / tp of rows x vocab x 2 B; Qwen-2.5's 152K vocab at 1000 sequences is 0.30 GB a step
    dep = deploy(model="llama-3.1-70b", gpu="h100-sxm", tp=4)
    eff, vocab = dep.efficiency, dep.model.vocab_size
    gather = logits_gather_seconds(dep, 1000, 1)
    assert gather == pytest.approx(eff.allreduce_latency_s + 0.75 * 1000 * vocab * 2 / (450 * units.GB * eff.link))
    assert comm_seconds(dep, 1000, 1, 1000) == pytest.approx(comm_seconds(dep, 1000, 1) + gather)
    assert logits_gather_seconds(deploy(), 1000, 1) == 0  # one GPU: nothing to gather
    # counted where the all-reduces are: a decode step and a prefill (one row per scheduled sequence and step)
    step = decode_step_time(dep, 1000, 1000)
    assert float(step.gather_s) == pytest.approx(gather)
    assert float(step.comm_s) == pytest.approx(float(comm_seconds(dep, 1000, 1)) + gather)
    prefill = prefill_time(dep, 4, 1024)
    assert float(prefill.gather_s) > 0 and float(prefill.comm_s) > float(prefill.gather_s)
