"""Hybrid models: KV only in the attention layers, a constant state per request in the others,
and vLLM's paging of both. Every expected figure is worked by hand from vLLM's formulas
(docs/research/vllm-hybrid-state.md), not read back from the code."""

from __future__ import annotations

import math

import pytest

from core.estimate.report import estimate_to_dict
from core.estimate.result import estimate
from core.memory.budget import gpu_memory
from core.memory.capacity import kv_capacity
from core.memory.kv import kv_bytes_per_token, vllm_blocks_per_request, vllm_kv_groups
from core.memory.state import aligned_block_size, state_bytes_per_layer, state_bytes_per_request
from core.serving.step_cost import Blocks
from core.spec.deployment import Workload
from core.spec.engine import Parallelism
from core.spec.hf_config import ConfigError, model_from_config
from core.spec.mixers import FfnKind, LayerKind
from core.spec.params import parameter_counts
from core.spec.precision import kv_precision, weight_precision
from core.spec.release import parse_release
from core.timing.phases import phase_time
from core.timing.work import weight_bytes_read

BF16 = kv_precision("bf16", weight_precision("bf16"))
TP1 = Parallelism()

# NVIDIA-Nemotron-Nano-9B-v2 as vLLM reads it: the shapes of the released checkpoint (NVIDIA
# Megatron-Bridge's NemotronNanoModelProvider9Bv2 and the pattern quoted in third-party tests); no
# verbatim config.json was found, so this is a test fixture, not a catalog entry.
NANO_9B_V2 = {
    "model_type": "nemotron_h",
    "hidden_size": 4480,
    "intermediate_size": 15680,
    "num_hidden_layers": 56,
    "hybrid_override_pattern": "M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-",
    "num_attention_heads": 40,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "mamba_num_heads": 128,
    "mamba_head_dim": 80,
    "ssm_state_size": 128,
    "n_groups": 8,
    "conv_kernel": 4,
    "vocab_size": 131072,
    "max_position_embeddings": 131072,
    "tie_word_embeddings": False,
}


def test_qwen3_next_kv_and_state_by_hand(catalog):
    m = catalog.model("qwen3-next-80b-a3b")
    assert (m.num_attention_layers, m.count_layers(LayerKind.LINEAR_ATTENTION)) == (12, 36)
    assert m.mixer_kinds[3] is LayerKind.ATTENTION and m.mixer_kinds[2] is LayerKind.LINEAR_ATTENTION
    # KV: 2 (K, V) x 2 KV heads x 256 x 2 B x 12 full-attention layers
    assert kv_bytes_per_token(m, BF16, TP1) == 2 * 2 * 256 * 2 * 12 == 24_576
    # state per layer: conv (4 - 1) x (2 x 16 x 128 + 32 x 128) x 2 B + recurrent 32 x 128 x 128 x 2 B
    per_layer = 3 * (2 * 16 * 128 + 32 * 128) * 2 + 32 * 128 * 128 * 2
    assert state_bytes_per_layer(m, 1) == per_layer == 1_097_728
    assert state_bytes_per_request(m, TP1) == 36 * per_layer == 39_518_208
    # tp 2 halves both: 1 KV head per GPU, half the value heads
    assert kv_bytes_per_token(m, BF16, Parallelism(tp=2)) == 12_288
    assert state_bytes_per_request(m, Parallelism(tp=2)) == 36 * (3 * 8192 + 16 * 128 * 128 * 2) == 19_759_104


def test_qwen3_next_paging_by_hand(catalog):
    m = catalog.model("qwen3-next-80b-a3b")
    # one attention page of one token in one layer: 2 x 2 x 256 x 2 B = 2,048 B; the state page
    # 1,097,728 B needs 16 x ceil(1,097,728 / (16 x 2,048)) = 16 x 34 = 544 tokens
    assert aligned_block_size(m, BF16, TP1, 16) == 544
    assert aligned_block_size(m, BF16, TP1, 1024) == 1024  # a larger configured block stays
    # 12 attention and 36 state layers: groups of 12 (36 is not within 1.5 x 12), 1 + 3 groups
    assert vllm_kv_groups(m, 1) == (4, 12)
    # a 10,000-token request: ceil(10,000 / 544) = 19 attention blocks + 1 block per state group
    assert vllm_blocks_per_request(m, 1, 10_000, 544, 8192) == 19 + 3


def test_nemotron_h_56b_by_hand(catalog):
    m = catalog.model("nemotron-h-56b")
    assert [m.count_layers(k) for k in (LayerKind.MAMBA, LayerKind.ATTENTION, LayerKind.MLP)] == [54, 10, 54]
    assert m.layer_ffns.count(FfnKind.DENSE) == 54 and not m.ffn_gated
    assert kv_bytes_per_token(m, BF16, TP1) == 2 * 8 * 128 * 2 * 10 == 40_960
    # conv (4 - 1) x (256 x 64 + 2 x 8 x 256) x 2 B; ssm 256 x 64 x 256 x 4 B (float32, vLLM 0.33's default)
    per_layer = 3 * (256 * 64 + 2 * 8 * 256) * 2 + 256 * 64 * 256 * 4
    assert state_bytes_per_layer(m, 1) == per_layer == 16_900_096
    assert state_bytes_per_request(m, TP1) == 54 * per_layer == 912_605_184
    assert aligned_block_size(m, BF16, TP1, 16) == 16 * math.ceil(per_layer / (16 * 2 * 8 * 128 * 2)) == 4128
    # parameters by hand: one block per layer, FFNs up/down only
    h = 8192
    mamba = h * (2 * 16384 + 2 * 8 * 256 + 256) + (16384 + 2 * 8 * 256) * 5 + 3 * 256 + 16384 + 16384 * h
    attention = h * 64 * 128 + 2 * h * 8 * 128 + 64 * 128 * h
    ffn = 2 * h * 32768
    body = 54 * mamba + 10 * attention + 54 * ffn
    p = parameter_counts(m)
    assert p.total == body + 2 * 131072 * h + (118 + 1) * h  # + embedding, LM head, one norm per block


def test_nemotron_nano_9b_v2_by_hand():
    m = model_from_config(NANO_9B_V2)
    assert (m.count_layers(LayerKind.MAMBA), m.num_attention_layers, m.count_layers(LayerKind.MLP)) == (27, 4, 25)
    assert kv_bytes_per_token(m, BF16, TP1) == 2 * 8 * 128 * 2 * 4 == 16_384
    conv = 3 * (128 * 80 + 2 * 8 * 128) * 2
    assert state_bytes_per_request(m, TP1) == 27 * (conv + 128 * 80 * 128 * 4) == 143_548_416
    in_model_dtype = model_from_config({**NANO_9B_V2, "mamba_ssm_cache_dtype": "bfloat16"})
    assert state_bytes_per_request(in_model_dtype, TP1) == 27 * (conv + 128 * 80 * 128 * 2) == 72_769_536
    # model dtype: page 2,695,168 B over 4,096 B per token -> 16 x 42 = 672; float32: 1,312
    assert aligned_block_size(in_model_dtype, BF16, TP1, 16) == 672
    assert aligned_block_size(m, BF16, TP1, 16) == 1312
    # 27 mamba and 4 attention layers: groups of 4, 7 mamba groups (one padded) + 1
    assert vllm_kv_groups(m, 1) == (8, 4)
    assert parameter_counts(m).total == pytest.approx(8.89e9, rel=0.01)


def test_hybrid_capacity_counts_state_per_request(deploy):
    """vLLM 0.11-0.20.0's rule: no prefix caching for hybrids (one state page per request), 16-token
    alignment, and "GPU KV cache size" = pool // groups x block."""
    dep = deploy("qwen3-next-80b-a3b", "h200", tp=2, max_model_len=32768, release=parse_release("vllm", "0.19.0"))
    budget = 40 * 2**30
    cap = kv_capacity(dep, budget, 4608)
    state = 19_759_104
    kv = math.ceil(4608 / 544) * 544 * 12_288  # whole 544-token blocks of 12,288 B per token
    assert cap.state_bytes_per_request == state and cap.block_size == 544
    assert cap.bytes_per_request == kv + state
    assert cap.max_concurrency_at_request_len == budget // (kv + state)
    # vLLM's figure: pages of 544 x 1,024 B, groups of 12 layers -> pool // (ceil(32768 / 544) + 3)
    pool = budget // (544 * 12 * 1024)
    assert cap.max_concurrency_at_max_model_len == pytest.approx(pool / (61 + 3))
    assert cap.capacity_tokens == pool // 4 * 544


def test_hybrid_json_fields(deploy):
    dep = deploy("qwen3-next-80b-a3b", "h200", tp=2, max_model_len=32768)
    data = estimate_to_dict(estimate(dep, Workload(input_len=4096, output_len=512, batch=8)))
    assert data["kv"]["bytes_per_token"] == 12_288
    assert data["kv"]["state_bytes_per_request"] == 19_759_104
    assert data["kv"]["block_size"] == 576  # vLLM 0.33 on SM90: 64 x ceil(548,864 / (64 x 1,024))
    plain = estimate_to_dict(estimate(deploy("llama-3.1-8b", "h100-sxm"), Workload(input_len=512, output_len=64)))
    assert plain["kv"]["state_bytes_per_request"] == 0 and plain["kv"]["block_size"] == 16


def test_hybrid_decode_reads_the_state(deploy):
    dep = deploy("qwen3-next-80b-a3b", "h200", tp=2, max_model_len=32768)
    # one decode step of 64 sequences at context 4,096: per GPU the step reads half the weights,
    # the KV of 4,097 tokens per sequence, and reads and writes each sequence's state
    step = phase_time(dep, 64, 1, 4096, 1)
    weights = float(weight_bytes_read(dep, 64)) / 2
    kv = 64 * 4097 * 12_288
    assert float(step.bytes_moved) == pytest.approx(weights + kv + 64 * 2 * 19_759_104, rel=1e-9)


def test_simulator_blocks_hold_the_state(deploy):
    dep = deploy("qwen3-next-80b-a3b", "h200", tp=2, max_model_len=32768)
    blocks = Blocks(dep)
    block_bytes = 576 * 12_288  # 64-token alignment of vLLM 0.33's FlashInfer GDN prefill on SM90
    assert blocks.size == 576
    assert float(blocks(0)) == 0
    # vLLM 0.33 with prefix caching (on for hybrids) reserves 2 state pages + a prefill checkpoint per request
    # (v1/kv_cache_interface.py:1135-1141; tests/test_hybrid_release.py), as capacity counts them
    assert float(blocks(100)) == pytest.approx((576 * 12_288 + 3 * 19_759_104) / block_bytes)


def test_hybrid_fits_budget_with_the_state(deploy):
    dep = deploy("qwen3-next-80b-a3b", "h200", tp=2, max_model_len=32768)
    memory = gpu_memory(dep)
    cap = kv_capacity(dep, memory.kv_budget, 4608)
    assert cap.max_concurrency_at_request_len * cap.bytes_per_request <= memory.kv_budget


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"hybrid_override_pattern": "M*"}, "hybrid_override_pattern"),
        ({"hybrid_override_pattern": "X" * 56}, "hybrid_override_pattern"),
        ({"mamba_ssm_cache_dtype": "int3"}, "mamba_ssm_cache_dtype"),
        ({"mamba_num_heads": None}, "mamba_num_heads"),
    ],
)
def test_bad_hybrid_configs_are_refused_with_the_field(change, message):
    config = {k: v for k, v in {**NANO_9B_V2, **change}.items() if v is not None}
    with pytest.raises(ConfigError, match=message):
        model_from_config(config)


def test_gated_deltanet_layer_types_list_wins(catalog):
    m = catalog.model("qwen3.5-27b")
    assert m.attention_output_gate and m.linear_attention.recurrent_state_bytes == 4  # mamba_ssm_dtype float32
    assert m.num_attention_layers == 16 and m.count_layers(LayerKind.LINEAR_ATTENTION) == 48
    # 48 x [(4 - 1) x (2 x 16 x 128 + 48 x 128) x 2 B + 48 x 128 x 128 x 4 B]
    assert state_bytes_per_request(m, TP1) == 48 * (3 * (2 * 16 * 128 + 48 * 128) * 2 + 48 * 128 * 128 * 4)


def test_a_batch_holds_each_requests_state(deploy):
    from core.memory.request_kv import batch_kv_bytes

    dep = deploy("qwen3.5-27b", "h100-sxm", max_model_len=8192)
    state = state_bytes_per_request(dep.model, TP1)
    one = float(batch_kv_bytes(dep, 1, 1024, 512))
    assert float(batch_kv_bytes(dep, 150, 1024, 512)) == pytest.approx(150 * one)
    # vLLM 0.33 on an H100 keeps 3 state pages a request (prefix caching's 'align' mode + a checkpoint)
    assert one == pytest.approx(math.ceil(1024 / dep_block(dep)) * dep_block(dep) * 65_536 + 3 * state)
    result = estimate(dep, Workload(input_len=512, output_len=512, batch=150))
    assert not result.fits  # 150 x (KV + 147 MiB of state) is more than the 16 GiB budget


def dep_block(dep):
    from core.memory.state import kv_block_size

    return kv_block_size(dep)


def test_bad_hybrid_shapes_are_config_errors_not_tracebacks():
    base = {**NANO_9B_V2}
    with pytest.raises(ConfigError):
        model_from_config({**base, "mamba_ssm_cache_dtype": ["float32"]})
    gdn = {
        "model_type": "qwen3_next",
        "hidden_size": 256,
        "intermediate_size": 512,
        "num_hidden_layers": 4,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 64,
        "vocab_size": 1000,
        "max_position_embeddings": 4096,
        "num_experts": 4,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": 64,
        "linear_num_key_heads": 3,
        "linear_num_value_heads": 4,
        "linear_key_head_dim": 32,
        "linear_value_head_dim": 32,
        "linear_conv_kernel_dim": 4,
    }
    with pytest.raises(ConfigError, match="num_v_heads"):
        model_from_config(gdn)  # value heads must be a multiple of key heads
    with pytest.raises(ConfigError, match="layer_types"):
        model_from_config({**gdn, "linear_num_key_heads": 2, "layer_types": [["x"]] * 4})
    with pytest.raises(ConfigError, match="mlp_only_layers"):
        model_from_config({**gdn, "linear_num_key_heads": 2, "mlp_only_layers": [0, "a"]})


def test_pipeline_stages_follow_vllms_split_and_the_layers_in_them(catalog):
    from core.memory.kv import pipeline_stages

    assert pipeline_stages(52, 3) == ((0, 17), (17, 35), (35, 52))  # the remainder to the stage before the last
    assert pipeline_stages(32, 4) == ((0, 8), (8, 16), (16, 24), (24, 32))
    m = catalog.model("nemotron-3-nano-30b-a3b")
    # its attention layers (6 of 52) fall 2 / 3 / 1 over the stages: the middle one holds 3
    assert kv_bytes_per_token(m, BF16, Parallelism(pp=3)) == 3 * 2 * 2 * 128 * 2
    assert kv_bytes_per_token(m, BF16, TP1) == 6 * 2 * 2 * 128 * 2


def test_lora_on_a_hybrid_is_refused_not_guessed(cli):
    code, out, err = cli(
        "estimate",
        "--model",
        "qwen3-next-80b-a3b",
        "--gpu",
        "h200",
        "--tp",
        "2",
        "--max-model-len",
        "8192",
        "--max-loras",
        "4",
        "--lora-targets",
        "attention",
    )
    assert code == 2 and out == "" and "Gated DeltaNet / Mamba2 layers are not modelled" in err
