"""Links: every value a link carries is honoured or named in a notice, catalog ids work where the
lists show names, and a model imported from a config.json rides in the link."""

from __future__ import annotations

import asyncio
import json
import secrets
import sys
from pathlib import Path

import pytest
from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash
from streamlit.web.server.app_discovery import discover_asgi_app

from tests.app_helpers import APP, DATA, _warm_process, metrics, open_app, open_form
from ui.server_start import lifespan

TINY = (DATA / "tiny_llama_config.json").read_text()


def notices(at) -> list[str]:
    return [w.value for w in at.warning if "This link asked for values" in w.value]


def test_values_a_link_cannot_honour_are_named_with_what_the_input_takes():
    at = open_app(batch="-5", util="1.5", tp="0", eff_compute="7", block="7", input_len="200000", output_len="1e999")
    [notice] = notices(at)
    for line in (
        "`batch=-5` ignored: must be 1-1024",
        "`util=1.5` ignored: must be 0.5-1.0",
        "`tp=0` ignored: must be 1, 2, 4, 8",
        "`eff_compute=7` ignored: must be 0.05-1",
        "`block=7` ignored: must be auto, 8, 16, 32, 64, 128",
        "`input_len=200000` ignored: must be 1-163,840",
        "`output_len=1e999` ignored: must be 1-163,840",  # Streamlit's integer input raised on it
    ):
        assert line in notice, line
    # the inputs opened at their defaults and the page works
    assert at.number_input(key="batch").value == 8 and metrics(at)["Fits"] == "yes"
    # dismissed, it is gone and stays gone
    at.button(key="link_dismiss").click().run()
    assert not notices(at)
    at.number_input(key="batch").set_value(4).run()
    assert not notices(at)


def test_values_a_link_honours_raise_no_notice_even_at_their_default_or_minimum():
    # Streamlit drops a bound value equal to the default from the URL: that is not "ignored"
    at = open_app(batch="8", util="0.9", input_len="2048", weights="auto", eff_request="0", eff_compute="0.05")
    assert not notices(at)
    assert at.slider(key="eff_request").value == 0.0 and at.slider(key="eff_compute").value == 0.05


def test_lengths_and_batches_off_the_slider_steps_and_links_from_before_are_taken():
    # lengths and batches off the sliders' steps, typed or from a link, are taken as they are
    at = open_app(batch="5", input_len="1800", output_len="250")
    assert not notices(at)
    assert [at.number_input(key=k).value for k in ("batch", "input_len", "output_len")] == [5, 1800, 250]
    # links from before the inputs took any integer keep opening the same view
    at = open_app(batch="16", input_len="4096", output_len="1024", lang="zh")
    assert not at.warning or not any("此链接" in w.value for w in at.warning)
    assert [at.number_input(key=k).value for k in ("batch", "input_len", "output_len")] == [16, 4096, 1024]
    assert at.segmented_control(key="lang").value == "zh"


def test_a_page_input_from_the_link_is_judged_when_its_page_runs():
    at = open_app(plan_users="-3")
    assert not notices(at)  # the Explorer has no such input: not judged yet
    at.switch_page("pages/plan_page.py").run()
    assert any("`plan_users=-3` ignored" in n for n in notices(at))


def test_a_page_that_stops_early_still_shows_the_notice_of_the_sidebars_values():
    # Compare stops (st.stop) while nothing is saved, and Streamlit draws nothing after a stop: the
    # notice drawn after the page never showed there (issue 29 item 5)
    at = open_at("compare", batch="-5")
    assert any("`batch=-5` ignored: must be 1-1024" in n for n in notices(at))
    at.button(key="link_dismiss").click().run()
    assert not notices(at) and not at.exception


def test_moving_a_stepped_input_logs_no_warning_stack(caplog):
    # the slider sets the number input through the Session State API, which is given its default on
    # every run (ui.url_inputs.stepped_int): Streamlit logs that once per process with a whole stack
    # unless .streamlit/config.toml turns the warning off (the audit's F12)
    from streamlit.elements.lib import policies

    policies._shown_default_value_warning = False  # the process may have been warned (or not) already
    at = open_app()
    with caplog.at_level("WARNING", logger="streamlit.elements.lib.policies"):
        at.select_slider(key="batch_steps").set_value(16).run()
    assert at.number_input(key="batch").value == 16
    assert not [r for r in caplog.records if "Session State API" in r.getMessage()]


def test_catalog_ids_in_a_link_select_the_model_and_gpu_the_cli_names():
    at = open_app(model="qwen3-8b", gpu="h100-sxm")
    assert not notices(at)
    assert at.session_state["model"] == "qwen3-8b" and at.session_state["gpu"] == "h100-sxm"
    # the URL now carries the names the lists show, as if they had been picked
    assert at.query_params["model"] == "Qwen3-8B"
    assert at.query_params["gpu"] == "NVIDIA H100 SXM5 80GB"


def test_an_unknown_model_in_a_link_says_how_to_get_it_back():
    at = open_app(model="My-Private-9B")
    [notice] = notices(at)
    assert "`model=My-Private-9B` ignored" in notice and "import its config.json" in notice


def _import(at, text: str, name: str):
    open_form(at, "import")
    at.text_area(key="sidebar_paste").input(text)
    at.text_input(key="sidebar_model_name").input(name)
    at.button(key="sidebar_add_model").click().run()
    assert not at.exception
    return at


def test_an_imported_model_rides_in_the_link_and_a_new_session_restores_it():
    at = _import(open_app(), TINY, "tiny llama")
    token = at.query_params["mcfg"]
    assert len(token) < 1000  # a config.json of a few hundred bytes, compressed
    fits = metrics(at)["Fits"]
    # a new session opened with the link: the model is imported again and selected
    again = open_app(mcfg=token, model="tiny llama", batch="8")
    assert not notices(again)
    assert again.session_state["model"] == "custom-tiny-llama"
    assert "tiny llama" in again.selectbox(key="model").options
    assert metrics(again)["Fits"] == fits
    # a catalog model chosen afterwards takes the config out of the link
    again.selectbox(key="model").set_value("qwen3-8b").run()
    assert "mcfg" not in again.query_params


def test_an_imported_config_too_large_for_a_link_is_said_not_restorable():
    config = json.loads(TINY) | {"_junk": secrets.token_hex(6000)}  # incompressible
    at = _import(open_app(), json.dumps(config), "big llama")
    assert at.session_state["model"] == "custom-big-llama"
    assert "mcfg" not in at.query_params
    assert any("too large to ride in the link" in c.value for c in at.caption)


def test_a_damaged_model_token_is_a_notice_not_a_traceback():
    at = open_app(mcfg="not-a-token", model="tiny llama")
    [notice] = notices(at)
    assert "`mcfg=not-a-token…` ignored" in notice
    assert "`model=tiny llama` ignored" in notice
    assert at.session_state["model"] == "llama-3.1-8b"


def test_the_language_switch_shows_each_language_by_its_name_and_the_link_keeps_its_code():
    at = open_app(lang="zh")
    switch = at.segmented_control(key="lang")
    assert switch.options == ["English", "中文"] and switch.value == "zh"
    assert at.query_params["lang"] in ("zh", ["zh"])
    switch.set_value("en").run()
    assert "lang" not in at.query_params and at.title[0].value == "LLM Inference Tradeoff Explorer"
    at.segmented_control(key="lang").set_value("zh").run()
    assert at.query_params["lang"] in ("zh", ["zh"]) and at.title[0].value == "大模型推理权衡探索器"


def open_at(url_path: str, **query) -> AppTest:
    """A new session opened at ``/<url_path>?<query>``, as a browser opens a link.

    AppTest has no public way to start at a page: before its first run, ``switch_page`` names a page
    by its file, which in Streamlit's legacy mode for pages/ runs the file alone. A session opened at
    a URL path asks for the st.Page whose ``url_path`` it is, whose hash is ``calc_hash(url_path)``."""
    _warm_process()
    at = AppTest.from_file(APP, default_timeout=30)
    for key, value in query.items():
        at.query_params[key] = value
    at._page_hash = calc_hash(url_path)
    at.run()
    assert not at.exception
    return at


@pytest.mark.parametrize(
    ("url_path", "query", "title"),
    [
        ("plan", {"model": "qwen3-32b"}, "Plan: can this setup serve the load?"),
        ("learn", {"model": "llama-3-8b", "gpu": "h100-sxm"}, "Learn: where every number comes from"),
        (
            "load-test",
            {"model": "llama-3.1-8b", "gpu": "a10", "lt_rate": "1.78"},
            "Load test: where does TTFT avalanche?",
        ),
        ("plan", {"gpu": "h100-sxm"}, "Plan: can this setup serve the load?"),
        ("compare", {"model": "qwen3-8b", "gpu": "l4"}, "Compare scenarios"),
        (
            "workshop",
            {"exercise": "3", "model": "llama-3.1-8b", "gpu": "a100-80gb", "input_len": "128", "batch": "32"},
            "Workshop: seven exercises on inference tradeoffs",
        ),
        ("explorer", {"model": "qwen3-32b", "gpu": "h100-sxm"}, "LLM Inference Tradeoff Explorer"),
    ],
)
def test_a_link_naming_catalog_ids_opens_the_page_its_path_names(url_path, query, title):
    # regression (issue 28 item 4): the ids were turned into names by a rerun asked for before
    # st.navigation had resolved the page, so the rerun carried the entry script's page and
    # Streamlit opened the Explorer with the link's values
    at = open_at(url_path, **query)
    assert at.title[0].value == title
    assert at.session_state["model"] == query.get("model", "llama-3.1-8b")
    assert at.session_state["gpu"] == query.get("gpu", "a10")
    assert not notices(at)
    for key in ("input_len", "batch"):
        if key in query:
            assert at.number_input(key=key).value == int(query[key])
    if "lt_rate" in query:  # a page's own input from the link, honoured on that page
        assert at.number_input(key="lt_rate").value == pytest.approx(float(query["lt_rate"]))
    if "exercise" in query:
        assert at.header[0].value.startswith(f"Exercise {query['exercise']}:")


def test_streamlit_run_starts_the_server_through_the_lifespan_that_turns_legacy_pages_off():
    # `streamlit run app.py` serves the st.App app.py defines when imported, so its lifespan runs
    # before the first session (issue 28 item 5: that session ran in Streamlit's legacy pages/ mode)
    found = discover_asgi_app(Path(APP))
    assert found.is_asgi_app and found.import_string == "app:app"

    async def start() -> bool | None:
        async with lifespan(None):
            return PagesManager.uses_pages_directory

    saved, PagesManager.uses_pages_directory = PagesManager.uses_pages_directory, None
    sys.modules.pop("ui.preload", None)  # ui.preload holds no state: imported again by the lifespan
    try:
        assert asyncio.run(start()) is False
    finally:
        PagesManager.uses_pages_directory = saved
    assert "ui.preload" in sys.modules  # every module imported at the start, before any session
