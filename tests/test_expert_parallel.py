"""Data-parallel attention with expert parallelism (dp > 1): refused for dense models, weights and
KV per GPU, the all-to-all, a step's work, the lockstep steady state and the launch commands, each
against a figure worked by hand (DeepSeek-V3 in FP8 on H200s unless named)."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from core.estimate.result import estimate
from core.memory.budget import gpu_memory
from core.memory.kv import kv_bytes_per_token
from core.memory.weights import expert_share_per_gpu, weight_bytes, weight_bytes_per_gpu
from core.planning.check import check
from core.planning.launch import serve_command
from core.planning.requirement import Requirement
from core.spec.deployment import Workload
from core.spec.engine import Parallelism
from core.spec.release import parse_release
from core.timing.comm import all_to_all_bytes, all_to_all_seconds, comm_seconds
from core.timing.phases import decode_step_time, prefill_time
from core.timing.steady_state import lockstep_e2e, steady_state

TP8, DP8 = Parallelism(tp=8), Parallelism(tp=1, dp=8)
ROUTED_PARAMS = 58 * 256 * 3 * 7168 * 2048  # MoE layers x experts x (gate, up, down) x hidden x expert width


@pytest.fixture
def v3(deploy):
    """DeepSeek-V3 (FP8 checkpoint, BF16 KV) on H200s with a given layout."""

    def make(par: Parallelism, **engine):
        return dataclasses.replace(deploy(model="deepseek-v3", gpu="h200", **engine), parallel=par)

    return make


def test_dp_is_refused_for_a_dense_model(deploy, cli):
    """Data-parallel attention exists to split routed experts over every GPU; a dense model has
    none, so dp > 1 is refused with the reason (run replicas instead)."""
    dense = dataclasses.replace(deploy(), parallel=Parallelism(tp=1, dp=2))
    problem = dense.parallel.data_parallel_error(dense.model)
    assert problem is not None and "no routed experts" in problem and "replicas" in problem
    with pytest.raises(ValueError, match="no routed experts"):
        weight_bytes_per_gpu(dense.model, dense.weights, dense.parallel)
    with pytest.raises(ValueError, match="no routed experts"):
        estimate(dense, Workload())
    code, _, err = cli("estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--dp", "2")
    assert code == 2 and "--dp" in err and "no routed experts" in err
    assert Parallelism(tp=8, dp=2).data_parallel_error(deploy(model="mixtral-8x7b").model) is not None  # EP 16 > 8
    # the simulator runs one rank with 1/dp of the traffic and says so; the check counts requests per rank
    code, out, _ = cli(
        "simulate",
        "--model",
        "deepseek-v3",
        "--gpu",
        "h200",
        "--dp",
        "8",
        "--concurrency",
        "16",
        "--num-requests",
        "64",
    )
    assert code == 0 and "one rank is simulated with 1/8 of the traffic (8 requests)" in out
    code, out, _ = cli("check", "--model", "deepseek-v3", "--gpu", "h200", "--dp", "8", "--users", "10", "--json")
    assert code == 0 and "--data-parallel-size 8" in json.loads(out)["launch"]["command"]
    code, out, _ = cli("estimate", "--model", "deepseek-v3", "--gpu", "h200", "--dp", "8", "--json")
    assert code == 0 and json.loads(out)["num_gpus"] == 8 and json.loads(out)["memory_per_gpu"]["weights_gib"] > 93


def test_dp_one_is_the_default_and_the_identity():
    par = Parallelism(tp=4, pp=2)
    assert par.dp == 1 and par.num_gpus == 8 and par.expert_parallel == 1
    batch = np.array([0.5, 3.0, 100.0])
    assert par.rank_sequences(batch) is batch  # the dp = 1 code paths see the very same numbers
    assert Parallelism(tp=2, dp=4).num_gpus == 8 and Parallelism(tp=2, dp=4).expert_parallel == 8
    # the busiest rank: an even split, but one request is not split (B = 1 runs on one rank)
    assert list(Parallelism(dp=8).rank_sequences(np.array([0.5, 1.0, 4.0, 8.0, 256.0]))) == [0.5, 1, 1, 1, 32]


def test_deepseek_v3_weights_per_gpu_tp8_against_dp8(v3):
    """Routed experts: 58 MoE layers x 256 experts x 3 x 7168 x 2048 = 653.909 G parameters, 1 B
    each in FP8; all weights 672.987 GB. tp 8 holds 672.987 / 8 = 84.123 GB per GPU; dp 8 x tp 1
    (EP 8) holds the 19.078 GB of non-expert weights whole plus 653.909 / 8 = 81.739 GB of
    experts = 100.817 GB: 16.69 GB more, the attention, dense and shared-expert weights copied
    on every rank."""
    dep = v3(TP8)
    w = weight_bytes(dep.model, dep.weights)
    assert w.routed_experts == ROUTED_PARAMS * 1.0
    assert w.total == pytest.approx(672.987e9, rel=1e-6)
    assert weight_bytes_per_gpu(dep.model, dep.weights, TP8) == pytest.approx(84.123e9, rel=1e-5)
    assert weight_bytes_per_gpu(dep.model, dep.weights, DP8) == pytest.approx(100.817e9, rel=1e-5)
    assert weight_bytes_per_gpu(dep.model, dep.weights, DP8) == pytest.approx(
        (w.total - w.routed_experts) + w.routed_experts / 8
    )
    assert expert_share_per_gpu(dep.model, DP8) == 32 / 256  # 256 experts over 8 GPUs: 32 each
    # tp 2 x dp 4: non-expert / 2 + experts / 8
    assert weight_bytes_per_gpu(dep.model, dep.weights, Parallelism(tp=2, dp=4)) == pytest.approx(
        (w.total - w.routed_experts) / 2 + w.routed_experts / 8
    )


def test_the_mla_latent_is_held_once_per_rank_not_per_gpu(v3):
    """MLA keeps one latent of 512 + 64 values per token and layer, not split by tp: 61 x 576 x 2 B
    = 70,272 B per token on every GPU of a tp 8 replica, which therefore holds the KV of each of its
    requests 8 times. dp 8 ranks each hold their own requests: a 5,000-token request takes 5,008 x
    70,272 = 351.9 MB wherever it runs, tp 8's 48.46 GB budget holds floor(137.7) = 137 of them,
    dp 8's 31.77 GB (16.69 GB of weights less) holds floor(90.3) = 90 per rank, 720 in all: 5.3x."""
    workload = Workload(input_len=4000, output_len=1000)
    tp8, dp8 = (estimate(v3(p), workload, enforce_context=False) for p in (TP8, DP8))
    for e in (tp8, dp8):
        assert kv_bytes_per_token(e.deployment.model, e.deployment.kv, e.deployment.parallel) == 61 * 576 * 2
        assert e.kv.bytes_per_request == 5008 * 70272
    assert tp8.memory.kv_space - dp8.memory.kv_space == pytest.approx(100.817e9 - 84.123e9, rel=1e-4)
    assert tp8.kv.max_concurrency_at_request_len == 137 == math.floor(tp8.memory.kv_space / (5008 * 70272))
    assert dp8.kv.max_concurrency_at_request_len == 8 * 90 == 8 * math.floor(dp8.memory.kv_space / (5008 * 70272))
    # a GPU holds only its rank's requests: 256 running are 32 per GPU
    assert gpu_memory(v3(DP8), 0.0).kv_in_use == 0.0
    in_use = estimate(v3(DP8), Workload(input_len=4000, output_len=1000, batch=256), enforce_context=False)
    assert in_use.memory.kv_in_use == pytest.approx(32 * 5008 * 70272)


def test_the_all_to_all_of_one_decode_step_by_hand(v3):
    """256 sequences over dp 8: 32 tokens per GPU, each sent to its 8 experts, 7/8 of which are on
    other GPUs: 32 x 8 x 7168 x 2 B x 7/8 = 3,211,264 B per pass. Over NVLink at 450 GB/s x 0.75:
    9.515 us + 10 us latency = 19.515 us; dispatch and combine in each of the 58 MoE layers:
    58 x 2 x 19.515 us = 2.264 ms. With tp 1 per rank there is no all-reduce: that is all of it."""
    dep = v3(DP8)
    assert all_to_all_bytes(dep.model, 32, 8) == 3_211_264
    per_pass = 10e-6 + 3_211_264 / (450e9 * 0.75)
    assert all_to_all_seconds(dep, 32, 1) == pytest.approx(58 * 2 * per_pass)
    assert comm_seconds(dep, 32, 1) == pytest.approx(2.2637e-3, rel=1e-4)
    assert decode_step_time(dep, 256, 2250).comm_s == pytest.approx(2.2637e-3, rel=1e-4)
    # tp 2 x dp 4: 64 tokens per rank (EP 8) plus the rank's own all-reduces over 2 GPUs
    both = v3(Parallelism(tp=2, dp=4))
    assert all_to_all_seconds(both, 64, 1) == pytest.approx(58 * 2 * (10e-6 + 2 * 3_211_264 / (450e9 * 0.75)))
    assert comm_seconds(both, 64, 1) > all_to_all_seconds(both, 64, 1)


def test_a_decode_step_splits_the_work_over_every_gpu(v3):
    """With B >= dp each GPU runs B / dp sequences' attention and non-expert matmuls and 1/8 of all
    routes: the same FLOPs per GPU as tp 8. It reads less KV (its own 32 sequences' latents, not all
    256) but the whole non-expert weights instead of 1/8 of them; the experts' bytes are the same."""
    tp8, dp8 = (decode_step_time(v3(p), 256, 2250) for p in (TP8, DP8))
    assert float(dp8.flops) == pytest.approx(float(tp8.flops), rel=1e-12)
    kv_tp8 = 256 * 2251 * 70272  # every GPU of tp 8 reads every sequence's latent
    kv_dp8 = 32 * 2251 * 70272
    weights = weight_bytes(v3(TP8).model, v3(TP8).weights)
    non_expert = weights.layers - weights.routed_experts + weights.lm_head  # the embedding is only looked up
    assert float(tp8.bytes_moved) - float(dp8.bytes_moved) == pytest.approx(
        (kv_tp8 - kv_dp8) - non_expert * 7 / 8, rel=1e-3
    )


def test_one_prompt_prefills_on_one_rank(v3):
    """A lone prompt runs on one rank: its attention and non-expert matmuls on that rank's one GPU
    (8x tp 8's per-GPU share), its experts still split over all 8."""
    tp8, dp8 = (prefill_time(v3(p), 1, 2000) for p in (TP8, DP8))
    assert float(dp8.flops) > 3 * float(tp8.flops)
    assert float(dp8.seconds) > float(tp8.seconds)


def test_the_lockstep_steady_state(v3):
    """A step waits for a prefill on any rank: TPOT = t_d / (1 - lambda t_p / dp)^dp, and E2E solves
    E = TTFT + (O - 1) t_d / (1 - B t_p / (dp E))^dp. At dp = 1 that is the quadratic's root."""
    work, ttft, decode = np.array([0.0, 5.0, 40.0]), np.array([0.3, 0.4, 0.5]), np.array([10.0, 12.0, 20.0])
    s = work + ttft + decode
    quadratic = (s + np.sqrt(s * s - 4 * ttft * work)) / 2
    assert lockstep_e2e(work, ttft, decode, 1) == pytest.approx(quadratic, rel=1e-12)
    e = lockstep_e2e(work, ttft, decode, 8)
    assert e == pytest.approx(ttft + decode / (1 - work / (8 * e)) ** 8, rel=1e-12)
    dep = v3(DP8)
    state = steady_state(dep, np.array([64.0, 512.0]), 1500, 300)
    busy = state.request_rate * state.prefill_s / 8
    assert state.tpot_s == pytest.approx(state.decode_step_s / (1 - busy) ** 8)
    assert state.engine_e2e_s == pytest.approx(state.ttft_s - 0.02 + 299 * state.tpot_s, rel=1e-9)


REQ = Requirement(load="users", users=200, think_time_s=30, prompt_len=1500, answer_len=300)


@pytest.mark.parametrize(
    ("engine", "version", "tp", "dp", "flags", "note"),
    [
        ("vllm", None, 1, 8, "--tensor-parallel-size 1 --data-parallel-size 8 --enable-expert-parallel", None),
        ("vllm", "0.7.3", 1, 8, "--data-parallel-size 8 --enable-expert-parallel", "0.8.3"),
        ("sglang", None, 2, 4, "--tp-size 8 --context-length 4096 --dp-size 4 --enable-dp-attention --ep-size 8", None),
        ("sglang", "0.4.5", 1, 8, "--dp-size 8 --enable-dp-attention --enable-ep-moe", None),
        ("trtllm", None, 1, 8, "--tp_size 8 --ep_size 8 --extra_llm_api_options extra-llm-api-config.yml", None),
        ("trtllm", None, 2, 4, "--tp_size 8 --ep_size 8", "tp 1 per rank"),
    ],
)
def test_the_launch_command_of_a_data_parallel_plan(v3, engine, version, tp, dp, flags, note):
    dep = v3(Parallelism(tp=tp, dp=dp), release=parse_release(engine, version), max_model_len=4096)
    plan = check(dep, REQ)
    command = serve_command(plan)
    assert flags in command.command
    assert (note is None and command.notes == ()) or any(note in n for n in command.notes)
    per_rank = min(plan.estimate.max_num_seqs, plan.estimate.kv.max_concurrency_at_request_len // dp)
    if engine == "sglang":  # SGLang's --max-running-requests is the total, split over the ranks
        assert f"--max-running-requests {per_rank * dp} " in command.command
    elif engine == "vllm":  # vLLM's --max-num-seqs applies per DP rank
        assert f"--max-num-seqs {per_rank} " in command.command
    if engine == "trtllm":
        assert command.command.startswith("printf 'enable_attention_dp: true\\n' > extra-llm-api-config.yml && ")


def test_a_set_chunk_size_reaches_every_engine(deploy):
    for engine, flag in (("vllm", "--max-num-batched-tokens 2048"), ("sglang", "--chunked-prefill-size 2048")):
        dep = deploy(release=parse_release(engine), max_num_batched_tokens=2048, max_model_len=4096)
        assert flag in serve_command(check(dep, REQ)).command
    dep = deploy(release=parse_release("trtllm"), max_num_batched_tokens=2048, max_model_len=4096)
    assert "--max_num_tokens 2048" in serve_command(check(dep, REQ)).command


def test_the_check_and_the_estimate_count_requests_per_rank(v3):
    """max_num_seqs is per rank: 8 ranks of max_num_seqs 16 run 100 requests at once; the check's
    KV need per GPU is the busiest rank's ceil(100 / 8) = 13 requests, one of them the P95."""
    from core.memory.request_kv import own_kv_bytes, shared_kv_bytes

    dep = v3(DP8, max_num_seqs=16, max_model_len=8192)
    assert estimate(dep, Workload(input_len=1000, output_len=200, batch=100)).running_batch == 100
    assert (
        estimate(
            v3(TP8, max_num_seqs=16, max_model_len=8192), Workload(input_len=1000, output_len=200, batch=100)
        ).running_batch
        == 16
    )
    req = Requirement(load="in_flight", in_flight=100, prompt_len=1000, answer_len=200, prompt_len_p95=3000)
    plan = check(dep, req)
    kv = next(c for c in plan.checks if c.name == "kv_cache")
    expected = shared_kv_bytes(dep, 1000) + 12 * own_kv_bytes(dep, 1200, 1000) + own_kv_bytes(dep, 3200, 3000)
    assert kv.need == pytest.approx(expected)
    assert "--data-parallel-size 8" in serve_command(plan).command


def test_the_load_test_page_simulates_one_rank_of_a_dp_layout():
    """A dp layout on the Load test page is simulated as one rank (core.serving.rank_step), and the page
    says so: percentiles the rank's, throughputs the replica's."""
    from tests.app_helpers import open_app, shown

    at = open_app(model="Qwen3-30B-A3B", gpu="NVIDIA H100 SXM5 80GB", dp="2")
    at.switch_page("pages/loadtest_page.py").run()
    assert not at.exception and not at.error
    assert any("one rank is simulated with 1/2 of the traffic" in shown(c) for c in at.caption)
