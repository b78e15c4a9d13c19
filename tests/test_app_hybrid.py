"""The pages show a hybrid model as what it is: KV only for its attention layers, the constant
state of the others with its formula, and the block size vLLM forces (AppTest)."""

from __future__ import annotations

from core.memory.state import state_bytes_per_request
from core.spec.engine import Parallelism
from tests.app_helpers import open_app


def _learn(model: str, gpu: str = "NVIDIA H200 SXM 141GB", **query):
    at = open_app(model=model, gpu=gpu, **query)
    at.switch_page("pages/learn_page.py")
    at.run()
    assert not at.exception
    return at


def test_learn_shows_the_gated_deltanet_state_with_its_values(catalog):
    at = _learn("Qwen3-Next-80B-A3B", tp="2", max_model_len="32768")
    state = next(x.value for x in at.latex if "state/request" in x.value)
    expected = state_bytes_per_request(catalog.model("qwen3-next-80b-a3b"), Parallelism(tp=2))
    assert expected == 19_759_104 and "19,759,104" in state and "36 \\times" in state
    block = next(x.value for x in at.latex if "block}_{cfg}" in x.value)
    assert block.rstrip().removesuffix("$$").rstrip().removesuffix(r"\end{aligned}").endswith(r"= 576\ \text{tokens}")
    kv = [x.value for x in at.latex if "KV/token" in x.value][1]  # the formula with this scenario's values
    assert "2 \\times 12 \\times 1" in kv  # 12 attention layers, one KV head per GPU at tp 2


def test_learn_shows_the_mamba2_state(catalog):
    at = _learn("Nemotron-H-56B-Base-8K", tp="2", max_model_len="8192")
    state = next(x.value for x in at.latex if "state/request" in x.value)
    expected = state_bytes_per_request(catalog.model("nemotron-h-56b"), Parallelism(tp=2))
    assert f"{expected:,.0f}" in state and "Mamba2" in state


def test_a_plain_model_has_no_state_formula():
    at = _learn("Llama-3.1-8B")
    assert not [x for x in at.latex if "state/request" in x.value or "block}_{cfg}" in x.value]


def test_catalog_lists_layer_kinds_and_state():
    at = open_app()
    at.switch_page("pages/catalog_page.py")
    at.run()
    frame = at.dataframe[0].value
    row = frame[frame["id"] == "qwen3-next-80b-a3b"].iloc[0]
    assert row["layer_kinds"] == "12 attention · 36 linear attention"  # the kinds in words
    assert row["state_bytes_per_request_16bit"] == 39_518_208 and row["kv_bytes_per_token_16bit"] == 24_576
    assert len(frame) >= 75


def test_explorer_says_the_state_beside_the_kv():
    at = open_app(model="Qwen3-Next-80B-A3B", gpu="NVIDIA H200 SXM 141GB", tp="2", max_model_len="32768")
    at.session_state["explorer_view"] = "Concurrency ceiling"  # the captions sit under its charts
    at.run()
    assert not at.exception
    captions = " ".join(c.value for c in at.caption)
    assert "19,759,104 B of state per request" in captions and "576-token blocks" in captions
