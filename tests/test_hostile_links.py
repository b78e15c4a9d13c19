"""Hostile links (issue 29, item 10): the URL classes of the 2026-12 reliability audit (section 4,
"URLs": numbers out of range, names, ``mcfg``, ``cmp``, unicode digits, the silent ones) opened as
a browser opens them, each honoured or named in the link's notice, none an exception, and nothing a
link carries drawn on a page as a link or formatting.

Probes of the same page that set different keys share one session (an AppTest run each), so the
76 probes take about 40 runs.
"""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
import zlib
from collections import defaultdict

import pytest

from core.spec import json_fields
from tests.app_helpers import DATA, shown
from tests.test_app_links import open_at
from ui.link_state import MAX_MODEL_CHARS
from ui.query_limit import DROPPED_PARAM, MAX_QUERY_CHARS, MAX_QUERY_FIELDS, QueryLimit, too_long
from ui.safe import NAME_MAX

TINY = json.loads((DATA / "tiny_llama_config.json").read_text())
TITLES = {
    "": "LLM Inference Tradeoff Explorer",
    "plan": "Plan: can this setup serve the load?",
    "load-test": "Load test: where does TTFT avalanche?",
    "compare": "Compare scenarios",
}
PAGES = ["", "plan", "load-test", "validation", "learn", "workshop", "compare", "catalog"]
"""Every page's URL path (the Explorer at the root)."""


def notice(at) -> str:
    """The link's notice as the reader sees it ("" when there is none)."""
    found = [shown(w) for w in at.warning if "This link asked for values" in w.value]
    assert len(found) <= 1
    return found[0] if found else ""


def quoted(raw: str) -> str:
    """A link's value as the notice quotes it (ui.link_state: 40 characters, control characters as spaces)."""
    text = raw if len(raw) <= 40 else raw[:40] + "…"
    return "".join(" " if not c.isprintable() else c for c in text)


def texts(at) -> list[str]:
    """What every element of the page holds, as protobuf text (Markdown bodies, labels, options, tables)."""

    def walk(node):
        children = getattr(node, "children", None)
        if isinstance(children, dict):
            for child in children.values():
                yield from walk(child)
        elif getattr(node, "proto", None) is not None:
            yield str(node.proto)

    return list(walk(at._tree))


def _token(raw: bytes) -> str:
    return base64.urlsafe_b64encode(zlib.compress(raw, 9)).rstrip(b"=").decode()


def _model_link(name: str, config: object = None) -> str:
    return json_fields.pack({"n": name, "c": TINY if config is None else config}, 10**7)


# --- numbers out of range or malformed: the value named with what the input takes ------------------------

LENGTHS = "1-163,840"
NUMBERS = [  # (page, key, value, what the notice says the input takes)
    *[
        ("", "batch", raw, "1-1024")
        for raw in ("-5", "0", "nan", "inf", "-inf", "1e308", "1e999", "9" * 5000, "abc", "", "8.5", "\x00")
    ],
    *[("", "util", raw, "0.5-1.0") for raw in ("nan", "-0.5", "1e308")],
    ("", "input_len", "1e308", LENGTHS),
    ("", "output_len", "-1", LENGTHS),
    ("", "tp", "0", "1, 2, 4, 8"),
    ("", "tp", "3", "1, 2, 4, 8"),
    ("", "eff_bw", "2", "0.05-1"),
    ("", "overhead_fix", "-inf", "-64 to 64"),
    ("", "overhead_fix", "1e308", "-64 to 64"),
    ("", "lora_n", "-1", "0 to 512"),
    ("plan", "plan_prompt", "0", "1 to 10,000,000"),
    ("plan", "plan_users", "-5", "1 to 10,000,000"),
    # the audit's silent ones: an infinite value on a page other than the Explorer opened the Explorer
    ("plan", "plan_users", "1e999", "1 to 10,000,000"),
    ("plan", "plan_think", "1e999", "0 to 86,400"),
    ("load-test", "lt_rate", "1e999", "0.001 to 100,000"),
    ("plan", "load", "<script>", "users, in_flight, rate"),  # an option the input does not offer
]


def _sessions(probes):
    """The probes packed into sessions: one per page and round, no key twice in one."""
    sessions: dict[tuple[str, int], dict] = defaultdict(dict)
    for probe in probes:
        page, key = probe[0], probe[1]
        number = next(n for n in range(len(probes)) if key not in sessions[page, n])
        sessions[page, number][key] = probe
    return [
        pytest.param(page, list(group.values()), id=f"{page or 'explorer'}-{n}")
        for (page, n), group in sessions.items()
    ]


@pytest.mark.parametrize(("page", "probes"), _sessions(NUMBERS))
def test_a_number_or_option_a_link_cannot_take_is_named_with_what_the_input_takes(page, probes):
    at = open_at(page, **{key: raw for _, key, raw, _ in probes})
    assert at.title[0].value == TITLES[page]  # the page the link named, not the Explorer
    text = notice(at)
    for _, key, raw, domain in probes:
        assert f"`{key}={quoted(raw)}` ignored: must be {domain}" in text, (key, raw)


def test_a_rate_a_link_cannot_take_is_named_where_the_load_is_a_rate():
    at = open_at("plan", load="rate", plan_rate="-1")
    assert "`plan_rate=-1` ignored: must be 0.001 to 1,000,000" in notice(at)


def test_numbers_in_other_scripts_and_a_language_are_taken():
    for digits in ("３２", "٣٢"):  # fullwidth and Arabic-Indic 32
        at = open_at("", batch=digits, lang="zh")
        assert not notice(at) and at.number_input(key="batch").value == 32
        assert at.segmented_control(key="lang").value == "zh"


# --- names: a model, GPU or language the lists do not have ---------------------------------------------


@pytest.mark.parametrize(
    ("model", "gpu", "lang"),
    [
        ("<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "<script>"),
        ("../../etc/passwd", None, None),
        ("M" * 100_000, None, None),
        ("Ⅼlama-3.1-8B", None, None),  # a Roman numeral fifty for the L
    ],
    ids=["html", "path", "100k", "lookalike"],
)
def test_a_name_the_lists_do_not_have_is_named_and_drawn_as_text(model, gpu, lang):
    query = {key: value for key, value in (("model", model), ("gpu", gpu), ("lang", lang)) if value is not None}
    at = open_at("", **query)
    text = notice(at)
    for key, value in query.items():
        assert f"`{key}={quoted(value)}` ignored: must be" in text
    assert at.session_state["model"] == "llama-3.1-8b" and at.session_state["gpu"] == "a10"
    # quoted inside a code span (Markdown draws it as it is), unescaped
    raw = next(w.value for w in at.warning if "This link asked" in w.value)
    assert f"`model={quoted(model)}`" in raw


@pytest.mark.parametrize("typed", ["x" * 5000, "<script>", "evil/config"])
def test_a_model_search_that_names_no_model_is_a_message(typed):
    at = open_at("", model_search=typed)
    assert any("No catalog model matches" in shown(w) for w in at.warning)
    assert any("names no single catalog model" in shown(e) for e in at.error)


# --- mcfg: a model carried in the link ---------------------------------------------------------------------

MODEL_LINKS = [  # (token, what the notice says)
    (secrets.token_urlsafe(75_000)[:100_000], f"more than the {MAX_MODEL_CHARS} a link may carry"),
    (_token(b'{"c":"' + b"a" * 4_400_000 + b'"}'), "inflates to more than 2000000 bytes"),  # a zlib bomb
    (_token(b"[" * 2500), "not JSON text"),
    (_token(b'{"n":"x","c":' + b"[" * 35 + b"]" * 35 + b"}"), "nested deeper than"),
    ("<script>", "not base64url"),
    (_model_link("x", TINY | {"hidden_size": 0}), "hidden_size"),
    (_model_link("x", TINY | {"num_hidden_layers": -4}), "num_hidden_layers"),
    (_model_link("x", TINY | {"num_attention_heads": 7}), "num_attention_heads"),
    (_model_link("x", TINY | {"hidden_size": 1e30}), "hidden_size"),
    (_model_link("x", TINY | {"vocab_size": 1e308}), "vocab_size"),
    (_token(b'{"n":"x","c":{"hidden_size":NaN}}'), "not JSON text"),
    (_model_link("x", [1, 2]), "not an object holding a config.json"),
]


@pytest.mark.parametrize(("token", "said"), MODEL_LINKS, ids=[said for _, said in MODEL_LINKS])
def test_a_model_link_that_cannot_be_imported_is_named_and_the_default_model_stays(token, said):
    at = open_at("", mcfg=token)
    text = notice(at)
    assert f"`mcfg={quoted(token[:24] + '…')}` ignored: must be" in text and said in text
    assert at.session_state["model"] == "llama-3.1-8b" and not at.session_state.get("custom_models")


@pytest.mark.parametrize(
    "name",
    ["[Official answer key](https://evil.example/phish)", "<script>alert(1)</script>", "N" * 5000, "**bold** _x_ `c`"],
    ids=["markdown-link", "html", "5000", "formatting"],
)
def test_a_model_name_from_a_link_is_cleaned_before_any_page_shows_it(name):
    # the audit's F6: the name inside mcfg reached the pages as it was; Compare drew the Markdown link
    at = open_at("compare", mcfg=_model_link(name))
    assert at.session_state["model"].startswith("custom-")
    shown_name = at.session_state["custom_models"][at.session_state["model"]].name
    assert 0 < len(shown_name) <= NAME_MAX
    assert not set(shown_name) & set("[]<>*`"), shown_name
    assert " _" not in f" {shown_name}" and "_ " not in f"{shown_name} "  # no emphasis (_x_)
    carried = [text for text in texts(at) if shown_name[:20] in text]
    assert any(text.startswith("body:") for text in carried)  # Markdown: "Current scenario: ..."
    for text in carried:
        assert "](" not in text and "<script" not in text and "**bold**" not in text
    # the link this session writes carries the clean name, not the one it opened with
    assert json_fields.unpack(at.query_params["mcfg"], MAX_MODEL_CHARS, 10**7, 40)["n"] == shown_name


@pytest.mark.parametrize("page", PAGES, ids=[page or "explorer" for page in PAGES])
def test_no_page_draws_a_link_from_a_model_name_a_link_carried(page):
    at = open_at(page, mcfg=_model_link("MARK [Official answer key](https://evil.example/phish)"))
    assert at.session_state["model"].startswith("custom-") and not notice(at)
    carried = [text for text in texts(at) if "MARK" in text]
    assert carried  # the model list at least
    for text in carried:
        assert "[Official answer key]" not in text and "](https://" not in text


def test_an_error_that_quotes_a_links_text_draws_no_link():
    # the message quotes the config's text: Streamlit draws https://... and www.... as links even when
    # backslash-escaped, so the escaping breaks them with a zero-width space
    bad = {"model_type": "https://evil.example/x", "torch_dtype": "www.evil.example"}
    at = open_at("", mcfg=_model_link("x", TINY | bad))
    (raw,) = [w.value for w in at.warning if "This link asked" in w.value]
    assert "evil.example/x" in raw and "https://" not in raw and "www." not in raw


def test_a_model_link_whose_torch_dtype_is_not_read_says_what_was_assumed():
    # the import form and the CLI said it; a link opened the same config in silence (weights taken as bf16)
    at = open_at("", mcfg=_model_link("tiny llama", TINY | {"torch_dtype": "float1024"}))
    assert at.session_state["model"] == "custom-tiny-llama"
    text = notice(at)
    assert "torch_dtype" in text and "float1024" in text and "taken as bf16" in text


def test_a_valid_model_link_is_imported_without_a_notice():
    at = open_at("", mcfg=_model_link("tiny llama"))
    assert not notice(at) and at.session_state["model"] == "custom-tiny-llama"


# --- cmp: Compare's saved scenarios ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "token",
    ["garbage!!", "A" * 100_000, _token(b'{"v":1,"s":"' + b"a" * 400_000 + b'"}')],
    ids=["garbage", "100k", "bomb"],
)
def test_saved_scenarios_that_cannot_be_read_are_a_warning(token):
    at = open_at("compare", cmp=token)
    assert any("saved scenarios in the link could not be restored" in shown(w) for w in at.warning)
    assert at.session_state["saved"] == []


# --- the silent ones: a key given twice, a query Streamlit drops, unknown keys -------------------------------


def test_a_key_given_twice_with_different_values_is_refused_and_named():
    at = open_at("", batch=["32", "16"], model=["qwen3-8b", "llama-3-8b"])
    text = notice(at)
    assert "`batch` appears 2 times with different values (`32`, `16`): none taken" in text
    assert "`model` appears 2 times with different values (`qwen3-8b`, `llama-3-8b`): none taken" in text
    assert at.number_input(key="batch").value == 8 and at.session_state["model"] == "llama-3.1-8b"
    assert "batch" not in at.query_params


def test_a_key_given_twice_with_the_same_value_is_taken():
    at = open_at("plan", batch=["16", "16"], plan_users=["70", "70"])
    assert not notice(at)
    assert at.number_input(key="batch").value == 16 and at.number_input(key="plan_users").value == 70


def test_a_query_streamlit_would_drop_is_said_to_be_unread():
    at = open_at("load-test", **{DROPPED_PARAM: "1391561-1"})
    assert at.title[0].value == TITLES["load-test"]
    assert (
        "the link's query (1,391,561 characters, 1 value) is more than the server reads"
        " (524,288 characters or 1,000 values): none of its values were read"
    ) in notice(at)
    assert DROPPED_PARAM not in at.query_params
    at = open_at("", **{DROPPED_PARAM: "<b>"})  # a marker not made by the middleware
    assert "`dropped_query=<b>` ignored" in notice(at)


def test_unknown_keys_and_tracking_parameters_are_left_alone():
    # nothing reads them: no notice (messengers add utm_* and the like to shared links)
    at = open_at("", foo="bar", utm_source="mail", junk="j" * 100_000, batch="16")
    assert not notice(at) and at.number_input(key="batch").value == 16


def _request(query: str, path: str = "/plan", method: str = "GET", kind: str = "http") -> tuple[list, list]:
    """What QueryLimit answers to one request, and what it passed on to the app."""
    sent, passed = [], []

    async def app(scope, receive, send):
        passed.append(scope)

    async def send(message):
        sent.append(message)

    scope = {"type": kind, "method": method, "path": path, "query_string": query.encode()}
    asyncio.run(QueryLimit(app)(scope, None, send))
    return sent, passed


def test_a_query_streamlit_would_drop_goes_back_to_its_page_with_its_size():
    fields = "&".join(f"k{i}=1" for i in range(MAX_QUERY_FIELDS + 1))
    for query, size in ((fields, f"{len(fields)}-{MAX_QUERY_FIELDS + 1}"), ("a=" + "b" * MAX_QUERY_CHARS, None)):
        assert too_long(query)
        sent, passed = _request(query)
        assert not passed and sent[0]["status"] == 303
        location = dict(sent[0]["headers"])[b"location"].decode()
        assert location.startswith(f"/plan?{DROPPED_PARAM}=")
        if size:
            assert location == f"/plan?{DROPPED_PARAM}={size}"
    # the redirect stays on this host whatever the path
    for path in ("//evil.example/x", "/\\evil.example"):
        sent, _ = _request(fields, path=path)
        assert dict(sent[0]["headers"])[b"location"].decode().startswith(("/evil.example", "/%5Cevil.example"))
    # what Streamlit reads passes through, and so does everything that is not a page request
    for query, method, kind in (("&".join(["a=1"] * MAX_QUERY_FIELDS), "GET", "http"), (fields, "POST", "http")):
        sent, passed = _request(query, method=method, kind=kind)
        assert passed and not sent
    sent, passed = _request(fields, kind="websocket")
    assert passed and not sent
