"""The Explorer's export: Markdown, HTML, JSON and CSV of one estimate, their numbers core's JSON,
their provenance and plain-words inputs in both languages, every text escaped in the HTML, and the
page's four download buttons."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from urllib.parse import urlsplit

import pytest

import core.estimate.export as export
from core.estimate.export import csv_report, html_report, json_report, markdown_report
from core.estimate.provenance import deployment_inputs, tool_version, workload_inputs
from core.estimate.report import estimate_to_dict
from core.estimate.result import estimate
from core.levers.settings import Lora, Offload
from core.messages import message
from core.spec import units
from core.spec.deployment import Workload
from tests.app_helpers import DEFAULT, DEFAULT_WORK, open_app

LINK = "http://localhost:8501/explorer?model=llama-3.1-8b&gpu=a10&batch=16"
OVER = Workload(input_len=2048, output_len=512, batch=16)
"""More requests than the A10 holds (11): the export of a scenario that does not fit."""
EPOCH = "1767225600"  # 2026-01-01 00:00 UTC
GPU_PARTS = ("weights", "activations", "overhead", "kv_cache", "proposer", "lora", "attention_scores")


@pytest.fixture(autouse=True)
def fixed_date(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)


@pytest.fixture
def a10(deploy):
    """Llama 3.1 8B on an A10: 16 requests of 2560 tokens do not fit its KV budget."""
    return estimate(deploy(**DEFAULT), OVER)


@pytest.fixture
def h100(deploy):
    """The same workload on an H100: fits."""
    return estimate(deploy(model="llama-3.1-8b", gpu="h100-sxm", max_model_len=8192), OVER)


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def section(table: list[dict[str, str]], name: str) -> dict[str, dict[str, str]]:
    return {row["name"]: row for row in table if row["section"] == name}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("which", ["a10", "h100"])
def test_json_estimate_is_estimate_to_dict(which, lang, request):
    e = request.getfixturevalue(which)
    document = json.loads(json_report(e, LINK, lang))
    assert document["estimate"] == estimate_to_dict(e)
    assert document["report"] == {
        "generated_at": "2026-01-01 00:00 UTC",
        "tool_version": tool_version(),
        "link": LINK,
        "language": lang,
    }
    assert document["inputs"]["deployment"] == [
        {"label": k, "value": v} for k, v in deployment_inputs(e.deployment, lang)
    ]
    assert document["inputs"]["workload"] == [{"label": k, "value": v} for k, v in workload_inputs(e.workload, lang)]
    assert document["warnings"] == [w.text(lang) for w in e.warnings]


def test_csv_figures_are_the_jsons(a10):
    data = estimate_to_dict(a10)
    table = rows(csv_report(a10, LINK))
    headline, latency, kv = section(table, "headline"), section(table, "latency"), section(table, "kv")
    assert float(headline["ttft"]["value"]) == data["latency"]["ttft_ms"]
    assert headline["ttft"]["unit"] == "ms"
    assert float(headline["tpot"]["value"]) == data["latency"]["tpot_ms"]
    assert float(headline["throughput"]["value"]) == data["throughput"]["output_tokens_per_s"]
    assert int(headline["max_concurrency"]["value"]) == data["kv"]["max_concurrency_at_request_len"] == 11
    assert headline["fits"]["value"] == "false"
    assert headline["decode_bound"]["value"] == data["bound"]["decode"]
    assert float(latency["e2e"]["value"]) == data["latency"]["e2e_ms"]
    assert float(kv["max_concurrency_at_max_model_len"]["value"]) == data["kv"]["max_concurrency_at_max_model_len"]
    assert int(kv["capacity_tokens"]["value"]) == data["kv"]["capacity_tokens"]
    loop = section(table, "closed_loop")
    assert data["closed_loop"]["stable"]
    assert float(loop["tpot"]["value"]) == data["closed_loop"]["tpot_ms"]


@pytest.mark.parametrize(
    "levers",
    [
        {},
        {"lora": Lora(adapters=8, rank=16), "attention": "eager"},
        {"offload": Offload(weights_bytes=4 * units.GiB)},
    ],
    ids=["plain", "lora-eager", "offload"],
)
def test_csv_memory_parts_sum_to_the_total_used(deploy, levers):
    e = estimate(deploy(**DEFAULT).with_levers(**levers), DEFAULT_WORK)
    table = rows(csv_report(e, LINK))
    assert list(table[0]) == ["section", "name", "value", "unit"]
    memory = section(table, "memory")
    assert all(row["unit"] == "GiB" for row in memory.values())
    parts = {name: float(row["value"]) for name, row in memory.items() if name in GPU_PARTS}
    for name in levers.keys() - {"offload"}:  # each lever's part is listed, "attention" as its scores
        assert {"lora": "lora", "attention": "attention_scores"}[name] in parts
    assert sum(parts.values()) == pytest.approx(float(memory["total_used"]["value"]), abs=1e-3 * len(parts))
    exact = (e.memory.non_kv + e.memory.kv_in_use) / units.GiB
    assert float(memory["total_used"]["value"]) == pytest.approx(exact, abs=1e-3)
    data = estimate_to_dict(e)["memory_per_gpu"]
    assert float(memory["weights"]["value"]) == data["weights_gib"]
    assert float(memory["kv_cache"]["value"]) == data["kv_cache_gib"]
    if "offload" in levers:  # host memory is listed beside the GPU's, not in what it uses
        assert float(memory["host_weights"]["value"]) == pytest.approx(4.0)


def test_csv_carries_provenance_and_inputs(a10):
    table = rows(csv_report(a10, LINK, "zh"))
    report = section(table, "report")
    assert report["link"]["value"] == LINK
    assert report["tool_version"]["value"] == tool_version()
    assert report["generated_at"]["value"] == "2026-01-01 00:00 UTC"
    inputs = section(table, "inputs")
    assert inputs[message("report.model", "zh")]["value"] == f"{a10.deployment.model.name} ({a10.deployment.model.id})"
    assert inputs[message("report.batch", "zh")]["value"] == "16"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_markdown_carries_date_version_link_and_inputs(a10, lang):
    text = markdown_report(a10, LINK, lang)
    assert "2026-01-01 00:00 UTC" in text
    assert tool_version() in text
    assert LINK in text
    for label, value in (*deployment_inputs(a10.deployment, lang), *workload_inputs(a10.workload, lang)):
        assert message("export.pair", lang, label=label, value=value) in text
    for key in ("report.model", "report.prompt", "report.answer", "report.batch", "export.section_verdict"):
        assert message(key, lang) in text
    assert message("export.section_engine", lang) in text and "vLLM 0.33.0" in text
    if lang == "zh":
        assert "模型" in text and "输入长度" in text and "结论" in text
        assert "Prompt length" not in text and "Verdict" not in text


def test_markdown_sections_mirror_the_page(a10, h100):
    missing = markdown_report(a10, LINK)
    assert "Does not fit: the 16 requests need 5.0 GiB of KV cache per GPU" in missing
    assert "run at most 11 requests at once: 11 requests at once" in missing  # a fit suggestion
    assert "the batch of 16 needs 5.00 GiB of KV cache" in missing  # the warning
    assert "## Likely ranges" in missing
    assert f"| TTFT | {a10.latency.ttft_s / units.MS:,.3f} | ms |" in missing  # the page's number, in the table
    fits = markdown_report(h100, LINK)
    assert "- Fits: the 16 requests need" in fits
    assert message("export.no_change_needed", "en") in fits
    assert message("export.no_warnings", "en") in fits


def test_a_deployment_without_a_kv_budget_says_why(deploy):
    e = estimate(deploy(model="llama-3.1-70b", gpu="a10", max_model_len=8192), DEFAULT_WORK)
    assert e.memory.kv_budget <= 0
    text = markdown_report(e)
    assert "Does not fit: the weights, activation peak and engine overhead leave no room" in text
    assert "Reopen this view" not in text  # no link (a bare run): no line for it


def test_html_escapes_every_text(deploy):
    dep = deploy(**DEFAULT)
    hostile = dataclasses.replace(dep, model=dataclasses.replace(dep.model, name="<script>x</script>"))
    e = estimate(hostile, Workload(input_len=512, output_len=128, batch=1))
    page = html_report(e, "https://example.org/explorer?model=<b>'\"", "zh")
    assert "<script>" not in page and "<b>" not in page
    assert "&lt;script&gt;x&lt;/script&gt;" in page
    assert "&#x27;&quot;" in page  # the link's quotes cannot end the href attribute
    assert page.startswith("<!doctype html>") and page.rstrip().endswith("</html>")
    assert "<style>" in page and "src=" not in page  # self-contained
    assert "href='javascript" not in html_report(e, "javascript:alert(1)")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_explorer_offers_the_four_files(monkeypatch, lang):
    """Four buttons whose files are built only on a click (a data callable: no document is made
    on a rerun), each carrying the view's link and the page's numbers."""
    from streamlit.delta_generator import DeltaGenerator

    built, data, original = [], {}, DeltaGenerator.download_button

    def record(self, label, payload, *args, **kwargs):
        data[kwargs["key"]] = payload
        return original(self, label, payload, *args, **kwargs)

    def spy(*args, **kwargs):
        built.append(args)
        return real(*args, **kwargs)

    real = export.export_document
    monkeypatch.setattr(DeltaGenerator, "download_button", record)
    monkeypatch.setattr(export, "export_document", spy)
    at = open_app(batch="4", **({"lang": lang} if lang != "en" else {}))  # not the default: in the link
    at.context["url"] = "http://localhost:8501/explorer"
    at.run()
    assert not at.exception
    buttons = {b.proto.id.rsplit("-", 1)[-1]: b.proto for b in at.get("download_button")}
    assert set(buttons) >= {f"explorer_download_{ext}" for ext in ("md", "html", "json", "csv")}
    assert not built  # deferred: the rerun built no document
    files = {}
    for ext in ("md", "html", "json", "csv"):
        assert buttons[f"explorer_download_{ext}"].deferred_file_id
        assert buttons[f"explorer_download_{ext}"].label == message(f"export.download_{ext}", lang)
        files[ext] = data[f"explorer_download_{ext}"]()  # what a click downloads
    assert len(built) == 1  # one document for the four files
    result, link, used, _ = built[0]
    assert used == lang and result.workload.batch == 4
    # the view's query on the Explorer's address (the default page, served at the root since issue 28's links)
    assert urlsplit(link).path in ("", "/", "/explorer") and "batch=4" in urlsplit(link).query
    assert message("report.model", lang) in files["md"]
    assert json.loads(files["json"])["estimate"] == estimate_to_dict(result)
    assert link in files["md"]
