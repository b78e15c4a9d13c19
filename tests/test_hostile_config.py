"""Hostile config.json files through every door a model comes in by (issue 29, item 10; audit 4b, 4c,
4e: F2, F5, F12): pasted and uploaded in the sidebar (AppTest), named on the command line (a real
``python -m core`` process), fetched from the Hub (the loopback stand-in, in core and from the
model search). Each file gives a clear one-line message naming what is wrong, or is taken with a
word about what was assumed; none gives an exception or a traceback."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import huggingface_hub.constants
import pytest

from core.spec.hf_config import MAX_CONFIG_BYTES, ConfigError, model_from_config, read_config
from core.spec.hub import HubError, fetch_model
from tests.app_helpers import open_app, open_form, shown
from tests.hub_server import HubStandIn

ROOT = Path(__file__).resolve().parents[1]
TINY = json.loads((Path(__file__).parent / "data" / "tiny_llama_config.json").read_text())
MIXTRAL = {**TINY, "model_type": "mixtral", "num_local_experts": 8, "num_experts_per_tok": 2}
PHISH = "[Official answer key](https://evil.example/phish)"


def cfg(**change) -> bytes:
    """The tiny Llama config with ``change`` (a None value drops the field)."""
    return json.dumps({k: v for k, v in {**TINY, **change}.items() if v is not None}).encode()


def raw(**fields: str) -> bytes:
    """The tiny Llama config with fields written as raw JSON text (what json.dumps cannot write);
    a key starting with ``RAW:`` is written as it stands, unquoted."""
    text = json.dumps({k: v for k, v in TINY.items() if k not in fields})[:-1]
    added = "".join(f", {k[4:] if k.startswith('RAW:') else json.dumps(k)}: {v}" for k, v in fields.items())
    return (text + added + "}").encode()


ACCEPTED = "accepted"
DTYPE = "torch_dtype {value} in this config.json is not one this tool reads (bfloat16, float16 or float32)"
CASES = [
    # (case, the file's bytes, the message every door gives, or ACCEPTED / a notice about what was assumed)
    ("valid", cfg(), ACCEPTED),
    ("padded to 1.9 MB", cfg(pad=" " * 1_900_000), ACCEPTED),
    ("a Markdown link as its name", cfg(_name_or_path=PHISH), ACCEPTED),
    ("torch_dtype float1024", cfg(torch_dtype="float1024"), DTYPE.format(value="'float1024'")),
    ("torch_dtype a list", cfg(torch_dtype=["bfloat16"]), DTYPE.format(value="['bfloat16']")),
    ("[ x 100,000", b"[" * 100_000, "nested deeper than 32 levels"),
    ('{"a": x 5,000', b'{"a":' * 5000 + b"1" + b"}" * 5000, "nested deeper than 32 levels"),
    ("depth 33", b'{"a":' * 33 + b"1" + b"}" * 33, "nested deeper than 32 levels"),
    ("hidden_size 0", cfg(hidden_size=0), "invalid field 'hidden_size': expected a positive integer, got 0"),
    ("heads 7", cfg(num_attention_heads=7, num_key_value_heads=7), "is not a multiple of num_attention_heads (7)"),
    ("kv heads 3", cfg(num_key_value_heads=3), "invalid field 'num_key_value_heads'"),
    ("layers -4", cfg(num_hidden_layers=-4), "invalid field 'num_hidden_layers': expected a positive integer"),
    ("layers 0", cfg(num_hidden_layers=0), "invalid field 'num_hidden_layers': expected a positive integer"),
    ("NaN", raw(hidden_size="NaN"), "invalid field 'hidden_size': expected a positive integer, got nan"),
    ("Infinity", raw(hidden_size="Infinity"), "invalid field 'hidden_size': expected a positive integer, got inf"),
    ("1e308", raw(hidden_size="1e308"), "invalid field 'hidden_size': expected a positive integer, got 1e+308"),
    ("hidden 10^30", cfg(hidden_size=10**30), "is implausibly large (max 1e9)"),
    ("hidden as text", cfg(hidden_size="2048"), "invalid field 'hidden_size': expected a positive integer, got '2048'"),
    ("hidden true", cfg(hidden_size=True), "invalid field 'hidden_size': expected a positive integer, got True"),
    ("not JSON", b"hello", "invalid JSON at line 1 column 1"),
    ("truncated", cfg()[:-20], "invalid JSON at line 1"),
    ("binary", bytes(range(256)), "not UTF-8 text"),
    ("UTF-16", cfg().decode().encode("utf-16"), "not UTF-8 text"),
    ("UTF-8 BOM", b"\xef\xbb\xbf" + cfg(), "Unexpected UTF-8 BOM"),
    ("blank", b" \n", "invalid JSON at line 2 column 1"),
    ("a list", b"[1, 2]", "expected a JSON object, got list"),
    ("unknown model_type", cfg(model_type="bert"), "unsupported model_type 'bert'"),
    ("model_type <script>", cfg(model_type="<script>alert(1)</script>"), "unsupported model_type '<script>"),
    ("model_type a list", cfg(model_type=["llama"]), "unsupported model_type a list"),
    ("unknown quant_method", cfg(quantization_config={"quant_method": "magic"}), "unsupported quant_method 'magic'"),
    ("quantization_config text", cfg(quantization_config="fp8"), "field 'quantization_config' must be an object"),
    (
        "weight_block_size junk",
        cfg(quantization_config={"quant_method": "fp8", "weight_block_size": "x"}),
        "field 'weight_block_size' must be two positive integers",
    ),
    ("experts 0", cfg(**{**MIXTRAL, "num_local_experts": 0}), "invalid field 'num_local_experts'"),
    ("top-k over experts", cfg(**{**MIXTRAL, "num_experts_per_tok": 9}), "experts_per_token (9) exceeds num_experts"),
    ("duplicate keys", cfg()[:-1] + b', "hidden_size": 0}', "invalid field 'hidden_size'"),
    # audit F2/F5: json.loads' own ValueError escaped the page, the Hub path and named nothing in the CLI
    ("5,000-digit field", raw(hidden_size="9" * 5000), "invalid field 'hidden_size': an integer of 5,000 digits"),
    ("50,000-digit unknown key", raw(foo="9" * 50_000), "invalid field 'foo': an integer of 50,000 digits"),
    ("negative 5,000 digits", raw(foo="-" + "9" * 5000), "invalid field 'foo': an integer of 5,000 digits"),
    (
        "5,000 digits nested",
        raw(text_config='{"hidden_size": ' + "9" * 5000 + "}"),
        "invalid field 'text_config.hidden_size': an integer of 5,000 digits",
    ),
    ("lone surrogate", raw(model_type='"\\ud800"'), "invalid field 'model_type': text with a lone UTF-16 surrogate"),
    ("lone surrogate key", raw(**{'RAW:"\\udc80"': "1"}), "text with a lone UTF-16 surrogate"),
    ("over 2 MB", cfg(pad=" " * 3_000_000), "larger than 2000000 bytes"),
]
IDS = [case for case, _, _ in CASES]
ERRORS = [
    (case, data, expected) for case, data, expected in CASES if expected != ACCEPTED and "torch_dtype" not in expected
]
HUB_SAYS = {"over 2 MB": "over the 2,000,000 a config.json may have: refused before downloading"}
"""Where the Hub's answer differs: it refuses an oversized file on its stated size, before downloading."""


def test_the_cases_cover_the_audits_forty_files():
    assert len(CASES) >= 40 and len(set(IDS)) == len(IDS)


@pytest.mark.parametrize(("case", "data", "expected"), CASES, ids=IDS)
def test_core_reads_or_refuses_each_file_naming_the_field(case, data, expected):
    if expected == ACCEPTED or "torch_dtype" in expected:
        model_from_config(read_config(data))
        return
    with pytest.raises(ConfigError) as refused:
        model_from_config(read_config(data))
    assert expected in str(refused.value) and "\n" not in str(refused.value)


# --- the sidebar: paste and upload ----------------------------------------------------------------


@pytest.fixture
def sidebar():
    app = open_app()  # one per case (0.1 s): a case that breaks the page cannot hide the next one's outcome
    open_form(app, "import")
    return app


def added(app, expected: str) -> None:
    """The import's outcome is what ``expected`` says, on a page with no exception."""
    assert not app.exception
    if expected == ACCEPTED:
        assert app.success and not app.error
        assert not any(re.search(r"(?<!\\)\[|\]\(|://", s.value) for s in app.success)  # no live link
    elif "torch_dtype" in expected:  # taken, with what was assumed (audit F12: silently bf16 before)
        assert not app.error
        assert any(expected in shown(w) and "taken as bf16" in shown(w) for w in app.warning)
    else:
        assert any(expected in shown(e) for e in app.error), [e.value for e in app.error]


@pytest.mark.parametrize(("case", "data", "expected"), CASES, ids=IDS)
def test_a_pasted_file_is_a_message_never_an_exception(sidebar, case, data, expected):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        pytest.skip("not text: only an upload can carry these bytes")
    if len(text) > MAX_CONFIG_BYTES:
        pytest.skip("the box takes at most MAX_CONFIG_BYTES characters (max_chars): only an upload can be larger")
    sidebar.text_area(key="sidebar_paste").input(text)
    sidebar.button(key="sidebar_add_model").click().run()
    added(sidebar, expected)


@pytest.mark.parametrize(("case", "data", "expected"), CASES, ids=IDS)
def test_an_uploaded_file_is_a_message_never_an_exception(sidebar, case, data, expected):
    sidebar.file_uploader(key="sidebar_upload").set_value(("config.json", data, "application/json"))
    sidebar.button(key="sidebar_add_model").click().run()
    added(sidebar, expected)


def test_a_typed_name_that_had_to_be_cleaned_says_so():
    app = open_app()
    open_form(app, "import")
    app.text_area(key="sidebar_paste").input(cfg().decode())
    app.text_input(key="sidebar_model_name").input(PHISH)
    app.button(key="sidebar_add_model").click().run()
    assert not app.exception
    (model,) = app.session_state["custom_models"].values()
    assert model.name == "Official answer key (https:/evil.example/phish)"  # no link, no URL left to link
    (note,) = app.warning
    assert "The name is shown as “Official answer key (https:/evil.example/phish)”" in shown(note)


# --- the command line: a real process -------------------------------------------------------------


@pytest.fixture(scope="module")
def cli_answers(tmp_path_factory):
    """``python -m core estimate --gpu a10 --model FILE`` for every case, four processes at a time."""
    folder = tmp_path_factory.mktemp("hostile")

    def run(index: int) -> subprocess.CompletedProcess:
        path = folder / f"case{index}.json"
        path.write_bytes(CASES[index][1])
        command = [sys.executable, "-m", "core", "estimate", "--gpu", "a10", "--model", str(path)]
        return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)

    with ThreadPoolExecutor(4) as pool:
        return dict(zip(IDS, pool.map(run, range(len(CASES))), strict=True))


@pytest.mark.parametrize(("case", "data", "expected"), CASES, ids=IDS)
def test_the_cli_answers_or_refuses_each_file_in_one_line(cli_answers, case, data, expected):
    answer = cli_answers[case]
    assert "Traceback" not in answer.stderr
    if expected == ACCEPTED or "torch_dtype" in expected:
        assert answer.returncode == 0, answer.stderr
        assert "](" not in answer.stdout and "://" not in answer.stdout.split("\n", 1)[0]
        if "torch_dtype" in expected:  # audit F12: the header said bf16 and nothing else
            assert f"note: {expected}" in answer.stdout
        return
    assert answer.returncode == 2 and answer.stdout == ""
    assert answer.stderr.count("\n") == 1 and answer.stderr.startswith("error: config.json: ")
    assert expected in answer.stderr


# --- the Hub: the loopback stand-in ---------------------------------------------------------------


@pytest.fixture(scope="module")
def hostile_hub(tmp_path_factory):
    repos = {f"hostile/case-{i}": data for i, (_, data, _) in enumerate(CASES)}
    server = HubStandIn(repos)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
        patch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path_factory.mktemp("hf-cache")))
        patch.setenv("HF_ENDPOINT", server.url)
        yield server
    server.close()


@pytest.mark.parametrize(("case", "data", "expected"), ERRORS, ids=[c for c, _, _ in ERRORS])
def test_a_fetched_file_is_a_config_or_hub_error_naming_the_field(hostile_hub, case, data, expected):
    with pytest.raises((ConfigError, HubError)) as refused:  # a plain ValueError escaped before (audit F5)
        fetch_model(f"hostile/case-{IDS.index(case)}", deadline_s=5)
    assert HUB_SAYS.get(case, expected) in str(refused.value) and "\n" not in str(refused.value)


@pytest.mark.parametrize("case", ["5,000-digit field", "torch_dtype float1024", "valid"])
def test_the_model_search_fetch_says_what_went_wrong_or_what_was_assumed(hostile_hub, case):
    repo = f"hostile/case-{IDS.index(case)}"
    app = open_app()
    app.text_input(key="model_search").set_value(repo).run()
    app.button(key="model_search_fetch").click().run()
    assert not app.exception
    expected = dict((c, e) for c, _, e in CASES)[case]
    if expected == ACCEPTED:
        assert app.session_state["scenario"].deployment.model.hf_id == repo and not app.sidebar.warning
    elif "torch_dtype" in expected:
        assert app.session_state["scenario"].deployment.model.hf_id == repo
        assert any(expected in shown(w) for w in app.sidebar.warning)
    else:
        assert any(expected in shown(e) for e in app.sidebar.error)
