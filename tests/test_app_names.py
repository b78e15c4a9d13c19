"""The sidebar's "find a model" box (ui/model_search.py): names as people type them, in the app."""

from __future__ import annotations

import pytest

from tests.app_helpers import open_app


@pytest.fixture(scope="module", autouse=True)
def warm_process():
    """In AppTest the first session of a process drops its first widget change (Streamlit's legacy
    pages/ mode before st.navigation has run; app.py handles it for a real server's first visitor),
    so these tests start after one session has run, whatever order pytest picks."""
    open_app().number_input(key="batch").set_value(2).run()


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
    command = at.code[0].value
    assert command.startswith("vllm serve Qwen/Qwen3-8B-FP8 ") and "--quantization" not in command


def test_loose_words_that_fit_several_models_list_them_and_change_nothing():
    at = open_app(model="Qwen3-8B")
    search(at, "llama 8b instruct")
    assert at.selectbox(key="model").value == "qwen3-8b"
    text = captions(at)
    assert "Llama-3.1-8B" in text and "Meta-Llama-3-8B" in text


def test_an_unknown_name_is_said_and_kept():
    at = search(open_app(), "acme/Nonexistent-9000B")
    assert any("acme/Nonexistent-9000B" in w.value.replace("\\", "") for w in at.sidebar.warning)
    assert at.text_input(key="model_search").value == "acme/Nonexistent-9000B"
    assert at.session_state["scenario"].deployment.model.id == "llama-3.1-8b"


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
