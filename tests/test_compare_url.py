"""AppTest for the Compare page's link and exports: saved scenarios go to the URL (``cmp``), a new
session opened with that link shows them again, a bad link is a warning, and each export carries
the date, the tool version, the link and every scenario's inputs in plain words."""

from __future__ import annotations

import base64
import csv
import io
import json
import zlib
from urllib.parse import urlencode

import pytest
from streamlit.delta_generator import DeltaGenerator
from streamlit.testing.v1 import AppTest

from core.estimate.compare_report import figures
from core.estimate.provenance import generated_at, tool_version
from core.estimate.result import estimate
from core.spec.catalog import load_catalog
from core.spec.scenario_codec import decode, encode, from_token, to_token
from tests.app_helpers import DEFAULT_WORK, open_app, open_form, shown, submit_gpu_form

COMPARE = "pages/compare_page.py"
PAGE_URL = "http://localhost:8501/compare"


def compare_page(**query) -> AppTest:
    at = open_app(**query)
    at.context["url"] = PAGE_URL
    at.switch_page(COMPARE).run()
    assert not at.exception
    return at


def save_two(at: AppTest) -> None:
    """Save the default scenario, then the same at batch 4."""
    at.button(key="save_scenario").click().run()
    at.number_input(key="batch").set_value(4).run()
    at.button(key="save_scenario").click().run()
    assert not at.exception and len(at.session_state["saved"]) == 2


def saved_pairs(at: AppTest) -> list[tuple]:
    return [(item["scenario"].deployment, item["scenario"].workload) for item in at.session_state["saved"]]


@pytest.fixture
def downloads(monkeypatch) -> dict[str, str]:
    """The files the page's download buttons hand out when clicked, by file name (the last run's):
    each button's data is a callable Streamlit calls on the click."""
    files: dict[str, str] = {}
    button = DeltaGenerator.download_button

    def recording(self, label, data, *args, **kwargs):
        files[kwargs["file_name"]] = data() if callable(data) else data
        return button(self, label, data, *args, **kwargs)

    monkeypatch.setattr(DeltaGenerator, "download_button", recording)
    return files


def test_saved_scenarios_go_to_the_link_and_a_new_session_shows_them():
    at = compare_page()
    assert "cmp" not in at.query_params
    save_two(at)
    token = at.query_params["cmp"]
    catalog = load_catalog()
    assert [decode(data, catalog) for data in from_token(token)] == saved_pairs(at)

    reopened = compare_page(cmp=token)
    assert saved_pairs(reopened) == saved_pairs(at)
    assert [i["label"] for i in reopened.session_state["saved"]] == [i["label"] for i in at.session_state["saved"]]
    assert reopened.multiselect(key="compare_choice").value == [i["label"] for i in at.session_state["saved"]]
    assert reopened.dataframe[0].value.equals(at.dataframe[0].value)  # the same comparison, both columns
    assert list(reopened.dataframe[0].value.columns) == ["#1", "#2"]
    assert reopened.query_params["cmp"] == token
    assert not reopened.warning


def test_clearing_the_list_removes_it_from_the_link():
    at = compare_page()
    save_two(at)
    at.button(key="clear_saved").click().run()
    assert not at.exception
    assert "cmp" not in at.query_params and at.session_state["saved"] == []
    at.button(key="save_scenario").click().run()  # a fresh list after a clear
    assert not at.exception and len(from_token(at.query_params["cmp"])) == 1


def _token(raw: bytes) -> str:
    return base64.urlsafe_b64encode(zlib.compress(raw)).rstrip(b"=").decode()


@pytest.mark.parametrize(
    "token",
    ["garbage!!", "A" * 20_000, _token(b"not json"), _token(b'{"v": 1, "s": "[click](javascript:alert(1))"}')],
    ids=["not-base64", "too-long", "not-json", "not-a-list"],
)
def test_a_link_that_cannot_be_read_is_a_warning(token):
    at = compare_page(cmp=token)
    (warning,) = at.warning
    assert shown(warning).startswith("The saved scenarios in the link could not be restored: token")
    assert at.session_state["saved"] == [] and "cmp" not in at.query_params
    at.button(key="save_scenario").click().run()  # the page still works
    assert not at.exception and len(at.session_state["saved"]) == 1


def test_scenarios_that_cannot_be_restored_are_named_and_the_rest_load():
    catalog = load_catalog()
    dep = catalog.model("llama-3.1-8b")
    good = {"model": dep.id, "gpu": "a10", "engine": {"max_model_len": 8192}, "batch": 3}
    gone = {**good, "model": "llama-9-retired"}
    wrong = {**good, "engine": {"max_num_seqs": "many"}}
    hostile = {**good, "gpu": "[click](javascript:alert(1))"}
    at = compare_page(cmp=to_token([gone, good, wrong, hostile]))
    (warning,) = at.warning
    text = shown(warning)
    assert text.startswith("3 of the 4 saved scenarios in the link could not be restored")
    assert "#1: model: 'llama-9-retired' is not in the catalog" in text
    assert "#3: engine.max_num_seqs: must be an integer" in text
    assert "#4: gpu: '[click](javascript:alert(1))' is not in the catalog" in text
    assert "[click](" not in warning.value  # user text reaches the Markdown renderer escaped
    assert saved_pairs(at) == [decode(good, catalog)]
    assert list(at.dataframe[0].value.columns) == ["#1"]
    assert from_token(at.query_params["cmp"]) == [encode(*decode(good, catalog))]  # the link keeps what loaded


def test_a_scenario_on_a_custom_gpu_is_saved_but_not_in_the_link():
    at = compare_page()
    open_form(at, "gpu")
    at.text_input(key="sidebar_gpu_name").input("Lab card")
    at.number_input(key="sidebar_gpu_memory").set_value(40.0)
    submit_gpu_form(at)
    at.button(key="save_scenario").click().run()
    assert not at.exception and len(at.session_state["saved"]) == 1
    assert "cmp" not in at.query_params
    assert any("Not kept in the link" in shown(i) and "Lab card" in shown(i) for i in at.info)
    at.selectbox(key="gpu").set_value("a10").run()
    at.button(key="save_scenario").click().run()
    (kept,) = from_token(at.query_params["cmp"])
    assert kept["gpu"] == "a10" and len(at.session_state["saved"]) == 2


def test_the_exports_carry_date_version_link_and_inputs(monkeypatch, downloads):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1780000000")
    at = compare_page()
    save_two(at)
    link = f"{PAGE_URL}?{urlencode(at.query_params)}"
    assert "cmp=" + at.query_params["cmp"] in link
    made = f"Made {generated_at()} by LLM Inference Tradeoff Explorer {tool_version()}."

    md = downloads["llm-compare.md"]
    assert made in md.splitlines()
    assert f"Reopen this view: <{link}>" in md.splitlines()
    assert "| Requests at once (batch) | 8 | 4 |" in md
    assert "| Prompt length | 2,048 tokens | 2,048 tokens |" in md
    assert "| Model | Llama-3.1-8B (llama-3.1-8b) | Llama-3.1-8B (llama-3.1-8b) |" in md
    table = at.dataframe[0].value
    for metric, values in table.iterrows():  # the table as the page shows it
        assert f"| {metric} | {' | '.join(values)} |" in md

    rows = list(csv.reader(io.StringIO(downloads["llm-compare.csv"])))
    assert ["generated_at", generated_at()] in rows and ["tool_version", tool_version()] in rows
    assert ["link", link] in rows
    assert ["Requests at once (batch)", "8", "4"] in rows
    assert ["TTFT", *table.loc["TTFT"]] in rows

    data = json.loads(downloads["llm-compare.json"])
    assert data["report"] == {"generated_at": generated_at(), "tool_version": tool_version(), "link": link}
    assert data["columns"] == ["#1", "#2"]
    assert [s["figures"] for s in data["scenarios"]] == [figures(estimate(*pair)) for pair in saved_pairs(at)]
    batch = next(i["value"] for i in data["scenarios"][1]["inputs"] if i["label"] == "Requests at once (batch)")
    assert batch == "4" and saved_pairs(at)[0][1] == DEFAULT_WORK


def test_the_exports_follow_the_language(downloads):
    at = compare_page(lang="zh")
    at.button(key="save_scenario").click().run()
    assert not at.exception
    md = downloads["llm-compare.md"]
    assert md.startswith("# 场景对比报告")
    assert "重新打开此视图：<" in md and "| 同时处理的请求数（batch） | 8 |" in md


def test_inputs_line_up_by_label_and_markdown_cells_are_escaped(deploy):
    from core.estimate.compare_report import Compared, input_rows, markdown_report

    plain = estimate(deploy(gpu="a10", max_model_len=8192), DEFAULT_WORK)
    capped = estimate(deploy(gpu="a10", max_model_len=8192, max_num_seqs=64), DEFAULT_WORK)
    columns = [Compared(name="#1", label="a | b", result=plain), Compared(name="#2", label="c", result=capped)]
    assert dict(input_rows(columns))["max_num_seqs"] == ["engine default", "64"]
    report = {"generated_at": "2026-12-02 17:50 UTC", "tool_version": "0.1.0", "link": None}
    md = markdown_report(report, columns, [("Fits", ["yes", "no"])])
    assert r"- **#1**: a \| b" in md and "| Fits | yes | no |" in md
    assert "Reopen this view" not in md  # no link line without a link
    assert "| max_num_seqs | engine default | 64 |" in md
