"""Prices as users buy them (issue 31, item 5): every price shown with its source (the catalog's
provider and date, or "entered by you"), CNY at an editable rate in Chinese, in every export."""

from __future__ import annotations

import csv
import io
import json
import re
import tomllib

import pytest

from core.estimate.compare_report import Compared, exports
from core.estimate.export import RENDERERS, export_document
from core.estimate.result import estimate
from core.planning.check import check
from core.planning.launch import serve_command
from core.planning.report import plan_to_dict
from core.planning.report_csv import csv_report
from core.planning.report_formats import html_report, markdown_report
from core.planning.requirement import Requirement
from core.report.money import (
    RATE_FILE,
    Rate,
    catalog_price,
    money,
    price_in_use,
    price_line,
    rate_from,
    reference,
    with_price,
)
from tests.app_helpers import DEFAULT, DEFAULT_WORK

CHAT = Requirement(
    load="users", users=50, think_time_s=30.0, prompt_len=1500, answer_len=300, ttft_slo_s=1.0, tpot_slo_s=1 / 20
)


def test_the_default_rate_carries_its_source():
    raw = tomllib.loads(RATE_FILE.read_text(encoding="utf-8"))
    assert raw["source_url"].startswith("https://") and raw["note"] and raw["published"] <= raw["source_read"]
    assert 5 < reference().cny_per_usd < 9
    with pytest.raises(ValueError, match=r"exchange rate must be 0\.01 to 1000\.0 CNY per USD, got 0"):
        Rate(0)


def test_a_catalog_price_names_provider_and_date_and_chinese_shows_cny_at_the_rate(catalog):
    gpu = catalog.gpu("a10")
    line = price_line(catalog_price(gpu), "en")
    assert line == f"price: ${gpu.price_per_hour:,.2f}/h (catalog: {gpu.price_provider}, read {gpu.price_read})"
    cny = gpu.price_per_hour * 7.5
    zh = price_line(catalog_price(gpu), "zh", Rate(7.5, entered=True))
    assert zh.startswith(f"价格：¥{cny:,.2f}/小时 (${gpu.price_per_hour:,.2f}/h)") and gpu.price_provider in zh
    assert price_line(price_in_use(gpu, 2.5), "en") == "price: $2.50/h (entered by you)"
    assert money(1.0, "zh") == f"¥{reference().cny_per_usd:,.2f}/小时 ($1.00/h)"
    assert rate_from(reference().cny_per_usd) == Rate(reference().cny_per_usd)  # the default is not "entered"


@pytest.mark.parametrize("typed", [None, 2.5])
def test_every_explorer_file_lists_the_price_and_its_source(deploy, typed):
    e = estimate(deploy(**DEFAULT), DEFAULT_WORK)
    gpu = e.deployment.gpu
    doc = export_document(e, None, "en", price=price_in_use(gpu, typed))
    files = {ext: render(doc) for ext, render in RENDERERS.items()}
    source = "entered by you" if typed else f"catalog: {gpu.price_provider}, read {gpu.price_read}"
    shown = f"${typed or gpu.price_per_hour:,.2f}/h ({source})"
    assert f"- price: {shown}" in files["md"] and f"<li>price: {shown}</li>" in files["html"]
    price = json.loads(files["json"])["price"]
    assert price["usd_per_gpu_hour"] == (typed or gpu.price_per_hour)
    assert price["source"] == ("entered" if typed else "catalog")
    assert price["provider"] == (None if typed else gpu.price_provider)
    rows = {r[1]: r[2] for r in csv.reader(io.StringIO(files["csv"])) if r[0] == "price"}
    assert rows["source"] == price["source"] and float(rows["usd_per_gpu_hour"]) == price["usd_per_gpu_hour"]


def test_the_chinese_explorer_export_shows_cny_at_the_users_rate(deploy):
    e = estimate(deploy(**DEFAULT), DEFAULT_WORK)
    doc = export_document(e, None, "zh", rate=Rate(7.3, entered=True))
    md = RENDERERS["md"](doc)
    assert f"¥{e.deployment.gpu.price_per_hour * 7.3:,.2f}/小时" in md and "1 美元 = 7.3 元人民币（你输入的汇率" in md
    assert json.loads(RENDERERS["json"](doc))["price"]["cny_per_usd"] == 7.3


@pytest.mark.parametrize("typed", [None, 0.99])
def test_every_plan_file_lists_the_price_and_its_source(deploy, typed):
    dep = deploy(gpu="a10", max_model_len=2048)
    plan = check(dep, CHAT)
    data = with_price(plan_to_dict(plan, [], serve_command(plan), None, "en"), price_in_use(dep.gpu, typed))
    source = "entered by you" if typed else f"catalog: {dep.gpu.price_provider}, read {dep.gpu.price_read}"
    shown = f"price: ${typed or dep.gpu.price_per_hour:,.2f}/h ({source})"
    assert shown in markdown_report(data, plan, []) and shown in html_report(data, plan, [])
    assert json.loads(json.dumps(data))["price"]["source"] == ("entered" if typed else "catalog")
    rows = {r[1]: r[2] for r in csv.reader(io.StringIO(csv_report(data))) if r[0] == "price"}
    assert rows["source"] == ("entered" if typed else "catalog")


def test_the_compare_files_list_each_scenarios_price_and_source(deploy):
    e = estimate(deploy(**DEFAULT), DEFAULT_WORK)
    gpu = e.deployment.gpu
    files = exports(None, [Compared("#1", "a", e)], [("Fits", ["yes"])], "zh", Rate(7.1, entered=True))
    cny = f"¥{gpu.price_per_hour * 7.1:,.2f}/小时"
    for ext in ("md", "html", "csv"):
        assert cny in files[ext] and gpu.price_provider in files[ext] and "7.1" in files[ext], ext
    price = json.loads(files["json"])["scenarios"][0]["price"]
    assert price["provider"] == gpu.price_provider and price["cny_per_usd"] == 7.1 and price["rate_source"] == "entered"


def _plan_with_downloads(monkeypatch, **query):
    """The Plan page opened from a link, with each download's data callable recorded."""
    from streamlit.delta_generator import DeltaGenerator

    from tests.app_helpers import open_app

    data, original = {}, DeltaGenerator.download_button

    def record(self, label, payload, *args, **kwargs):
        data[kwargs["key"]] = payload
        return original(self, label, payload, *args, **kwargs)

    monkeypatch.setattr(DeltaGenerator, "download_button", record)
    at = open_app(**query)
    at.context["url"] = "http://localhost:8501/plan"
    at.switch_page("pages/plan_page.py").run()
    assert not at.exception
    return at, data


def test_the_rate_lives_in_the_link_and_chinese_plan_shows_cny_at_it(monkeypatch, catalog):
    at, data = _plan_with_downloads(monkeypatch, lang="zh", cny_rate="7.3")
    assert at.number_input(key="cny_rate").value == pytest.approx(7.3)  # restored from the link
    cells = [str(v) for df in at.dataframe for col in df.value.columns for v in df.value[col]]
    shown = [re.search(r"¥([\d,.]+)/小时 \(\$([\d,.]+)/h\)（目录价：(\w+)，(\d{4}-\d\d-\d\d) 读取）", c) for c in cells]
    shown = [m for m in shown if m]
    providers = {g.price_provider for g in catalog.gpus}
    assert shown and all(m.group(3) in providers for m in shown)  # each price names its source and date
    for m in shown:  # CNY at the link's rate, to the cent
        cny, usd = (float(m.group(i).replace(",", "")) for i in (1, 2))
        assert cny == pytest.approx(usd * 7.3, abs=0.006)
    report = json.loads(data["download_json"]())
    assert report["price"]["cny_per_usd"] == pytest.approx(7.3) and report["price"]["rate_source"] == "entered"
    assert "cny_rate=7.3" in report["report"]["link"]  # the rate travels with the view
    assert "1 美元 = 7.3 元人民币" in data["download_md"]()


def test_plan_names_the_catalog_price_source_and_keeps_a_typed_price_in_every_file(monkeypatch, catalog):
    at, data = _plan_with_downloads(monkeypatch)
    a10 = catalog.gpu("a10")
    price = at.number_input(key="plan_price")
    assert a10.price_provider in price.help and str(a10.price_read) in price.help
    assert json.loads(data["download_json"]())["price"]["source"] == "catalog"
    price.set_value(0.75).run()
    assert not at.exception and at.number_input(key="plan_price").value == 0.75
    assert (
        json.loads(data["download_json"]())["price"] == pytest.approx(json.loads(data["download_json"]())["price"])
        and json.loads(data["download_json"]())["price"]["source"] == "entered"
    )
    for ext in ("md", "html"):
        assert "price: $0.75/h (entered by you)" in data[f"download_{ext}"](), ext
    rows = {r[1]: r[2] for r in csv.reader(io.StringIO(data["download_csv"]())) if r[0] == "price"}
    assert rows["source"] == "entered" and float(rows["usd_per_gpu_hour"]) == 0.75
    at.number_input(key="cny_rate").set_value(7.5).run()  # a rate set in the sidebar reaches the files
    assert (
        json.loads(data["download_json"]())["price"] | {"cny_per_usd": 7.5, "rate_source": "entered"}
        == (json.loads(data["download_json"]())["price"])
    )


def test_the_explorer_and_compare_files_use_the_links_rate_in_chinese(monkeypatch, catalog):
    """The rate a link carries reaches the Explorer's four files and Compare's (now with HTML)."""
    from streamlit.delta_generator import DeltaGenerator

    from tests.app_helpers import open_app

    files: dict[str, object] = {}
    button = DeltaGenerator.download_button

    def recording(self, label, data, *args, **kwargs):
        files[kwargs["file_name"]] = data
        return button(self, label, data, *args, **kwargs)

    monkeypatch.setattr(DeltaGenerator, "download_button", recording)
    at = open_app(lang="zh", cny_rate="7.25")
    a10 = catalog.gpu("a10")
    cny = f"¥{a10.price_per_hour * 7.25:,.2f}/小时 (${a10.price_per_hour:,.2f}/h)"
    explorer = {name.rsplit(".", 1)[1]: data() for name, data in files.items() if name.startswith("llm-estimate")}
    assert set(explorer) == {"md", "html", "json", "csv"}
    for ext in ("md", "html"):
        assert cny in explorer[ext] and f"目录价：{a10.price_provider}，{a10.price_read} 读取" in explorer[ext], ext
    assert json.loads(explorer["json"])["price"]["cny_per_usd"] == 7.25
    assert "cny_per_usd,7.25" in explorer["csv"]
    at.context["url"] = "http://localhost:8501/compare"
    at.switch_page("pages/compare_page.py").run()
    at.button(key="save_scenario").click().run()
    assert not at.exception
    page = files["llm-compare.html"]()
    assert page.startswith("<!doctype html>") and cny in page and "1 美元 = 7.25 元人民币" in page


def test_the_chinese_plan_report_gives_the_cost_in_cny_at_the_plans_rate(deploy):
    dep = deploy(gpu="a10", max_model_len=2048)
    plan = check(dep, CHAT)
    from core.planning.cost import cost

    money_ = cost(plan, 1.0)
    data = with_price(plan_to_dict(plan, [], serve_command(plan), money_, "zh"), price_in_use(dep.gpu, 1.0), Rate(7.0))
    text = markdown_report(data, plan, [], "zh")
    assert f"GPU 每小时 ¥{money_.per_hour * 7:,.2f}" in text and "（按 1 美元 = 7 元人民币）" in text
    english = with_price(plan_to_dict(plan, [], serve_command(plan), money_, "en"), price_in_use(dep.gpu, 1.0))
    assert "¥" not in markdown_report(english, plan, [], "en")  # English keeps USD
