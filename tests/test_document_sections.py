"""The sections other features add reach the documents (issue 31): energy and power in every Explorer
file and both Plan documents, at the user's electricity price; the benchmark that checks a plan in
the Plan's documents as the page hands it over."""

from __future__ import annotations

import json

from core.benchcheck.commands import bench_check
from core.benchcheck.report import benchmark_section
from core.energy.power import EnergyInputs
from core.estimate.export import RENDERERS, export_document
from core.estimate.result import estimate
from core.messages import message
from core.planning.check import check
from core.planning.launch import serve_command
from core.planning.report import plan_to_dict
from core.planning.report_formats import html_report, markdown_report
from core.planning.requirement import Requirement
from tests.app_helpers import DEFAULT, DEFAULT_WORK

CHAT = Requirement(
    load="users", users=20, think_time_s=30.0, prompt_len=1500, answer_len=300, ttft_slo_s=1.0, tpot_slo_s=1 / 20
)


def test_the_explorer_files_carry_energy_at_the_users_price(deploy):
    e = estimate(deploy(**DEFAULT), DEFAULT_WORK)
    inputs = EnergyInputs(usd_per_kwh=0.31, pue=1.4)
    doc = export_document(e, None, "zh", energy=inputs)
    files = {ext: render_(doc) for ext, render_ in RENDERERS.items()}
    block = json.loads(files["json"])["estimate"]["energy"]
    assert block["electricity_usd_per_kwh"] == 0.31 and block["pue"] == 1.4
    title = message("energy.section_title", "zh")
    assert f"## {title}" in files["md"] and f"<h2>{title}</h2>" in files["html"]
    watts = f"{block['power_per_gpu_w']:.0f} W"
    assert watts in files["md"] and watts in files["html"]
    default = json.loads(RENDERERS["json"](export_document(e, None, "en")))["estimate"]["energy"]
    # the same scenario at a dearer kWh and a PUE: the same joules, a larger bill
    assert default["energy_per_output_token_j"] == block["energy_per_output_token_j"]
    assert block["usd_per_million_output_tokens"] > default["usd_per_million_output_tokens"]


def test_the_plan_documents_carry_energy_and_the_benchmark_that_checks_them(deploy):
    plan = check(deploy(model="qwen3-32b", gpu="h100-sxm", tp=2), CHAT)
    data = plan_to_dict(plan, [], serve_command(plan), None, "en")
    found = bench_check(plan)
    extra = [benchmark_section(found, "en")]
    md, page = markdown_report(data, plan, [], "en", extra), html_report(data, plan, [], "en", extra)
    for text in (md, page):
        assert text.count(message("energy.section_title", "en")) == 1
        assert text.count(message("benchcheck.ui_title", "en")) == 1
        assert found.commands["vllm"].split(" --")[0] in text  # "vllm bench serve" with its flags
    assert found.commands["vllm"] in md  # whole, in a code block
    # the energy section sits before the benchmark, which the page appends
    assert md.index(message("energy.section_title", "en")) < md.index(message("benchcheck.ui_title", "en"))


def test_the_plan_documents_list_the_deployment_files_in_the_readers_language(deploy):
    from core.deploy.section import deploy_section
    from core.deploy.spec import from_plan

    plan = check(deploy(model="qwen3-32b", gpu="h100-sxm", tp=2), CHAT)
    data = plan_to_dict(plan, [], serve_command(plan), None, "zh")
    spec = from_plan(plan)
    md = markdown_report(data, plan, [], "zh", [deploy_section(spec, "zh")])
    assert f"## {message('deploy.title', 'zh')}" in md
    assert "kubectl apply -f" in md and message("deploy.section_apply", "zh") in md
    assert " ".join(spec.workloads[0].args) in md  # the engine's arguments, the plan's own
    assert serve_command(plan).args[0] in spec.workloads[0].args


def test_the_answers_quote_prices_in_cny_in_chinese_at_the_rate_and_usd_in_english(deploy, catalog):
    """The first line of Plan and of the Explorer names the cheapest fix's price: in Chinese CNY at the
    user's rate with the USD beside it, as every table and file does (issue 31, item 5)."""
    from core.estimate.advice import fit_suggestions
    from core.estimate.answer import estimate_answer, price_per_hour
    from core.planning.answer import plan_answer
    from core.planning.fixes import fixes as find_fixes
    from core.report.money import Rate

    rate = Rate(7.5, entered=True)
    fifty = Requirement(
        load="users", users=50, think_time_s=30.0, prompt_len=1500, answer_len=300, ttft_slo_s=1.0, tpot_slo_s=0.05
    )
    dep = deploy(gpu="a10", max_model_len=8192)
    plan = check(dep, fifty)  # fifty chat users need two A10s (tests/test_search.py)
    found = find_fixes(catalog, dep, fifty)
    best = next(f for f in found if f.plan.verdict == "feasible")
    assert plan.verdict != "feasible" and best.cost_per_hour is not None
    usd = f"{best.cost_per_hour:,.2f}"
    assert f"(${usd}/h)" in plan_answer(plan, found, "zh", rate)
    assert f"¥{best.cost_per_hour * 7.5:,.2f}/小时" in plan_answer(plan, found, "zh", rate)
    assert f"${usd}/h" in plan_answer(plan, found, "en") and "¥" not in plan_answer(plan, found, "en")
    e = estimate(deploy(model="qwen3-14b", gpu="a10", max_model_len=4096), DEFAULT_WORK)  # no room for KV
    suggestions = fit_suggestions(e.deployment, e.workload, e)
    assert not e.fits and suggestions
    en, zh = estimate_answer(e, suggestions, "en"), estimate_answer(e, suggestions, "zh", rate)
    shown = [price_per_hour(s.result) for s in suggestions if f"${(price_per_hour(s.result) or 0):,.2f}/h" in en]
    assert shown, en  # the English answer names a fix's price in USD
    assert f"¥{shown[0] * 7.5:,.2f}/小时 (${shown[0]:,.2f}/h)" in zh
