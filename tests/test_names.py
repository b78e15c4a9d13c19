"""Model names as people type them (core/spec/names.py, core/spec/catalog.py resolve)."""

from __future__ import annotations

import json

import pytest

from core.spec.catalog import resolve
from core.spec.names import find_models, match_model, parse_name

# the ids users type most, each an instruct tune, dated release or quantized upload of a catalog architecture
TYPED = [
    ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b", None),
    ("meta-llama/Meta-Llama-3.1-8B-Instruct", "llama-3.1-8b", None),
    ("google/gemma-2-9b-it", "gemma-2-9b", None),
    ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b", None),
    ("Qwen/Qwen3-30B-A3B-Instruct-2507", "qwen3-30b-a3b", None),
    ("deepseek-ai/DeepSeek-V3-0324", "deepseek-v3", None),
    ("deepseek-ai/DeepSeek-R1-0528", "deepseek-r1", None),
    ("Qwen/Qwen3-8B-FP8", "qwen3-8b", "fp8"),
    ("meta-llama/Llama-3.1-8B-Instruct-FP8-Dynamic", "llama-3.1-8b", "fp8"),
    ("Qwen/Qwen2.5-7B-Instruct-AWQ", "qwen2.5-7b", "int4"),
    ("Qwen/Qwen2.5-72B-Instruct-GPTQ-Int4", "qwen2.5-72b", "int4"),
    ("Qwen/Qwen2.5-72B-Instruct-GPTQ-Int8", "qwen2.5-72b", "int8"),
    ("hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4", "llama-3.1-70b", "int4"),
    ("unsloth/Llama-3.2-1B-Instruct-bnb-4bit", "llama-3.2-1b", "int4"),
    ("RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16", "llama-3.1-8b", "int4"),
    ("RedHatAI/Qwen2.5-7B-Instruct-quantized.w8a8", "qwen2.5-7b", "int8"),
    ("nvidia/Llama-3.1-8B-Instruct-FP4", "llama-3.1-8b", "nvfp4"),
    ("THUDM/glm-4-9b-chat", "glm-4-9b", None),
    ("Llama-3.1-8B-Instruct", "llama-3.1-8b", None),
    ("qwen2.5 7b instruct", "qwen2.5-7b", None),
]


@pytest.mark.parametrize(("typed", "architecture", "weights"), TYPED)
def test_derived_repos_resolve_to_their_architecture(catalog, typed, architecture, weights):
    match = resolve(typed, catalog)
    assert match.model.id == architecture
    assert match.weight_dtype == weights
    assert match.how in ("derived", "id")


def test_exact_ids_names_and_hf_ids_match_as_they_stand(catalog):
    for typed in ("llama-3.1-8b", "Llama-3.1-8B", "META-LLAMA/LLAMA-3.1-8B", "  qwen3-8b "):
        match = resolve(typed, catalog)
        assert match.how == "id" and match.weight_dtype is None
    # a version in the name is kept when the catalog has it: v0.1 and v0.3 are two models
    assert resolve("mistralai/Mistral-7B-v0.1", catalog).model.id == "mistral-7b-v0.1"
    assert resolve("mistralai/Mistral-7B-Instruct-v0.3", catalog).model.id == "mistral-7b-v0.3"


def test_a_version_the_catalog_lacks_is_not_guessed(catalog):
    with pytest.raises(ValueError, match="unknown model"):
        resolve("Qwen/Qwen2-7B-Instruct", catalog)  # Qwen2-1.5B and Qwen2-72B are in the catalog, 7B is not
    with pytest.raises(ValueError, match="unknown model"):
        resolve("mistralai/Mistral-7B-Instruct-v0.4", catalog)
    assert resolve("mistralai/Mistral-7B-Instruct-v0.2", catalog).model.id == "mistral-7b-v0.2"  # not v0.3
    with pytest.raises(ValueError, match="unknown model"):
        resolve("Qwen/Qwen2.5-7B-Instruct-1M", catalog)  # a longer-context sibling, not the same shapes


def test_loose_words_find_the_closest_models_and_ambiguity_is_said(catalog):
    found, how = find_models("llama 8b instruct", catalog.models)
    assert how == "closest"
    assert {m.id for m in found[:3]} == {"llama-3-8b", "llama-3.1-8b", "deepseek-r1-distill-llama-8b"}
    assert match_model("llama 8b instruct", catalog.models) is None  # two are equally close
    with pytest.raises(ValueError, match="could be any of: llama-3-8b"):
        resolve("llama 8b instruct", catalog)
    assert match_model("qwen3 30b", catalog.models).model.id == "qwen3-30b-a3b"


def test_parse_name_sets_aside_tunes_and_quantization():
    parsed = parse_name("Qwen/Qwen2.5-72B-Instruct-GPTQ-Int8")
    assert parsed.tokens == ("qwen2.5", "72b")
    assert parsed.tune == ("instruct",)
    assert parsed.quantization == ("gptq", "int8")
    assert parsed.weight_dtype == "int8"  # the bit width beside the method wins


def test_served_name_is_the_repo_the_user_typed(catalog):
    match = resolve("Qwen/Qwen3-8B-FP8", catalog)
    model = match.deployed_model()
    assert model.hf_id == "Qwen/Qwen3-8B-FP8" and model.native_dtype == "fp8"
    assert resolve("qwen3-8b", catalog).served_name == "Qwen/Qwen3-8B"
    assert match.describe("fp8") == "Qwen/Qwen3-8B-FP8 -> Qwen3-8B architecture, fp8"


def test_cli_estimate_states_the_match_and_serves_the_typed_repo(cli):
    code, out, _ = cli("estimate", "--model", "Qwen/Qwen3-8B-FP8", "--gpu", "l4", "--max-model-len", "8192", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["weight_dtype"] == "fp8" and data["model"] == "qwen3-8b"
    assert data["model_match"]["summary"] == "Qwen/Qwen3-8B-FP8 -> Qwen3-8B architecture, fp8"
    code, out, _ = cli("check", "--model", "Qwen/Qwen3-8B-FP8", "--gpu", "l4", "--json")
    command = json.loads(out)["launch"]["command"]
    assert command.startswith("vllm serve Qwen/Qwen3-8B-FP8 ")
    assert "--quantization" not in command  # the checkpoint is FP8 already
    code, out, _ = cli(
        "estimate", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "a10", "--max-model-len", "8192"
    )
    assert out.splitlines()[0] == "model: meta-llama/Llama-3.1-8B-Instruct -> Llama-3.1-8B architecture, bf16"


def test_cli_says_which_models_an_ambiguous_name_could_mean(cli):
    code, _, err = cli("estimate", "--model", "llama 8b instruct", "--gpu", "a10")
    assert code == 2
    assert err.count("\n") == 1 and "llama-3.1-8b (meta-llama/Llama-3.1-8B)" in err


def test_reasoning_tunes_and_previews_resolve_to_their_architecture(catalog):
    assert resolve("Qwen/Qwen3-VL-8B-Thinking", catalog).model.id == "qwen3-vl-8b"
    assert resolve("Qwen/Qwen3-Next-80B-A3B-Instruct", catalog).model.id == "qwen3-next-80b-a3b"
    assert resolve("deepseek-ai/DeepSeek-V3.2-Exp", catalog).model.id == "deepseek-v3.2"
    assert resolve("Qwen/Qwen3-30B-A3B-Thinking-2507", catalog).model.id == "qwen3-30b-a3b"
