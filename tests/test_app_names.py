"""The sidebar's "find a model" box (ui/model_search.py): names as people type them, in the app."""

from __future__ import annotations

import pytest

from tests.app_helpers import metrics, open_app, shown


def search(at, typed: str):
    at.text_input(key="model_search").set_value(typed).run()
    assert not at.exception
    return at


def captions(at) -> str:
    return "\n".join(c.value for c in at.sidebar.caption)


def test_an_instruct_repo_selects_its_architecture_and_says_so():
    at = search(open_app(), "meta-llama/Llama-3.1-8B-Instruct")
    assert at.selectbox(key="model").value == "llama-3.1-8b"
    dep = at.session_state["scenario"].deployment
    assert dep.model.id == "llama-3.1-8b" and dep.model.hf_id == "meta-llama/Llama-3.1-8B-Instruct"
    assert "meta-llama/Llama-3.1-8B-Instruct -> Llama-3.1-8B architecture, bf16" in captions(at).replace("\\", "")


def test_a_quantized_upload_brings_its_format_and_the_plan_serves_the_typed_repo():
    at = search(open_app(gpu="NVIDIA L4"), "Qwen/Qwen3-8B-FP8")
    dep = at.session_state["scenario"].deployment
    assert dep.model.id == "qwen3-8b" and dep.weights.name == "fp8"  # weights "auto" = the checkpoint's FP8
    at.switch_page("pages/plan_page.py").run()
    assert not at.exception
    # the launch command's block (the answer sentence comes first, as text to copy)
    [command] = [c.value for c in at.code if c.value.startswith("vllm serve")]
    assert command.startswith("vllm serve Qwen/Qwen3-8B-FP8 ") and "--quantization" not in command


def test_loose_words_that_fit_several_models_list_them_and_change_nothing():
    at = open_app(model="Qwen3-8B")
    search(at, "llama 8b instruct")
    assert at.selectbox(key="model").value == "qwen3-8b"
    text = captions(at)
    assert "Llama-3.1-8B" in text and "Meta-Llama-3-8B" in text


def test_an_unknown_name_is_said_kept_and_stops_the_page():
    """Issue 28, item 9: the page used to go on computing for the previous model under the warning."""
    at = search(open_app(), "acme/Nonexistent-9000B")
    assert any("acme/Nonexistent-9000B" in w.value.replace("\\", "") for w in at.sidebar.warning)
    assert at.text_input(key="model_search").value == "acme/Nonexistent-9000B"
    assert "scenario" not in at.session_state  # not Llama-3.1-8B, which the list still shows
    assert not at.metric
    [error] = at.main.error
    assert "acme/Nonexistent-9000B" in shown(error) and "names no single catalog model" in shown(error)


def test_a_misspelt_name_stops_the_page_and_offers_the_closest_models_as_buttons():
    at = open_app(model="Qwen3-8B", gpu="NVIDIA L4")
    assert metrics(at)  # the Explorer computes for Qwen3-8B on an L4
    search(at, "lama-3.1-8b")
    assert not at.metric  # no metric for Qwen3-8B under the message
    assert "scenario" not in at.session_state
    [error] = at.main.error
    assert "Did you mean Llama-3.1-8B, Meta-Llama-3-8B or Llama-3.1-70B?" in shown(error)
    offered = [b for b in at.sidebar.button if b.key.startswith("model_search_pick_")]
    assert [b.label for b in offered] == ["Llama-3.1-8B", "Meta-Llama-3-8B", "Llama-3.1-70B"]
    assert at.text_input(key="model_search").value == "lama-3.1-8b"  # what was typed stays until a choice
    offered[0].click().run()
    assert not at.exception
    assert at.selectbox(key="model").value == "llama-3.1-8b"
    assert at.text_input(key="model_search").value == ""
    dep = at.session_state["scenario"].deployment
    assert (dep.model.id, dep.gpu.id) == ("llama-3.1-8b", "l4")  # the rest of the scenario kept
    assert metrics(at)


def test_an_ambiguous_name_stops_the_page_too():
    at = search(open_app(model="Qwen3-8B"), "mistral:7b")
    assert at.selectbox(key="model").value == "qwen3-8b"
    assert "scenario" not in at.session_state and not at.metric
    offered = [b.label for b in at.sidebar.button if b.key.startswith("model_search_pick_")]
    assert offered == ["Mistral-7B-v0.1", "Mistral-7B-v0.2", "Mistral-7B-Instruct-v0.3"]


@pytest.mark.parametrize(("typed", "model_id"), [("llama3.1:8b", "llama-3.1-8b"), ("qwen-3-32b", "qwen3-32b")])
def test_ollama_style_names_select_their_architecture(typed, model_id):
    at = search(open_app(), typed)
    assert at.selectbox(key="model").value == model_id
    assert at.session_state["scenario"].deployment.model.id == model_id
    assert f"{typed} -> " in captions(at).replace("\\", "")
    assert metrics(at)


def test_the_match_caption_follows_the_language():
    at = search(open_app(lang="zh"), "llama3.1:8b")
    assert "llama3.1:8b -> Llama-3.1-8B 架构，bf16" in captions(at).replace("\\", "")


@pytest.mark.parametrize(
    ("query", "model_id", "gpu_id"),
    [
        ({"gpu": "h100"}, "llama-3.1-8b", "h100-sxm"),
        ({"gpu": "rtx4090"}, "llama-3.1-8b", "rtx-4090"),
        ({"gpu": "nvidia a10"}, "llama-3.1-8b", "a10"),
        ({"model": "llama3.1:8b", "gpu": "H100 80GB"}, "llama-3.1-8b", "h100-sxm"),
        ({"model": "qwen-3-32b", "gpu": "a100 80gb"}, "qwen3-32b", "a100-80gb"),
    ],
)
def test_a_link_may_name_the_gpu_and_model_as_people_type_them(query, model_id, gpu_id):
    at = open_app(**query)
    dep = at.session_state["scenario"].deployment
    assert (dep.model.id, dep.gpu.id) == (model_id, gpu_id)
    assert not [w for w in at.warning if "This link asked for values" in w.value]  # all honoured


def test_a_link_naming_a_quantized_upload_keeps_its_format():
    at = open_app(model="Qwen/Qwen3-8B-FP8", gpu="l4")
    dep = at.session_state["scenario"].deployment
    assert dep.model.id == "qwen3-8b" and dep.weights.name == "fp8" and dep.model.hf_id == "Qwen/Qwen3-8B-FP8"
    assert at.text_input(key="model_search").value == "Qwen/Qwen3-8B-FP8"


def test_a_link_gpu_that_fits_several_boards_is_not_guessed():
    at = open_app(gpu="a100")
    assert at.session_state["scenario"].deployment.gpu.id == "a10"  # the default, with the link's notice
    assert any("`gpu=a100` ignored" in w.value for w in at.warning)


def test_picking_another_model_in_the_list_clears_the_search():
    at = search(open_app(), "google/gemma-2-9b-it")
    assert at.selectbox(key="model").value == "gemma-2-9b"
    at.selectbox(key="model").set_value("qwen3-8b").run()
    assert at.text_input(key="model_search").value == ""
    assert at.session_state["scenario"].deployment.model.hf_id == "Qwen/Qwen3-8B"


def test_a_shared_link_keeps_the_typed_name():
    at = open_app(model="Qwen3-8B", model_search="Qwen/Qwen3-8B-FP8")
    dep = at.session_state["scenario"].deployment
    assert dep.model.hf_id == "Qwen/Qwen3-8B-FP8" and dep.weights.name == "fp8"


def test_a_repo_outside_the_catalog_is_fetched_from_the_hub_on_request(monkeypatch, tmp_path):
    import huggingface_hub.constants

    from tests.hub_server import HubStandIn
    from tests.test_hub import TINY

    hub = HubStandIn({"acme/Tiny-Llama-Instruct": TINY})
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    try:
        at = search(open_app(), "acme/Tiny-Llama-Instruct")
        at.button(key="model_search_fetch").click().run()
        assert not at.exception
        dep = at.session_state["scenario"].deployment
        assert dep.model.hf_id == "acme/Tiny-Llama-Instruct" and dep.model.hidden_size == TINY["hidden_size"]
        assert "Matched" in captions(at)
    finally:
        hub.close()


def test_offline_the_fetch_says_so_and_keeps_the_name():
    at = search(open_app(), "acme/Never-Fetched")  # the tests run with HF_HUB_OFFLINE=1
    at.button(key="model_search_fetch").click().run()
    assert not at.exception
    assert any("paste or upload its config.json" in e.value for e in at.sidebar.error)
    assert at.text_input(key="model_search").value == "acme/Never-Fetched"
