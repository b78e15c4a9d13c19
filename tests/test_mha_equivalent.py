"""GQA, MQA and MLA against their MHA equivalent, as the chapters compare them: the numbers, the
``estimate`` lines and the JSON fields."""

from __future__ import annotations

import json

import pytest

from core.memory.kv import kv_bytes_per_sequence, kv_bytes_per_token, mha_equivalent, mha_equivalent_kv_bytes_per_token
from core.spec import units
from core.spec.engine import Parallelism
from core.spec.precision import KV_PRECISIONS

BF16 = KV_PRECISIONS["bf16"]


def test_llama3_8b_gqa_against_its_mha_equivalent(catalog):
    # DOMAIN.md: the real Llama-3-8B (8 KV heads) holds 0.125 GiB per 1024 tokens; the chapter's
    # 32-KV-head figure, its MHA equivalent, is 0.5 GiB
    model = catalog.model("llama-3-8b")
    mha = mha_equivalent(model)
    assert (model.num_kv_heads, mha.num_kv_heads, mha.head_dim) == (8, 32, 128)
    assert kv_bytes_per_sequence(model, BF16, Parallelism(), 1024) / units.GiB == pytest.approx(0.125)
    assert kv_bytes_per_sequence(mha, BF16, Parallelism(), 1024) / units.GiB == pytest.approx(0.5)


def test_an_mha_model_is_its_own_equivalent(catalog):
    model = catalog.model("llama-2-7b")
    assert mha_equivalent(model) is model
    assert mha_equivalent_kv_bytes_per_token(model, BF16, Parallelism()) == 2 * 32 * 32 * 128 * 2


def test_mla_against_mha_with_its_heads_and_qk_v_widths(catalog):
    # DeepSeek-V3: a 512 + 64 latent per layer against 128 heads x (192 K + 128 V) per layer
    model = catalog.model("deepseek-v3")
    mha = mha_equivalent(model)
    assert mha.mla is None and mha.num_kv_heads == 128
    assert kv_bytes_per_token(model, BF16, Parallelism()) == 61 * (512 + 64) * 2
    assert kv_bytes_per_token(mha, BF16, Parallelism()) == 61 * 128 * (192 + 128) * 2
    # under tensor parallelism the MHA heads split, the latent does not
    assert mha_equivalent_kv_bytes_per_token(model, BF16, Parallelism(tp=8)) == 61 * 16 * (192 + 128) * 2


def test_only_the_attention_layers_kv_heads_change(catalog):
    # sliding-window layers keep their window, a hybrid's linear layers their state
    gemma = catalog.model("gemma-2-9b")
    mha = mha_equivalent(gemma)
    assert mha.sliding_layers == gemma.sliding_layers and mha.sliding_window == gemma.sliding_window
    ratio = gemma.num_heads // gemma.num_kv_heads
    for tokens in (1024, 8192):
        own = kv_bytes_per_sequence(gemma, BF16, Parallelism(), tokens)
        assert kv_bytes_per_sequence(mha, BF16, Parallelism(), tokens) == pytest.approx(ratio * own)
    hybrid = catalog.model("qwen3-next-80b-a3b")
    mha = mha_equivalent(hybrid)
    assert mha.mixer_kinds == hybrid.mixer_kinds and mha.linear_attention == hybrid.linear_attention
    assert mha.num_kv_heads == hybrid.num_heads


def _kv_block(out: str) -> list[str]:
    lines = out.splitlines()
    start = lines.index("KV cache")
    return lines[start : lines.index("", start)]


def test_estimate_shows_gqa_against_mha(cli):
    code, out, _ = cli("estimate", "--model", "llama-3.1-8b", "--gpu", "a10")
    assert code == 0
    block = _kv_block(out)
    assert "  MHA equivalent              512.0 KiB per token (32 KV heads, one per query head)" in block
    assert "  GQA stores 4.0x less KV than MHA would: 8 of 32 KV heads" in block
    (line,) = [line for line in block if line.startswith("  MHA concurrency at request length")]
    (own,) = [line for line in block if line.startswith("  max concurrency at request length")]
    assert int(line.split()[5]) < int(own.split()[5])


def test_estimate_says_an_mha_model_is_already_mha(cli):
    code, out, _ = cli("estimate", "--model", "llama-2-7b", "--gpu", "a10")
    block = _kv_block(out)
    assert code == 0 and "  already MHA: 32 KV heads, one per query head (GQA, MQA or MLA would store less)" in block
    assert not any("MHA equivalent" in line or "stores" in line for line in block)


def test_estimate_says_what_mha_equivalent_means_for_mla(cli):
    code, out, _ = cli("estimate", "--model", "deepseek-v2-lite", "--gpu", "h100-sxm")
    block = _kv_block(out)
    assert code == 0
    mha = "  MHA equivalent              270.0 KiB per token (16 heads x (192 K + 128 V) values per layer, no latent)"
    assert mha in block
    assert (
        "  MLA stores 8.9x less KV than MHA would: one 576-value latent per layer instead of 16 K and V heads" in block
    )


@pytest.mark.parametrize(
    ("model", "gpu", "saving"),
    [("llama-3.1-8b", "a10", 4.0), ("llama-2-7b", "a10", 1.0), ("deepseek-v2-lite", "h100-sxm", 8.889)],
)
def test_estimate_json_has_the_mha_equivalent(cli, model, gpu, saving):
    code, out, _ = cli("estimate", "--model", model, "--gpu", gpu, "--json")
    assert code == 0
    kv = json.loads(out)["kv"]
    mha = kv["mha_equivalent"]
    assert set(mha) == {"bytes_per_token", "bytes_per_request", "max_concurrency_at_request_len", "kv_saving"}
    assert mha["kv_saving"] == saving
    assert mha["bytes_per_token"] == pytest.approx(saving * kv["bytes_per_token"], rel=1e-3)
    if saving == 1.0:
        assert mha["max_concurrency_at_request_len"] == kv["max_concurrency_at_request_len"]
    else:
        assert mha["max_concurrency_at_request_len"] < kv["max_concurrency_at_request_len"]
