"""Memory formulas: hand-derived values (arithmetic in comments), vLLM logs, invariants."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.estimate.result import estimate
from core.memory.activations import activation_peak_bytes
from core.memory.kv import kv_bytes_per_sequence, kv_bytes_per_token
from core.memory.weights import weight_bytes, weight_bytes_per_gpu
from core.spec import units
from core.spec.catalog import load_catalog
from core.spec.deployment import Workload
from core.spec.engine import Parallelism
from core.spec.params import parameter_counts
from core.spec.precision import KV_PRECISIONS, WEIGHT_PRECISIONS
from core.spec.release import parse_release

BF16, FP16, FP8 = KV_PRECISIONS["bf16"], KV_PRECISIONS["fp16"], KV_PRECISIONS["fp8"]
ONE = Parallelism()


def test_llama2_7b_fp16_kv_is_512_kib_per_token(catalog):
    # 2 x 32 layers x 32 KV heads x 128 head_dim x 2 B = 524,288 B = 512 KiB
    assert kv_bytes_per_token(catalog.model("llama-2-7b"), FP16, ONE) == 512 * units.KiB


def test_llama31_8b_bf16_kv_is_128_kib_per_token(catalog):
    # 2 x 32 layers x 8 KV heads x 128 x 2 B = 131,072 B = 128 KiB; fp8 halves it
    model = catalog.model("llama-3.1-8b")
    assert kv_bytes_per_token(model, BF16, ONE) == 128 * units.KiB
    assert kv_bytes_per_token(model, FP8, ONE) == 64 * units.KiB


def test_mla_caches_the_latent_not_per_head_kv(catalog):
    # DeepSeek-V3: 61 layers x (kv_lora_rank 512 + rope 64) x 2 B = 70,272 B per token,
    # versus 2 x 61 x 128 heads x (128 + 64 | 128) x 2 B ~ 4.8 MB if treated as MHA (~70x more)
    model = catalog.model("deepseek-v3")
    assert kv_bytes_per_token(model, BF16, ONE) == 61 * 576 * 2
    # every TP rank keeps the whole latent
    assert kv_bytes_per_token(model, BF16, Parallelism(tp=8)) == 61 * 576 * 2


def test_sliding_window_layers_cap_at_the_window(catalog):
    # Gemma-2-9B: 42 layers, 21 of them with a 4096 window; 2 x 8 KV heads x 256 x 2 B = 8 KiB/token/layer
    model = catalog.model("gemma-2-9b")
    per_layer = 2 * 8 * 256 * 2
    assert kv_bytes_per_sequence(model, BF16, ONE, 8192) == 21 * 8192 * per_layer + 21 * 4096 * per_layer
    assert kv_bytes_per_sequence(model, BF16, ONE, 2048) == 42 * 2048 * per_layer
    # gpt-oss-120b: 36 layers, 18 with a 128-token window, 2 x 8 x 64 x 2 B = 2 KiB/token/layer
    oss = catalog.model("gpt-oss-120b")
    assert kv_bytes_per_sequence(oss, BF16, ONE, 10_000) == 18 * 10_000 * 2048 + 18 * 128 * 2048


def test_paged_blocks_round_up_each_layer(catalog):
    # 17 tokens occupy two 16-token blocks: 32 tokens x 128 KiB
    model = catalog.model("llama-3.1-8b")
    assert kv_bytes_per_sequence(model, BF16, ONE, 17, block_size=16) == 32 * 128 * units.KiB


def test_kv_heads_split_over_tp_then_replicate(catalog):
    model = catalog.model("llama-3.1-8b")  # 8 KV heads
    one = kv_bytes_per_token(model, BF16, ONE)
    assert kv_bytes_per_token(model, BF16, Parallelism(tp=2)) == one / 2
    assert kv_bytes_per_token(model, BF16, Parallelism(tp=8)) == one / 8
    # 16 GPUs, 8 heads: each GPU still stores one whole head
    assert kv_bytes_per_token(model, BF16, Parallelism(tp=16)) == one / 8
    # pipeline stages hold their own layers' KV: 32 layers over 4 stages
    assert kv_bytes_per_token(model, BF16, Parallelism(pp=4)) == one / 4


def test_int4_weights_keep_embeddings_16bit(catalog):
    model = catalog.model("llama-3.1-8b")
    p = parameter_counts(model)
    # AWQ g128: 4 bits + (16-bit scale + 4-bit zero) / 128 = 4.15625 bits per linear weight
    expected = p.linear * 4.15625 / 8 + (p.embedding + p.lm_head + p.norms) * 2
    assert weight_bytes(model, WEIGHT_PRECISIONS["int4"]).total == pytest.approx(expected)
    assert weight_bytes(model, WEIGHT_PRECISIONS["bf16"]).total == pytest.approx(p.total * 2)


def test_mxfp4_on_gpt_oss_compresses_only_experts(catalog):
    model = catalog.model("gpt-oss-120b")
    p = parameter_counts(model)
    # MXFP4: 4 bits + one 8-bit scale per 32 = 4.25 bits; attention, router, embeddings stay BF16
    expected = p.routed_experts * 4.25 / 8 + (p.total - p.routed_experts) * 2
    assert weight_bytes(model, WEIGHT_PRECISIONS["mxfp4"]).total == pytest.approx(expected)


def test_weights_shard_over_tp_and_pp(catalog):
    model = catalog.model("llama-3.1-70b")
    total = weight_bytes(model, WEIGHT_PRECISIONS["bf16"]).total
    assert weight_bytes_per_gpu(model, WEIGHT_PRECISIONS["bf16"], Parallelism(tp=4)) == pytest.approx(total / 4)
    stage = weight_bytes_per_gpu(model, WEIGHT_PRECISIONS["bf16"], Parallelism(pp=2))
    # 40 of 80 layers plus the embedding; embedding and LM head are the same size, so exactly half
    assert stage == pytest.approx(total / 2)
    # 80 layers over 3 stages: 27 layers + one end
    w = weight_bytes(model, WEIGHT_PRECISIONS["bf16"])
    stage3 = weight_bytes_per_gpu(model, WEIGHT_PRECISIONS["bf16"], Parallelism(pp=3))
    assert stage3 == pytest.approx(w.layers * 27 / 80 + w.embedding)


def test_activation_peak_matches_vllm_profile_for_llama_8b(catalog):
    # vLLM 0.19 on H100 (8192 batched tokens, 1024 seqs) logged "torch peak memory increase: 1.89GiB"
    peak = activation_peak_bytes(catalog.model("llama-3.1-8b"), 8192, 1024)
    assert peak / units.GiB == pytest.approx(1.89, rel=0.02)


def test_reproduces_vllm_startup_log_h100(deploy):
    # llm-d-planner accuracy run, vLLM 0.19.0, H100 80GB, Llama-3.1-8B-Instruct bf16, util 0.95,
    # max_model_len 16384 (0.19 does not charge CUDA graphs yet): "Available KV cache memory:
    # 58.11 GiB", "GPU KV cache size: 476,016 tokens", "Maximum concurrency for 16,384 tokens per
    # request: 29.05x"
    dep = deploy(
        gpu="h100-sxm", gpu_memory_utilization=0.95, max_model_len=16384, release=parse_release("vllm", "0.19.0")
    )
    e = estimate(dep, Workload(input_len=1024, output_len=256))
    assert e.memory.kv_budget / units.GiB == pytest.approx(58.11, rel=0.01)
    assert e.kv.capacity_tokens == pytest.approx(476_016, rel=0.01)
    assert e.kv.max_concurrency_at_max_model_len == pytest.approx(29.05, rel=0.01)


def test_reproduces_vllm_startup_log_a100_40gb(deploy):
    # vLLM 0.15.1 on an A100-40GB, Llama-3.1-8B-Instruct, util 0.9, max_model_len 131072, LLM class
    # (8192 batched tokens, 256 seqs), enforce_eager: "Available KV cache memory: 19.28 GiB",
    # "GPU KV cache size: 157,936 tokens", "Maximum concurrency for 131,072 tokens per request: 1.20x"
    dep = deploy(
        gpu="a100-40gb", max_num_batched_tokens=8192, max_num_seqs=256, release=parse_release("vllm", "0.15.1")
    )
    e = estimate(dep, Workload(input_len=1024, output_len=256))
    assert e.memory.kv_budget / units.GiB == pytest.approx(19.28, rel=0.01)
    assert e.kv.capacity_tokens == pytest.approx(157_936, rel=0.01)
    assert e.kv.max_concurrency_at_max_model_len == pytest.approx(1.20, rel=0.02)


QWEN3_8B = load_catalog().model("qwen3-8b")  # full attention everywhere


@given(a=st.integers(1, 200_000), b=st.integers(1, 200_000))
def test_kv_memory_is_linear_in_tokens(a, b):
    model = QWEN3_8B
    assert kv_bytes_per_sequence(model, BF16, ONE, a + b) == pytest.approx(
        kv_bytes_per_sequence(model, BF16, ONE, a) + kv_bytes_per_sequence(model, BF16, ONE, b)
    )


@given(tokens=st.integers(1, 1_000_000), model_id=st.sampled_from(["gemma-3-27b", "gpt-oss-20b", "deepseek-v3"]))
def test_more_bytes_per_element_never_less_memory(tokens, model_id):
    model = load_catalog().model(model_id)
    kv = [kv_bytes_per_sequence(model, KV_PRECISIONS[k], ONE, tokens) for k in ("fp8", "bf16", "fp32")]
    assert kv == sorted(kv)
    # among formats that compress the same parts (MXFP4 compresses only MoE experts, so it stands apart)
    same_scope = [p for p in WEIGHT_PRECISIONS.values() if not p.moe_experts_only]
    ordered = sorted(same_scope, key=lambda p: p.bits_per_element)
    weights = [weight_bytes(model, p).total for p in ordered]
    assert weights == sorted(weights)


def test_does_not_fit_is_an_answer_with_negative_budget(deploy):
    e = estimate(deploy(model="llama-3.1-70b", gpu="a10", max_model_len=4096), Workload())
    assert not e.fits
    assert e.memory.kv_budget < 0
    assert e.kv.max_concurrency_at_request_len == 0
    assert e.warnings[0].code == "does_not_fit"
    assert "does not fit" in e.warnings[0].text()
