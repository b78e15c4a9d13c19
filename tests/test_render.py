"""The one renderer (issue 31, item 6): every block kind in Markdown and HTML in both languages, the
Explorer, Plan and Compare documents drawn by it with extra sections appended once, and every
user-supplied text escaped in HTML."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re

import pytest

from core.estimate.compare_report import Compared, exports
from core.estimate.export import export_document, export_files, html_report
from core.estimate.provenance import provenance
from core.estimate.result import estimate
from core.messages import message
from core.planning.check import Check, check
from core.planning.launch import serve_command
from core.planning.report import plan_to_dict
from core.planning.report_formats import html_report as plan_html
from core.planning.report_formats import markdown_report as plan_markdown
from core.planning.requirement import Requirement
from core.report import render
from core.report.blocks import Block
from core.spec.deployment import Workload
from tests.app_helpers import DEFAULT, DEFAULT_WORK

HOSTILE = "<script>alert('x')</script> | <img src=x onerror=y>"
CHAT = Requirement(
    load="users", users=50, think_time_s=30.0, prompt_len=1500, answer_len=300, ttft_slo_s=1.0, tpot_slo_s=1 / 20
)


def every_kind(lang: str) -> list[tuple[str, list[Block]]]:
    checks = (Check("kv_cache", 6.0 * 2**30, 5.0 * 2**30, "bytes"), Check("tpot", 0.025, 0.05, "s"))
    return [
        ("", [Block("p", ("first line", "see https://example.org/a?b=1&c=2"))]),
        (
            message("plan.inputs", lang),
            [
                Block("strong", ("bold words",)),
                Block("list", ("plain | item", ("#1", "a term's text"))),
                Block("table", (("TTFT", "1,234.5", "ms"), ("fits", "yes", "")), ("name", "value", "unit")),
                Block("code", ("vllm serve m \\", "  --tp 2", "```")),
                Block("checks", checks),
            ],
        ),
    ]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_renderer_draws_every_block_kind_in_both_formats(lang):
    md = render.markdown("Title <T>", every_kind(lang), lang)
    assert md.startswith("# Title <T>\n") and f"## {message('plan.inputs', lang)}" in md
    assert "first line  \nsee <https://example.org/a?b=1&c=2>" in md  # one paragraph, the address a link
    assert "**bold words**" in md and r"- plain \| item" in md and "- **#1**: a term's text" in md
    assert "| name | value | unit |\n|---|---:|---|\n| TTFT | 1,234.5 | ms |" in md  # numbers right-aligned
    assert "````\nvllm serve m \\\n  --tp 2\n```\n````" in md  # a fence longer than any run inside
    assert f"| {message('check.kv_cache', lang)} | {message('status.failed', lang)} | `" in md
    assert "█" * 13 + "│" + "█" * 3 + "░" * 4 in md  # the 120 % bar
    page = render.html("Title <T>", every_kind(lang), lang)
    assert page.startswith("<!doctype html>") and page.rstrip().endswith("</html>") and f"lang='{lang}'" in page
    assert "<h1>Title &lt;T&gt;</h1>" in page and "<title>Title &lt;T&gt;</title>" in page
    assert "first line<br>see <a href='https://example.org/a?b=1&amp;c=2'>" in page
    assert "<strong>bold words</strong>" in page and "<li><b>#1</b>: a term&#x27;s text</li>" in page
    assert "<td>TTFT</td><td class='n'>1,234.5</td>" in page
    assert "<pre><code>vllm serve m \\\n  --tp 2\n```</code></pre>" in page
    assert page.count("<td style='white-space:nowrap'>") == 2 and "#dc2626" in page  # checks: coloured bars
    data = render.to_data(every_kind(lang))
    assert json.loads(json.dumps(data))[1]["blocks"][4]["items"][0] == {
        "name": "kv_cache",
        "status": "failed",
        "ratio": 1.2,
    }
    assert ("", "first line") in render.to_rows(every_kind(lang))
    with pytest.raises(ValueError, match="block kind: 'video'"):
        render.markdown("t", [("s", [Block("video", ("x",))])])


def hostile_dep(deploy, **kw):
    dep = deploy(**kw)
    return dataclasses.replace(dep, model=dataclasses.replace(dep.model, name=HOSTILE))


def assert_escaped(page: str) -> None:
    assert "<script>" not in page and "<img" not in page and "onerror=y>" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert "<style>" in page and "src=" not in page.replace("src=x", "")  # self-contained


def test_a_hostile_model_name_is_escaped_in_the_explorer_plan_and_compare_html(deploy):
    e = estimate(hostile_dep(deploy, **DEFAULT), Workload(input_len=512, output_len=128, batch=1))
    assert_escaped(html_report(e, "https://example.org/?m=<b>", "zh"))
    dep = hostile_dep(deploy, gpu="a10", max_model_len=2048)
    plan = check(dep, CHAT)
    data = plan_to_dict(plan, [], serve_command(plan), None, "en")
    assert_escaped(plan_html(data, plan, []))
    files = exports(None, [Compared("#1", HOSTILE, e)], [("Fits", ["yes"])], "en")
    assert_escaped(files["html"])
    assert r"\| <img" in files["md"]  # a Markdown cell or item cannot be split by the name's pipe


def test_an_extra_section_appears_once_in_every_format(deploy):
    """A section added once (e.g. the benchmark command) reaches every Explorer file and both Plan documents."""
    extra = [("Benchmark", [Block("code", ("vllm bench serve --model m",)), Block("p", ("predicted TTFT 120 ms",))])]
    e = estimate(deploy(**DEFAULT), DEFAULT_WORK)
    doc = export_document(e, None, "en", extra_sections=extra)
    from core.estimate.export import RENDERERS

    files = {ext: render_(doc) for ext, render_ in RENDERERS.items()}
    assert "## Benchmark\n\n```\nvllm bench serve --model m\n```" in files["md"]
    assert "<h2>Benchmark</h2><pre><code>vllm bench serve --model m</code></pre>" in files["html"]
    assert json.loads(files["json"])["sections"][0]["title"] == "Benchmark"
    assert ["extra", "Benchmark", "predicted TTFT 120 ms", ""] in list(csv.reader(io.StringIO(files["csv"])))
    assert "sections" not in json.loads(export_files(e)["json"])  # none asked: the JSON is as before
    dep = deploy(gpu="a10", max_model_len=2048)
    plan = check(dep, CHAT)
    data = plan_to_dict(plan, [], serve_command(plan), None, "zh")
    md, page = plan_markdown(data, plan, [], "zh", extra), plan_html(data, plan, [], "zh", extra)
    assert md.rstrip().endswith("predicted TTFT 120 ms") and page.count("<h2>Benchmark</h2>") == 1
    assert md.startswith(f"# {message('plan.report_title', 'zh')}\n")


def test_the_compare_html_carries_the_markdown_content(deploy):
    e = estimate(deploy(**DEFAULT), DEFAULT_WORK)
    link = "http://localhost:8501/compare?cmp=abc"
    files = exports(link, [Compared("#1", "a10 · 8B", e)], [("TTFT", ["1.2 s"])], "zh")
    page = files["html"]
    assert page.startswith("<!doctype html>") and message("compare.report_title", "zh") in page
    assert f"<a href='{link}'>{link}</a>" in page and "<td>TTFT</td><td>1.2 s</td>" in page
    assert provenance(link)["tool_version"] in page
    assert re.search(r"<li><b>#1</b>: a10 · 8B</li>", page)
