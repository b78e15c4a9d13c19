"""A plan as a document to share: Markdown (with headroom bars to the 100 % mark) and HTML
(the CSV is :mod:`core.planning.report_csv`).

Both documents are drawn from one list of sections (:func:`sections`), built from
:func:`core.planning.report.plan_to_dict` and the message catalog, so they carry the same content as
the Plan page: provenance (date, tool version, restoring link), the inputs in words, the verdict and
operating point, the checks, the fixes in their groups, the setup's limits and the cheapest catalog
GPUs, the cost, the best deployment when it was searched, and the launch command with its log.
"""

from __future__ import annotations

import html
from typing import Any

from core.estimate.provenance import header_lines
from core.messages import message
from core.planning.answer import cost_sentence, operating_point, price_text, queue_sentence
from core.planning.check import Plan
from core.planning.fixes import Fix
from core.planning.report import fix_groups, headroom_line
from core.report.blocks import Block

BAR_WIDTH = 20
BAR_SCALE = 1.5
"""need / limit at a bar's end: the 100 % mark sits at two thirds of it."""
STATUS_COLORS = {"ok": "#16a34a", "marginal": "#d97706", "failed": "#dc2626"}


def _bar(ratio: float) -> str:
    """need / limit on a 0-150 % scale, with "│" at 100 % of the limit."""
    filled = BAR_WIDTH if ratio == float("inf") else min(round(ratio * BAR_WIDTH / BAR_SCALE), BAR_WIDTH)
    cells = "█" * filled + "░" * (BAR_WIDTH - filled)
    mark = round(BAR_WIDTH / BAR_SCALE)
    return cells[:mark] + "│" + cells[mark:]


def _money(value: float | None) -> str:
    return "∞" if value is None else f"{value:,.2f}"


def sections(data: dict[str, Any], plan: Plan, fixes: list[Fix], lang: str = "en") -> list[tuple[str, list[Block]]]:
    """The report's sections in page order, as (title, blocks); the first has the document's title."""
    t = lambda key, **kw: message(key, lang, **kw)  # noqa: E731
    inputs = tuple(f"{row['label']}: {row['value']}" for row in data["inputs"])
    top = [Block("p", tuple(header_lines(data["report"], lang))), Block("strong", (data["summary"],))]
    top.append(
        Block("p", (t("plan.in_flight_line", in_flight=f"{plan.in_flight:,.1f}", worst=plan.worst_case_in_flight),))
    )
    top.append(Block("p", tuple(filter(None, (queue_sentence(plan, lang), operating_point(plan, lang))))))
    out = [(t("plan.report_title"), top), (t("plan.inputs"), [Block("list", inputs)])]
    out.append((t("plan.checks"), [Block("checks", tuple(plan.checks)), Block("p", (t("plan.bar_legend"),))]))
    fix_blocks = []
    if not fixes:
        fix_blocks.append(Block("p", (t("plan.no_fixes") if plan.verdict != "feasible" else t("plan.no_fix_needed"),)))
    for group, members in fix_groups(fixes):
        fix_blocks.append(Block("strong", (t(f"plan.fix_group_{group}"),)))
        fix_blocks.append(
            Block(
                "list",
                tuple(
                    f"{f.lever.text(lang)}: {f.num_gpus} GPU · {price_text(f.cost_per_hour, lang)} · "
                    f"{headroom_line(f.plan.binding, lang)}" + (f" — {f.caveat.text(lang)}" if f.caveat else "")
                    for f in members
                ),
            )
        )
    out.append((t("plan.fixes_title"), fix_blocks))
    if solvers := data.get("solvers"):
        out.append((t("plan.solvers"), _solver_blocks(solvers, lang)))
    if c := data["cost"]:
        out.append((t("plan.cost"), [Block("p", (cost_sentence(c, lang),))]))
    if found := data.get("search"):
        out.append((t("report.best_title"), _search_blocks(found, lang)))
    launch = data["launch"]
    out.append(
        (
            t("plan.command"),
            [
                Block("code", (launch["command"],)),
                Block("p", (t("plan.expected_log"),)),
                Block("code", tuple(launch["expected_log"])),
            ],
        )
    )
    return out


def _solver_blocks(solvers: dict[str, Any], lang: str) -> list[Block]:
    t = lambda key, **kw: message(key, lang, **kw)  # noqa: E731
    sizing = solvers["min_gpus"]
    fewest = (
        t("plan.min_gpus_value", gpus=sizing["num_gpus"], replicas=sizing["replicas"], tp=sizing["tp"])
        if sizing
        else t("plan.none")
    )
    limits = (
        f"{t('plan.max_users')}: {solvers['max_load']:,.4g}" if solvers["max_load"] > 0 else t("plan.none"),
        f"{t('plan.max_prompt')}: {solvers['max_prompt_len']:,}" if solvers["max_prompt_len"] > 0 else t("plan.none"),
        f"{t('plan.min_gpus')}: {fewest}",
    )
    blocks = [Block("list", limits)]
    if options := solvers["cheapest_gpus"]:
        rows = tuple(
            (
                o["gpu_name"],
                str(o["num_gpus"]),
                f"{o['replicas']} × tp {o['tp']}",
                price_text(o["cost_per_hour"], lang),
                t(f"status.{'ok' if o['verdict'] == 'feasible' else 'marginal'}"),
            )
            for o in options
        )
        header = ("GPU", "GPUs", t("plan.layout"), "USD/h", t("plan.status"))
        blocks += [
            Block("strong", (t("plan.cheapest"),)),
            Block("table", rows, header),
            Block("p", (t("plan.cheapest_caption"),)),
        ]
    return blocks


def _search_blocks(found: dict[str, Any], lang: str) -> list[Block]:
    line = message(
        "report.best_line",
        lang,
        candidates=f"{found['candidates_evaluated']:,}",
        modes=", ".join(found["modes_evaluated"]),
        meeting=f"{found['meeting_slo']:,}",
    )
    header = ("GPU", "GPUs", "tp × pp (× dp)", "mode", "weights / KV", "USD/h", "USD/1M", "TTFT ms", "TPOT ms", "SLO")
    rows = tuple(
        (
            p["gpu"],
            str(p["num_gpus"]),
            f"{p['tp']} × {p['pp']}" + (f" × dp {p['dp']}" if p.get("dp", 1) > 1 else ""),
            p["mode"]
            if p["prefill_instances"] is None
            else f"{p['mode']} {p['prefill_instances']}P{p['decode_instances']}D",
            f"{p['weight_dtype']} / {p['kv_dtype']}",
            price_text(p["cost_per_hour"], lang),
            message("plan.no_catalog_price", lang)
            if p["cost_per_million_output_tokens"] is None
            else f"{p['cost_per_million_output_tokens']:,.3f}",
            f"{p['ttft_ms']:,.0f}" if p["ttft_ms"] is not None else "∞",
            f"{p['tpot_ms']:,.1f}" if p["tpot_ms"] is not None else "∞",
            "✓" if p["meets_slo"] else "✗",
        )
        for p in found["pareto"]
    )
    return [Block("p", (line,)), Block("table", rows, header)]


def markdown_report(data: dict[str, Any], plan: Plan, fixes: list[Fix], lang: str = "en") -> str:
    """One page for an email or a ticket, with every section of the Plan page (module docstring)."""
    out: list[str] = []
    for n, (title, blocks) in enumerate(sections(data, plan, fixes, lang)):
        out += [f"{'#' if n == 0 else '##'} {title}", ""]
        for block in blocks:
            out += [*_markdown_block(block, lang), ""]
    return "\n".join(out)


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|")


def _markdown_block(block: Block, lang: str) -> list[str]:
    if block.kind == "p":
        return ["  \n".join(block.items)]
    if block.kind == "strong":
        return [f"**{block.items[0]}**"]
    if block.kind == "list":
        return [f"- {item}" for item in block.items]
    if block.kind == "code":
        return ["```", *block.items, "```"]
    if block.kind == "checks":
        t = lambda key: message(key, lang)  # noqa: E731
        rows = [f"| {t('plan.check')} | {t('plan.status')} | | |", "|---|---|---|---|"]
        return rows + [
            f"| {t(f'check.{c.name}')} | {t(f'status.{c.status}')} | `{_bar(c.ratio)}` | {headroom_line(c, lang)} |"
            for c in block.items
        ]
    lines = ["| " + " | ".join(_cell(h) for h in block.header) + " |", "|" + "---|" * len(block.header)]
    return lines + ["| " + " | ".join(_cell(c) for c in row) + " |" for row in block.items]


def html_report(data: dict[str, Any], plan: Plan, fixes: list[Fix], lang: str = "en") -> str:
    """The Markdown report's sections as a self-contained HTML page with headroom bars."""
    parts = []
    for n, (title, blocks) in enumerate(sections(data, plan, fixes, lang)):
        tag = "h1" if n == 0 else "h2"
        parts.append(f"<{tag}>{html.escape(title)}</{tag}>")
        parts += [_html_block(block, lang) for block in blocks]
    title = html.escape(message("plan.report_title", lang))
    return (
        f"<!doctype html><html lang='{lang}'><meta charset='utf-8'><title>{title}</title>"
        "<body style='font-family:system-ui,sans-serif;max-width:960px;margin:2em auto'>"
        + "".join(parts)
        + "</body></html>"
    )


def checks_html(checks, lang: str = "en") -> str:
    """The checks as an HTML table (the HTML report's and the Plan page's): the status in its colour,
    need / limit as a bar in that colour on a 0-150 % track with a mark at 100 %, a check past the
    track filled to its end with "▶" after it, and the headroom line (percentages rounded as in the
    verdict)."""
    e = html.escape
    left = f"{100 / BAR_SCALE:.1f}%"  # the 100 % mark
    mark = f"<div style='position:absolute;left:{left};top:-2px;height:18px;border-left:2px solid #111'>"
    rows = []
    for c in checks:
        color, over = STATUS_COLORS[c.status], not c.ratio <= BAR_SCALE
        width = 100 if over else c.ratio / BAR_SCALE * 100
        weight = "" if c.status == "ok" else ";font-weight:600"
        arrow = f"<div style='position:absolute;left:100%;top:-3px;padding-left:3px;color:{color}'>▶</div>"
        rows.append(
            f"<tr><td>{e(message(f'check.{c.name}', lang))}</td>"
            f"<td style='white-space:nowrap'><span style='color:{color}{weight}'>"
            f"{e(message(f'status.{c.status}', lang))}</span></td>"
            f"<td><div style='background:#e5e7eb;width:240px;height:14px;position:relative;margin-right:20px'>"
            f"<div style='background:{color};width:{width:.0f}%;height:14px'></div>"
            f"{mark}</div>{arrow if over else ''}</div></td><td>{e(headroom_line(c, lang))}</td></tr>"
        )
    return f"<table>{''.join(rows)}</table>"


def _html_block(block: Block, lang: str) -> str:
    e = html.escape
    if block.kind == "p":
        return "<p>" + "<br>".join(e(i) for i in block.items) + "</p>"
    if block.kind == "strong":
        return f"<p><b>{e(block.items[0])}</b></p>"
    if block.kind == "list":
        return "<ul>" + "".join(f"<li>{e(i)}</li>" for i in block.items) + "</ul>"
    if block.kind == "code":
        return f"<pre>{e(chr(10).join(block.items))}</pre>"
    if block.kind == "checks":
        return checks_html(block.items, lang)
    head = "".join(f"<th>{e(h)}</th>" for h in block.header)
    body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in block.items)
    return f"<table border='1' cellpadding='4' style='border-collapse:collapse'><tr>{head}</tr>{body}</table>"
