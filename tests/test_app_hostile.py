"""AppTest with hostile input: config pastes, names, custom GPUs and hand-edited links."""

from __future__ import annotations

import json
import re

import pytest

from tests.app_helpers import DATA, metrics, open_app, open_form, shown, submit_gpu_form


@pytest.fixture
def app():
    return open_app()


# --- hostile input ------------------------------------------------------------------------------

NINE_LAYERS = {
    "model_type": "llama",
    "hidden_size": 256,
    "intermediate_size": 512,
    "num_hidden_layers": 9,
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "vocab_size": 1000,
    "max_position_embeddings": 4096,
}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1, 2, 3]", "expected a JSON object"),
        ('"just a string"', "expected a JSON object"),
        ('{"model_type": "llama"}', "missing field"),
        (json.dumps(NINE_LAYERS | {"num_attention_heads": 0}), "invalid field 'num_attention_heads'"),
        (json.dumps(NINE_LAYERS | {"num_attention_heads": 30}), "multiple of"),
        (json.dumps(NINE_LAYERS | {"num_attention_heads": 6, "head_dim": 32}), "multiple of"),
        (json.dumps(NINE_LAYERS | {"num_hidden_layers": 1e12}), "invalid field 'num_hidden_layers'"),
        (json.dumps(NINE_LAYERS | {"vocab_size": -5}), "invalid field 'vocab_size'"),
        (json.dumps(NINE_LAYERS | {"hidden_size": "<script>alert(1)</script>"}), "invalid field 'hidden_size'"),
        ('{"model_type": "[click](javascript:alert(1))"}', "unsupported model_type"),
        ("{" * 5000, "invalid JSON"),
        ('{"a":' * 5000 + "1" + "}" * 5000, "nested deeper than 32 levels"),
        ('{"a":' * 40 + "1" + "}" * 40, "nested deeper than 32 levels"),
        ("\x00\x01\x02 binary junk", "invalid JSON"),
    ],
)
def test_hostile_config_pastes_are_messages_and_render_nothing(app, text, message):
    app.number_input(key="batch").set_value(5).run()
    open_form(app, "import")
    app.text_area(key="sidebar_paste").input(text)
    app.button(key="sidebar_add_model").click().run()
    assert not app.exception
    errors = [e for e in app.error if message in shown(e)]
    assert errors
    # user text is escaped: no live link, HTML tag or emphasis reaches the Markdown renderer
    assert not re.search(r"(?<!\\)\[click\]|(?<!\\)<script", errors[0].value)
    assert app.number_input(key="batch").value == 5 and metrics(app)["Fits"] in ("yes", "no")


@pytest.mark.parametrize("path", ["/etc/passwd", str(DATA / "tiny_llama_config.json"), "../pyproject.toml"])
def test_a_pasted_path_never_opens_a_server_file(app, path):
    open_form(app, "import")
    app.text_area(key="sidebar_paste").input(path)
    app.button(key="sidebar_add_model").click().run()
    assert not app.exception
    assert any("invalid JSON" in shown(e) for e in app.error)
    assert "custom_models" not in app.session_state or not app.session_state["custom_models"]


def test_a_model_name_with_html_or_markdown_is_cleaned(app):
    open_form(app, "import")
    app.text_area(key="sidebar_paste").input(json.dumps(NINE_LAYERS))
    app.text_input(key="sidebar_model_name").input("<img src=x onerror=alert(1)> [x](http://e) **b**")
    app.button(key="sidebar_add_model").click().run()
    assert not app.exception
    (model,) = app.session_state["custom_models"].values()
    assert not re.search(r"[<>\[\]*]", model.name)
    assert app.selectbox(key="model").value == model.id


def test_a_gpu_name_with_html_is_cleaned_and_impossible_links_are_messages(app):
    open_form(app, "gpu")
    app.text_input(key="sidebar_gpu_name").input("<b>lab</b> `card`")
    app.number_input(key="sidebar_gpu_link").set_value(0.0)
    submit_gpu_form(app)
    assert not app.exception
    gpu = app.session_state["custom_gpus"][app.selectbox(key="gpu").value]
    assert not re.search(r"[<>`]", gpu.name)
    app.selectbox(key="tp").set_value(2).run()  # no GPU-to-GPU link: two of them cannot work together
    assert not app.exception
    assert any("no GPU-to-GPU link" in shown(e) for e in app.error)


@pytest.mark.parametrize(
    "query",
    [
        {"batch": "-5", "input_len": "abc", "output_len": "1e999"},
        {"batch": "1e9", "tp": "1000", "util": "7", "block": "0"},
        {"prefix": "1e99", "prefix_hit": "-3", "offload_w": "1e9", "offload_kv": "nan"},
        {"spec": "evil", "draft": "<script>alert(1)</script>", "spec_k": "999", "spec_acc": "inf"},
        {"lora_n": "-1", "lora_r": "3", "lora_t": "<img>", "attn": "javascript:alert(1)"},
        {"lang": "<img src=x>", "model": "../../etc/passwd", "gpu": "%00", "weights": "fp3"},
        {"max_model_len": "-1", "mnbt": "9" * 400, "max_seqs": "[]", "eff_compute": "-1"},
    ],
)
def test_hand_edited_links_with_extreme_values_never_break_a_page(query):
    at = open_app(**query)
    assert not at.exception
    assert metrics(at)["Fits"] in ("yes", "no") or at.error
    for page in ("pages/plan_page.py", "pages/loadtest_page.py", "pages/learn_page.py"):
        at.switch_page(page).run()
        assert not at.exception


@pytest.mark.parametrize(
    "query",
    [
        {"plan_users": "1e30", "plan_prompt": "-1", "plan_ttft_ms": "nan", "load": "<b>"},
        {"load": "rate", "plan_rate": "0", "plan_replicas": "1e12", "plan_shared_prefix": "99999999"},
        {"lt_rate": "-1", "lt_count": "1e12", "lt_prompt": "0", "traffic": "bogus"},
    ],
)
def test_hand_edited_plan_and_load_test_links_are_messages(query):
    at = open_app(**query)
    for page in ("pages/plan_page.py", "pages/loadtest_page.py"):
        at.switch_page(page).run()
        assert not at.exception


def test_a_plan_longer_than_the_models_context_is_a_failed_check_not_a_traceback():
    # regression (found by tests/test_fuzz.py): check() raised when prompt + answer exceeded the context
    at = open_app(model="gemma-2-27b", gpu="NVIDIA H100 SXM5 80GB", plan_answer="9000", plan_answer_p95="9000")
    at.switch_page("pages/plan_page.py").run()
    assert not at.exception
    # the context failure is named among the failing limits (the worst one, the KV cache, binds)
    assert at.error[0].value.startswith("Not feasible:")
    assert "Context (P95 request vs max_model_len)" in at.error[0].value


def test_a_shared_prefix_longer_than_the_prompt_is_a_message_that_keeps_the_inputs():
    # the default prompt is 1,024 tokens; a 1,500-token shared prefix cannot be the start of it
    at = open_app(prefix="1500", input_len="1024")
    assert not at.exception
    assert any("shared prefix (1,500 tokens) is longer than the prompt (1,024 tokens)" in e.value for e in at.error)
    assert at.number_input(key="prefix").value == 1500  # what the user typed is kept
    at.number_input(key="prefix").set_value(512).run()
    assert not at.error and metrics(at)["Fits"] in ("yes", "no")
