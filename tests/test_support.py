"""What vLLM runs on which GPU (core/spec/support.py): refused formats, weight-only kernels, bf16 as fp16."""

from __future__ import annotations

import pytest

from core.estimate.advice import fit_suggestions
from core.estimate.result import estimate
from core.planning.fixes import fixes
from core.planning.requirement import Requirement
from core.spec.deployment import Deployment, Workload
from core.spec.engine import EngineConfig
from core.spec.precision import WEIGHT_PRECISIONS, kv_precision, weight_precision
from core.spec.support import (
    FORMAT_RULES,
    attention_backend,
    kv_for,
    kv_problem,
    matmul_peak,
    weight_only,
    weights_problem,
)
from tests.app_helpers import open_app


def deployment(catalog, model, gpu, weights=None, **engine):
    spec = catalog.model(model)
    w = weight_precision(weights or spec.native_dtype)
    g = catalog.gpu(gpu)
    return Deployment(model=spec, gpu=g, weights=w, kv=kv_for("auto", w, g), engine=EngineConfig(**engine))


def test_mxfp4_on_a_t4_and_fp8_on_a_v100_are_refused_with_the_rule(catalog):
    with pytest.raises(ValueError, match=r"NVIDIA T4 \(compute capability 7.5\): mxfp4 .* needs at least 8.0"):
        deployment(catalog, "gpt-oss-20b", "t4")
    with pytest.raises(ValueError, match=r"V100 .*\(compute capability 7.0\): fp8 .* needs at least 7.5"):
        deployment(catalog, "qwen3-8b", "v100-32gb", "fp8")
    with pytest.raises(ValueError, match=r"INT8 .* needs at least 7.5"):
        deployment(catalog, "qwen3-8b", "v100-32gb", "int8")


def test_the_cli_refuses_in_one_line_naming_the_gpu_and_the_rule(cli):
    code, out, err = cli("estimate", "--model", "openai/gpt-oss-20b", "--gpu", "t4")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "NVIDIA T4" in err and "needs at least 8.0" in err
    code, _, err = cli("check", "--model", "Qwen/Qwen3-8B-FP8", "--gpu", "v100-32gb")
    assert code == 2 and "fp8 (Fp8Config) needs at least 7.5" in err


def test_fp8_below_8_9_runs_weight_only_at_16_bit_compute_and_the_timing_says_so(catalog):
    a10 = deployment(catalog, "qwen3-8b", "a10", "fp8", max_model_len=4096)
    t4 = deployment(catalog, "qwen3-8b", "t4", "fp8", max_model_len=4096)  # allowed from 7.5 (v0.14.0 on)
    l4 = deployment(catalog, "qwen3-8b", "l4", "fp8", max_model_len=4096)
    assert weight_only(a10.gpu, a10.weights) and weight_only(t4.gpu, t4.weights)
    assert not weight_only(l4.gpu, l4.weights)
    assert matmul_peak(a10.gpu, a10.weights) == (dict(a10.gpu.tensor_flops)["fp16"], "fp16")
    assert matmul_peak(l4.gpu, l4.weights) == (dict(l4.gpu.tensor_flops)["fp8"], "fp8")
    codes = {w.code for w in estimate(a10, Workload()).warnings}
    assert "weight_only_kernel" in codes
    assert "weight_only_kernel" not in {w.code for w in estimate(l4, Workload()).warnings}


def test_nvfp4_is_native_from_10_0_and_weight_only_below(catalog):
    h100 = deployment(catalog, "llama-3.1-8b", "h100-sxm", "nvfp4")
    b200 = deployment(catalog, "llama-3.1-8b", "b200", "nvfp4")
    assert weight_only(h100.gpu, h100.weights) and matmul_peak(h100.gpu, h100.weights)[1] == "bf16"
    assert not weight_only(b200.gpu, b200.weights) and matmul_peak(b200.gpu, b200.weights)[1] == "fp4"
    # MXFP4 runs with 16-bit activations even where FP4 tensor cores exist (vLLM 0.11's default kernels)
    gpt = deployment(catalog, "gpt-oss-20b", "b200")
    assert matmul_peak(gpt.gpu, gpt.weights)[1] == "bf16"


def test_bf16_below_8_0_is_served_and_cached_in_fp16(catalog):
    t4 = deployment(catalog, "qwen3-8b", "t4", max_model_len=4096)
    assert t4.weights.name == "bf16" and t4.kv.name == "fp16"
    assert kv_for("auto", t4.weights, catalog.gpu("a10")).name == "bf16"
    assert kv_for("fp8", t4.weights, t4.gpu).name == "fp8"  # an explicit KV dtype is kept
    codes = [w.code for w in estimate(t4, Workload()).warnings]
    assert "bf16_as_fp16" in codes and "no_native_compute" not in codes
    assert t4.kv.bytes_per_element == kv_precision("auto", t4.weights).bytes_per_element  # same bytes


def test_advice_and_fixes_never_suggest_what_the_gpu_refuses(catalog):
    v100 = deployment(catalog, "qwen2.5-14b", "v100-32gb", "fp16", max_model_len=4096)
    current = estimate(v100, Workload(input_len=2048, output_len=512, batch=32))
    for suggestion in fit_suggestions(v100, Workload(input_len=2048, output_len=512, batch=32), current):
        dep = suggestion.result.deployment
        assert weights_problem(v100.gpu, dep.weights) is None and kv_problem(v100.gpu, dep.kv, dep.model) is None
    req = Requirement(users=200, think_time_s=5.0, prompt_len=1500, answer_len=300)
    for fix in fixes(catalog, v100, req):
        dep = fix.plan.deployment
        assert weights_problem(dep.gpu, dep.weights) is None
        assert kv_problem(dep.gpu, dep.kv, dep.model) is None


def test_catalog_tensor_rates_agree_with_the_rules(catalog):
    """An NVIDIA GPU lists FP8 tensor throughput exactly when vLLM runs W8A8 FP8 on it (8.9 on) and
    FP4 exactly when it runs native NVFP4 (10.0 on); every NVIDIA GPU states its capability."""
    for gpu in catalog.gpus:
        if gpu.vendor != "nvidia":
            continue
        cap = gpu.cuda_capability
        assert cap is not None, gpu.id
        rates = dict(gpu.tensor_flops)
        assert ("fp8" in rates) == (cap >= FORMAT_RULES["fp8"].native_from), gpu.id
        assert ("fp4" in rates) == (cap >= FORMAT_RULES["nvfp4"].native_from), gpu.id
    assert set(FORMAT_RULES) <= set(WEIGHT_PRECISIONS)


def test_the_ui_says_why_a_refused_format_cannot_run_and_keeps_the_inputs():
    at = open_app(model="gpt-oss-20b", gpu="NVIDIA T4")
    assert not at.exception
    assert any("needs at least 8.0" in e.value for e in at.error)
    assert at.selectbox(key="gpu").value == "t4" and at.selectbox(key="model").value == "gpt-oss-20b"


@pytest.mark.parametrize(
    ("gpu", "model", "backend"),
    [
        ("t4", "llama-3.1-8b", "TRITON_ATTN"),
        ("v100-32gb", "llama-3.1-8b", "TRITON_ATTN"),
        ("a10", "llama-3.1-8b", "FLASH_ATTN (FA2)"),
        ("h100-sxm", "llama-3.1-8b", "FLASH_ATTN (FA3)"),
        ("b200", "llama-3.1-8b", "FLASHINFER"),
        ("rtx-5090", "llama-3.1-8b", "FLASH_ATTN (FA2)"),
        ("h100-sxm", "deepseek-v2-lite", "FLASH_ATTN_MLA"),
        ("b200", "deepseek-v2-lite", "FLASHINFER_MLA"),
        ("a100-80gb", "deepseek-v2-lite", "TRITON_MLA"),
        ("mi300x", "llama-3.1-8b", None),  # ROCm is not read
    ],
)
def test_attention_backend_by_capability(catalog, gpu, model, backend):
    assert attention_backend(catalog.gpu(gpu), catalog.model(model)) == backend


def test_fp8_kv_is_refused_where_the_backend_has_no_fp8(catalog, cli):
    fp8 = kv_precision("fp8", weight_precision("bf16"))
    llama, mla = catalog.model("llama-3.1-8b"), catalog.model("deepseek-v2-lite")
    assert kv_problem(catalog.gpu("t4"), fp8, llama) is not None  # TRITON_ATTN needs 8.9 for FP8
    assert kv_problem(catalog.gpu("a10"), fp8, llama) is None  # FLASHINFER takes it from 8.0
    assert kv_problem(catalog.gpu("a100-80gb"), fp8, mla) is not None  # TRITON_MLA below 8.9
    assert kv_problem(catalog.gpu("l40s"), fp8, mla) is None and kv_problem(catalog.gpu("h100-sxm"), fp8, mla) is None
    code, out, err = cli("estimate", "--model", "llama-3.1-8b", "--gpu", "t4", "--kv-dtype", "fp8")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "refuses an FP8 KV cache on NVIDIA T4 (compute capability 7.5)" in err


def test_the_ui_refuses_fp8_kv_on_a_t4_and_keeps_the_inputs():
    at = open_app(model="Llama-3.1-8B", gpu="NVIDIA T4", kv="fp8")
    assert not at.exception
    assert any("refuses an FP8 KV cache" in e.value for e in at.error)
    assert at.selectbox(key="gpu").value == "t4" and at.selectbox(key="kv").value == "fp8"


def test_an_fp8_kv_cache_moves_to_a_backend_that_takes_it(catalog):
    fp8 = kv_precision("fp8", weight_precision("bf16"))
    llama, mla = catalog.model("llama-3.1-8b"), catalog.model("deepseek-v2-lite")
    assert attention_backend(catalog.gpu("a10"), llama, fp8) == "FLASHINFER"  # FA2 has no FP8 KV
    assert attention_backend(catalog.gpu("h100-sxm"), llama, fp8) == "FLASH_ATTN (FA3)"
    assert attention_backend(catalog.gpu("h100-sxm"), mla, fp8) == "FLASHMLA"


def test_mxfp4_moe_weights_are_padded_to_the_kernels_tiles(catalog):
    """gpt-oss-120b on an A100 (Marlin: hidden to 256, per-GPU intermediate to 128): 2,880 x 2,880
    expert matrices become 3,072 x 2,944; a public vLLM 0.10.1 log at tp 4 shows 17.22 GiB."""
    from core.memory.budget import gpu_memory
    from core.memory.weights import moe_padding_bytes_per_gpu, weight_bytes, weight_bytes_per_gpu
    from core.spec.engine import Parallelism
    from core.spec.support import mxfp4_moe_alignment

    model, mx = catalog.model("gpt-oss-120b"), weight_precision("mxfp4")
    a100, h100 = catalog.gpu("a100-80gb"), catalog.gpu("h100-sxm")
    assert mxfp4_moe_alignment(a100) == (256, 128)
    tp4 = Parallelism(tp=4)
    extra = moe_padding_bytes_per_gpu(model, mx, tp4, a100)
    factor = 3072 * 768 / (2880 * 720)  # per-GPU intermediate 720 -> 768 at tp 4
    assert extra == pytest.approx(weight_bytes(model, mx).routed_experts / 4 * (factor - 1))
    dep = Deployment(
        model=model,
        gpu=a100,
        weights=mx,
        kv=kv_for("auto", mx, a100),
        parallel=tp4,
        engine=EngineConfig(max_model_len=16384, gpu_memory_utilization=0.8),
    )
    assert gpu_memory(dep).weights == pytest.approx(weight_bytes_per_gpu(model, mx, tp4) + extra)
    assert gpu_memory(dep).weights / 2**30 == pytest.approx(17.22, rel=0.01)
    assert moe_padding_bytes_per_gpu(model, mx, Parallelism(), h100) == 0  # 2,880 is a multiple of 64
    assert moe_padding_bytes_per_gpu(catalog.model("llama-3.1-8b"), mx, Parallelism(), a100) == 0
