"""KV sizing by release: vLLM 0.34's measured sizing (the extensible KV cache) against a hand-worked
figure, 0.33's estimate left as it was, and the rule named wherever the numbers are shown.

Rules and their sources: core/memory/accounting.py (vLLM 0.34.0 v1/worker/extensible_kv_cache.py
measure_kv_cache_bytes, config/cache.py resolved_gpu_memory_utilization, config/vllm.py
_resolve_extensible_kv_cache)."""

from __future__ import annotations

import json

import pytest

from core.estimate.explain import explain
from core.estimate.result import estimate
from core.memory.budget import gpu_memory
from core.memory.state import kv_block_size
from core.memory.weights import weight_bytes_per_gpu
from core.spec import units
from core.spec.deployment import Workload
from core.spec.release import parse_release

V33, V34 = parse_release("vllm", "0.33.0"), parse_release("vllm", "0.34.0")
WORK = Workload(input_len=1024, output_len=256)


def _hand_peak(model, tokens, seqs):
    """vLLM's profile peak as core/memory/activations.py states it, written out again."""
    return tokens * 2 * (3 * model.ffn_size + 4 * model.hidden_size) + 2 * min(seqs, tokens) * model.vocab_size * 4


def test_llama_8b_on_h100_at_0_34_by_hand(deploy, catalog):
    """usable 79.19 GiB - context 0.5 - margin max(1, 0.75 x 1.885) - weights 14.96 - peak 1.885
    - non-torch 0.25 - graphs 0.9 = 59.28 GiB (0.33's estimate: 54.86 GiB, +8 %)."""
    dep = deploy(release=V34)
    gpu, model = catalog.gpu("h100-sxm"), catalog.model("llama-3.1-8b")
    usable = gpu.memory_bytes - 470 * units.MiB
    weights = weight_bytes_per_gpu(model, dep.weights, dep.parallel)
    peak = _hand_peak(model, 8192, 1024)  # H100: 8192 tokens, 1024 sequences per step
    margin = max(1 * units.GiB, 0.75 * peak)
    expected = usable - 0.5 * units.GiB - margin - weights - peak - (0.25 + 0.9) * units.GiB
    memory = gpu_memory(dep)
    assert dep.memory_fraction == 1.0 and memory.sizing == "vllm_measured"
    assert memory.kv_budget == pytest.approx(expected, rel=1e-12)
    assert memory.kv_budget / units.GiB == pytest.approx(59.28, abs=0.01)
    old = gpu_memory(deploy(release=V33))
    assert old.sizing == "vllm_estimated" and old.kv_budget / units.GiB == pytest.approx(54.86, abs=0.01)
    # the parts still add up to the GPU: what is held back is the context and the margin now
    parts = memory.weights + memory.activations + memory.overhead + memory.kv_budget + memory.held_back
    assert parts + memory.driver_reserved == pytest.approx(gpu.memory_bytes, rel=1e-12)
    assert memory.held_back == pytest.approx(0.5 * units.GiB + margin, rel=1e-12)


def test_a10_takes_the_1_gib_margin_floor(deploy, catalog):
    """A10: peak 0.47 GiB, so the margin is the 1 GiB floor: 22.03 - 0.5 - 1 - 14.96 - 0.47 - 1.15 = 3.95 GiB."""
    dep = deploy(gpu="a10", release=V34)
    model, usable = catalog.model("llama-3.1-8b"), catalog.gpu("a10").memory_bytes - 470 * units.MiB
    peak = _hand_peak(model, 2048, 256)  # A10 (24 GB): 2048 tokens, 256 sequences
    assert 0.75 * peak < 1 * units.GiB
    weights = weight_bytes_per_gpu(model, dep.weights, dep.parallel)
    expected = usable - 0.5 * units.GiB - 1 * units.GiB - weights - peak - 1.15 * units.GiB
    assert gpu_memory(dep).kv_budget == pytest.approx(expected, rel=1e-12)
    assert gpu_memory(dep).kv_budget / units.GiB == pytest.approx(3.95, abs=0.01)
    assert gpu_memory(deploy(gpu="a10", release=V33)).kv_budget / units.GiB == pytest.approx(3.69, abs=0.01)


def test_a_set_utilization_caps_the_measured_budget(deploy):
    """0.34 with the flag set: min(u x usable - N, free - margin) - peak: at 0.9 the flag binds and the
    budget is 0.33's form at 0.9; at 0.99 the device's free memory less the margin binds."""
    low, old = (
        gpu_memory(deploy(release=V34, gpu_memory_utilization=0.9)),
        gpu_memory(deploy(release=V33, gpu_memory_utilization=0.9)),
    )
    assert low.kv_budget == pytest.approx(old.kv_budget, rel=1e-9)
    high, unset = gpu_memory(deploy(release=V34, gpu_memory_utilization=0.99)), gpu_memory(deploy(release=V34))
    assert high.kv_budget == pytest.approx(unset.kv_budget, rel=1e-12)  # 1 % of 79 GiB < context + margin


def test_rocm_keeps_a_3_gib_floor_and_other_vendors_the_estimate(deploy, catalog):
    amd = gpu_memory(deploy(model="llama-3.1-8b", gpu="mi300x", release=V34))
    usable = catalog.gpu("mi300x").memory_bytes - 470 * units.MiB
    assert amd.sizing == "vllm_measured"
    assert amd.held_back == pytest.approx(0.5 * units.GiB + 3 * units.GiB, rel=1e-12)  # 0.75 x 1.9 GiB < 3
    assert amd.kv_budget == pytest.approx(usable - amd.held_back - amd.non_kv, rel=1e-12)
    gaudi = deploy(model="llama-3.1-8b", gpu="gaudi-3", release=V34)  # not CUDA or ROCm: no extensible cache
    assert gaudi.memory_fraction == 0.92 and gpu_memory(gaudi).sizing == "vllm_estimated"


def test_block_size_is_64_from_0_34_where_the_backend_takes_it(deploy):
    assert kv_block_size(deploy(release=V33)) == 16
    assert kv_block_size(deploy(release=V34)) == 64  # FLASH_ATTN on an H100
    assert kv_block_size(deploy(release=V34, block_size=16)) == 16  # --block-size is kept
    assert kv_block_size(deploy(gpu="mi300x", release=V34)) == 16  # ROCM_ATTN prefers 16
    assert kv_block_size(deploy(model="deepseek-v2-lite", gpu="mi300x", release=V34)) == 64  # TRITON_MLA
    result = estimate(deploy(release=V34), WORK)
    assert result.kv.capacity_tokens % 64 == 0


def test_cli_and_json_name_the_rule(cli):
    base = ("estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--json")
    cases = (("0.33.0", "vllm_estimated", 54.861, 16), ("0.34.0", "vllm_measured", 59.283, 64))
    for version, rule, budget, block in cases:
        code, out, _ = cli(*base, "--engine-version", version)
        data = json.loads(out)
        assert code == 0 and data["engine"]["kv_sizing"] == rule and data["engine"]["block_size"] == block
        assert data["kv"]["budget_gib_per_gpu"] == pytest.approx(budget, abs=1e-3)
        assert not any("newer than" in w for w in data["warnings"])
    code, out, _ = cli(*base[:-1], "--engine-version", "0.34.0")
    assert "KV sizing: from memory measured after warm-up" in out and "held back by margin" in out
    code, out, _ = cli(*base[:-1])
    assert "KV sizing: from a profiled estimate" in out and "held back by fraction" in out


def test_the_how_popover_shows_the_measured_formula(deploy):
    found = explain(estimate(deploy(release=V34), WORK))["kv_budget"]
    assert r"\max(M (1 - u),\ C + \max(m_0, 0.75 A))" in found.formula
    assert found.values.endswith(r"= 59.28\ \text{GiB}")
    assert r"M \cdot u - W - A - O" in explain(estimate(deploy(release=V33), WORK))["kv_budget"].formula


def test_the_explorer_names_the_rule():
    from tests.app_helpers import figures, open_app

    at = open_app(engine_version="0.34.0")
    assert any("measured after warm-up" in c.value and "0.34" in c.value for c in at.caption)
    names = {trace.get("name") for fig in figures(at) for trace in fig.get("data", [])}
    assert "Held back (CUDA context + margin)" in names
    at = open_app()
    assert any("profiled estimate" in c.value for c in at.caption)
