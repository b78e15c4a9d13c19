"""The 2025-2026 architectures besides the hybrids: sparse attention (DeepSeek-V3.2), chunked
attention with interleaved MoE (Llama 4), 1T-scale MoE (Kimi K2), GLM-4.5, multimodal towers.
Expected figures are worked by hand from the configs and the engine's rules."""

from __future__ import annotations

import pytest

from core.memory.kv import kv_bytes_per_sequence, kv_bytes_per_token
from core.memory.weights import weight_bytes
from core.spec.engine import Parallelism
from core.spec.mixers import FfnKind
from core.spec.params import parameter_counts
from core.spec.precision import kv_precision, weight_precision
from core.timing.work import attention_flops

BF16_W = weight_precision("bf16")
BF16 = kv_precision("bf16", BF16_W)
TP1 = Parallelism()


def test_deepseek_v32_keeps_an_indexer_cache_and_attends_to_top_k(catalog):
    m = catalog.model("deepseek-v3.2")
    # per layer: MLA latent (512 + 64) x 2 B + the indexer's FP8 key (128 B) and FP32 scale (4 B)
    assert kv_bytes_per_token(m, BF16, TP1) == 61 * ((512 + 64) * 2 + 128 + 4) == 78_324
    v3 = catalog.model("deepseek-v3")
    assert kv_bytes_per_token(v3, BF16, TP1) == 61 * (512 + 64) * 2
    # one new token at context 100,000: the main attention scores 2,048 keys, the indexer all 100,001
    per_pair = 2 * 128 * (192 + 128)
    indexer_pair = 2 * 64 * 128
    expected = 61 * (2048 * per_pair + 100_001 * indexer_pair)
    assert float(attention_flops(m, 1, 1, 100_000)) == expected
    assert float(attention_flops(v3, 1, 1, 100_000)) == 61 * 100_001 * per_pair


def test_llama4_scout_layout_and_kv(catalog):
    m = catalog.model("llama-4-scout-17b-16e")
    assert m.attention_chunked and m.sliding_window == 8192
    assert m.num_sliding_layers == 36  # every layer but each 4th (NoPE, global) attends within a chunk
    assert m.layer_ffns == (FfnKind.MOE,) * 48  # interleave_moe_layer_step 1
    # vLLM keeps full KV in the chunked layers too (its hybrid manager is off for chunked attention)
    assert kv_bytes_per_token(m, BF16, TP1) == 48 * 2 * 8 * 128 * 2 == 196_608
    assert kv_bytes_per_sequence(m, BF16, TP1, 20_000) == 20_000 * 196_608
    # but the chunked layers' attention stops at the chunk: 12 global x 20,001 + 36 x 8,192 keys
    per_pair = 2 * 40 * (128 + 128)
    assert float(attention_flops(m, 1, 1, 20_000)) == (12 * 20_001 + 36 * 8192) * per_pair


def test_llama4_maverick_alternates_dense_and_moe_layers(catalog):
    m = catalog.model("llama-4-maverick-17b-128e")
    assert m.layer_ffns[:4] == (FfnKind.DENSE, FfnKind.MOE, FfnKind.DENSE, FfnKind.MOE)
    h = 5120
    p = parameter_counts(m)
    assert p.dense_ffn == 24 * 3 * h * 16384  # intermediate_size_mlp
    assert p.routed_experts == 24 * 128 * 3 * h * 8192
    assert p.shared_experts == 24 * 3 * h * 8192


def test_glm45_first_three_layers_dense(catalog):
    m = catalog.model("glm-4.5")
    assert m.attention_kind == "GQA" and m.mla is None
    assert m.layer_ffns[:4] == (FfnKind.DENSE,) * 3 + (FfnKind.MOE,)
    assert kv_bytes_per_token(m, BF16, TP1) == 92 * 2 * 8 * 128 * 2


def test_kimi_k2_reads_as_deepseek_v3_mla(catalog):
    m = catalog.model("kimi-k2")
    assert m.attention_kind == "MLA" and m.moe.num_experts == 384
    assert kv_bytes_per_token(m, BF16, TP1) == 61 * (512 + 64) * 2


def test_vision_tower_is_counted_in_weights_not_in_active(catalog):
    m = catalog.model("gemma-3-4b")
    p = parameter_counts(m)
    # SigLIP-400M: 27 x (4 x 1152^2 + 2 x 1152 x 4304) + 3 x 14^2 x 1152 patch + 64^2 positions x 1152
    # + the projector 1152 x 2560
    tower = 27 * (4 * 1152**2 + 2 * 1152 * 4304) + 3 * 14**2 * 1152 + (896 // 14) ** 2 * 1152 + 1152 * 2560
    assert p.vision == tower
    # the published count (Hugging Face's safetensors total, 4,300,079,472) within 0.1 %
    assert p.total == pytest.approx(4_300_079_472, rel=1e-3)
    assert p.active == p.total - p.vision
    w = weight_bytes(m, weight_precision("int4"))
    assert w.vision == tower * 2  # the tower stays 16-bit under weight quantization


def test_multimodal_and_hybrid_estimates_say_what_they_count(deploy):
    from core.estimate.result import estimate
    from core.spec.deployment import Workload

    work = Workload(input_len=1024, output_len=256)
    vl = estimate(deploy("qwen3-vl-8b", "h100-sxm", max_model_len=8192), work)
    text = " ".join(w.text() for w in vl.warnings)
    assert "vision tower" in text and "--limit-mm-per-prompt" in text
    hybrid = estimate(deploy("qwen3-next-80b-a3b", "h200", tp=2, max_model_len=32768), work)
    text = " ".join(w.text() for w in hybrid.warnings)
    assert "12 attention layers" in text and "18.8 MiB of state per request" in text and "576 tokens" in text
    plain = estimate(deploy("llama-3.1-8b", "h100-sxm", max_model_len=8192), work)
    assert not any("vision tower" in w.text() or "state per request" in w.text() for w in plain.warnings)


def test_mtp_layers_the_checkpoint_ships(catalog, cli):
    assert catalog.model("deepseek-v3").mtp_layers == 1 and catalog.model("glm-4.5").mtp_layers == 1
    assert catalog.model("qwen3.5-27b").mtp_layers == 1 and catalog.model("minimax-m2.5").mtp_layers == 3
    assert catalog.model("llama-3.1-8b").mtp_layers == 0
    code, out, _ = cli(
        "estimate",
        "--model",
        "deepseek-v3.1",
        "--gpu",
        "h200",
        "--tp",
        "8",
        "--speculative-method",
        "mtp",
        "--max-model-len",
        "8192",
    )
    assert code == 0 and "uses the 1 multi-token-prediction layer(s)" in out
    code, out, _ = cli(
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "h100-sxm",
        "--speculative-method",
        "mtp",
        "--max-model-len",
        "8192",
    )
    assert code == 0 and "ships no multi-token-prediction layers" in out


def test_sparse_attention_steps_take_the_exact_path(deploy):
    import numpy as np

    from core.serving.step_cost import StepModel, step_seconds

    dep = deploy("deepseek-v3.2", "h200", tp=8, max_model_len=131072)
    model = StepModel(dep)
    assert not model.exact  # top-k caps each query's keys: pairs are not linear in the step's sums
    new, cached = np.array([8192]), np.array([100_000])
    assert model.step(new, cached) == step_seconds(dep, new, cached)


def test_sparse_attention_runs_only_on_the_sparse_mla_backends(catalog, cli):
    from core.spec.support import attention_backend, attention_problem

    v32 = catalog.model("deepseek-v3.2")
    assert attention_backend(catalog.gpu("h200"), v32) == "FLASHMLA_SPARSE"
    assert attention_backend(catalog.gpu("rtx-pro-6000"), v32) == "FLASHINFER_MLA_SPARSE"
    assert attention_problem(catalog.gpu("h200"), v32) is None
    assert attention_problem(catalog.gpu("a100-80gb"), catalog.model("deepseek-v3")) is None  # dense MLA runs
    code, out, err = cli("estimate", "--model", "glm-5", "--gpu", "a100-80gb", "--tp", "8")
    assert code == 2 and out == "" and "no attention backend for GLM-5's sparse attention" in err
    # FP8 KV in vLLM's fp8_ds_mla layout: 512 FP8 + 4 scales x 4 B + 64 x 2 B RoPE = 656 B, plus the indexer's 132
    fp8 = kv_precision("fp8", BF16_W)
    assert kv_bytes_per_token(v32, fp8, TP1) == 61 * (656 + 132)
