"""Every catalog entry is sourced, loads into a valid spec, and agrees with published figures."""

from __future__ import annotations

import datetime as dt
import tomllib

import pytest

from core.spec import units
from core.spec.catalog import DATA_DIR, load_gpu_file, load_model_file
from core.spec.params import parameter_counts

MODEL_FILES = sorted((DATA_DIR / "models").glob("*.toml"))
GPU_FILES = sorted((DATA_DIR / "gpus").glob("*.toml"))

REQUIRED_MODELS = [
    "llama-2-7b",
    "llama-2-13b",
    "llama-2-70b",
    "llama-3-8b",
    "llama-3.1-8b",
    "llama-3.1-70b",
    "llama-3.1-405b",
    "llama-3.2-1b",
    "llama-3.2-3b",
    "llama-3.3-70b",
    "qwen2.5-0.5b",
    "qwen2.5-7b",
    "qwen2.5-72b",
    "qwen3-0.6b",
    "qwen3-8b",
    "qwen3-32b",
    "qwen3-30b-a3b",
    "qwen3-235b-a22b",
    "mistral-7b-v0.3",
    "mixtral-8x7b",
    "deepseek-v2-lite",
    "deepseek-v3",
    "deepseek-r1",
    # 2025-2026 releases (issue 14)
    "qwen3-next-80b-a3b",
    "qwen3.5-27b",
    "qwen3.5-35b-a3b",
    "nemotron-h-56b",
    "nemotron-3-nano-30b-a3b",
    "deepseek-v3.2",
    "kimi-k2",
    "glm-4.5",
    "minimax-m2.5",
    "llama-4-scout-17b-16e",
    "llama-4-maverick-17b-128e",
    "gemma-3-4b",
    "qwen3-vl-8b",
    "deepseek-r1-distill-qwen-7b",
    "gemma-2-9b",
    "gemma-2-27b",
    "gemma-3-27b",
    "phi-3-mini",
    "phi-4",
    "glm-4-9b",
    "gpt-oss-20b",
    "gpt-oss-120b",
]
REQUIRED_GPUS = [
    "t4",
    "a10",
    "a10g",
    "l4",
    "l20",
    "l40s",
    "a100-40gb",
    "a100-80gb",
    "a800-80gb",
    "h100-pcie",
    "h100-sxm",
    "h800",
    "h20",
    "h200",
    "b200",
    "rtx-3090",
    "rtx-4090",
    "rtx-5090",
    "rtx-6000-ada",
    "mi300x",
    # what our users run (issue 14)
    "rtx-4060-ti-16gb",
    "rtx-4070-ti-super",
    "rtx-4080-super",
    "rtx-5080",
    "rtx-4090d",
    "a40",
    "l2",
    "v100-16gb",
    "b300",
    "gb200",
    "rtx-pro-6000-server",
    "mi250x",
    "mi355x",
    "gaudi-3",
]
# Publishers round active counts their own way; named exceptions with the reason, never silent.
ACTIVE_TOLERANCE = {
    # DeepSeek-V2 paper: "2.4B activated"; we count 2.45B without the embedding, 2.66B with it
    "deepseek-v2-lite": 0.03,
    # published only as the rounded "3B" of the name ("80B total parameters, only 3B active");
    # we count 3.87B with the embedding and LM head, 3.25B without (NVIDIA's NIM card says 3.9B)
    "qwen3-next-80b-a3b": 0.3,
    # "35B total/3B active" (the name's rounding); we count 3.45B
    "qwen3.5-35b-a3b": 0.16,
    # "Activated Parameters 32B", rounded; we count 32.9B with the 1.2B embedding, 31.7B without
    "kimi-k2": 0.03,
    # only the names' "A10B" and "A17B" were found; we count 9.77B and 17.35B
    "qwen3.5-122b-a10b": 0.03,
    "qwen3.5-397b-a17b": 0.03,
    # "Activated Parameters 32B" as for Kimi K2 (same text model)
    "kimi-k2.5": 0.03,
    # "A3B" of the name; we count 3.35B
    "qwen3-vl-30b-a3b": 0.12,
    # "120B (12B active)", rounded; we count 12.77B with the embedding and LM head, 11.70B without
    "nemotron-3-super-120b-a12b": 0.07,
}
ACTIVE_WITHOUT_EMBEDDING_AND_HEAD = {
    # published active counts that leave out the embedding and LM head (we count them as active):
    "glm-4.5",  # "32B active": 32.08B without them, 33.63B with
    "glm-5",  # "40B active": 39.88B without, 41.78B with
    "glm-5.1",
    "minimax-m2.5",  # the series' "10B activated" (MiniMax's report: 9.8B): 9.80B without, 11.03B with
    "minimax-m2.7",
}
TOTAL_TOLERANCE = {
    # the card's "Total Parameters 1T" is rounded to one figure; we count 1.026T
    "kimi-k2": 0.03,
    "kimi-k2.5": 0.03,
    # the 7.8B relayed count includes the MTP layer (one more decoder layer) we leave out: 7.62B
    "mimo-7b": 0.03,
}
ACTIVE_UNPUBLISHED = {
    # no activated-parameter figure found for V3.2 (the transformers docs give only the 685B total)
    "deepseek-v3.2",
}


def test_catalog_sizes(catalog):
    assert len(catalog.models) >= 75
    assert len(catalog.gpus) >= 40
    assert set(REQUIRED_MODELS) <= {m.id for m in catalog.models}
    assert set(REQUIRED_GPUS) <= {g.id for g in catalog.gpus}


@pytest.mark.parametrize("path", MODEL_FILES, ids=lambda p: p.stem)
def test_model_entry_is_sourced(path):
    entry = tomllib.loads(path.read_text())
    assert entry["source_url"].startswith("https://")
    assert entry["params_source_url"].startswith("https://")
    assert isinstance(entry["source_read"], dt.date)
    assert entry["config"]["model_type"]


@pytest.mark.parametrize("path", GPU_FILES, ids=lambda p: p.stem)
def test_gpu_entry_is_sourced(path):
    entry = tomllib.loads(path.read_text())
    assert entry["source_url"].startswith("https://")
    assert isinstance(entry["source_read"], dt.date)
    if entry.get("memory_mib_reported_basis", "driver") == "driver":
        assert entry["memory_reported_source_url"].startswith("https://")
    if "price" in entry:
        assert entry["price"]["source_url"].startswith("https://")
        assert isinstance(entry["price"]["source_read"], dt.date)


@pytest.mark.parametrize("path", MODEL_FILES, ids=lambda p: p.stem)
def test_model_parameter_count_matches_published(path):
    model = load_model_file(path)
    p = parameter_counts(model)
    assert p.total == pytest.approx(model.params_total_published, rel=TOTAL_TOLERANCE.get(model.id, 0.02))
    active = p.active - p.embedding if model.params_active_excludes_embedding else p.active
    if model.id in ACTIVE_WITHOUT_EMBEDDING_AND_HEAD:
        active = p.active - p.embedding - p.lm_head
    if model.params_active_published is None:  # a dense model's active count is its total
        assert not model.is_moe or model.id in ACTIVE_UNPUBLISHED
    else:
        published = model.params_active_published
        assert active == pytest.approx(published, rel=ACTIVE_TOLERANCE.get(model.id, 0.02))
    assert model.head_dim > 0 and model.num_heads % model.num_kv_heads == 0


@pytest.mark.parametrize("path", GPU_FILES, ids=lambda p: p.stem)
def test_gpu_figures_are_plausible(path):
    gpu = load_gpu_file(path)
    flops = dict(gpu.tensor_flops)
    # the driver shows a little less than the marketed decimal capacity, never more than 2.5 % above it
    assert 0.85 * gpu.memory_bytes_datasheet < gpu.memory_bytes < 1.1 * gpu.memory_bytes_datasheet
    assert 100 * units.GB <= gpu.memory_bandwidth <= 20 * units.TB
    sixteen = flops.get("bf16", flops.get("fp16"))
    assert 10 * units.TERA < sixteen < 5000 * units.TERA
    # lower precision is never slower than 16-bit on the same tensor cores
    for key in ("fp8", "int8", "int4", "fp4"):
        if key in flops:
            assert flops[key] >= sixteen


def test_a10_has_24_gb_not_28(catalog):
    # regression: a peer calculator lists the A10 with 28 GB; nvidia-smi shows 23028 MiB (ECC on)
    a10 = catalog.gpu("a10")
    assert a10.memory_bytes_datasheet == 24 * units.GB
    assert a10.memory_bytes == 23028 * units.MiB


def test_h100_dense_not_sparse(catalog):
    # NVIDIA lists 1979 TFLOPS BF16 "with sparsity" for the H100 SXM; the dense figure is half
    assert dict(catalog.gpu("h100-sxm").tensor_flops)["bf16"] == pytest.approx(989.4 * units.TERA, rel=0.01)


def test_rtx_4090_uses_fp32_accumulate_rate(catalog):
    # Ada whitepaper: 165.2 TFLOPS FP16 with FP32 accumulate (330.3 is the FP16-accumulate rate)
    assert dict(catalog.gpu("rtx-4090").tensor_flops)["fp16"] == pytest.approx(165.2 * units.TERA)


def test_lookup_by_hf_id_is_case_insensitive(catalog):
    assert catalog.model("META-LLAMA/Llama-3.1-8B").id == "llama-3.1-8b"
    with pytest.raises(KeyError):
        catalog.model("no-such-model")
