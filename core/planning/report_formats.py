"""A plan as a document to share: Markdown (with headroom bars to the 100 % mark), HTML and CSV,
built from :func:`core.planning.report.plan_to_dict` and the message catalog."""

from __future__ import annotations

import csv
import html
import io
from typing import Any

from core.messages import message
from core.planning.check import Plan
from core.planning.fixes import Fix
from core.planning.report import fix_groups, headroom_line, price_text

BAR_WIDTH = 20


def _bar(ratio: float) -> str:
    """need / limit on a 0-150 % scale, with "│" at 100 % of the limit."""
    filled = BAR_WIDTH if ratio == float("inf") else min(round(ratio * BAR_WIDTH / 1.5), BAR_WIDTH)
    cells = "█" * filled + "░" * (BAR_WIDTH - filled)
    mark = round(BAR_WIDTH / 1.5)
    return cells[:mark] + "│" + cells[mark:]


def markdown_report(data: dict[str, Any], plan: Plan, fixes: list[Fix], lang: str = "en") -> str:
    """One page for an email or a ticket: verdict, inputs, checks, fixes, cost, vLLM command."""
    t = lambda key, **kw: message(key, lang, **kw)  # noqa: E731
    req, dep = data["requirement"], data["deployment"]
    out = [f"# {t('plan.report_title')}", "", f"**{data['summary']}**", "", f"## {t('plan.inputs')}", ""]
    out += [f"- {key}: {value}" for key, value in {**dep, **req}.items() if value is not None]
    out += [
        "",
        t("plan.in_flight_line", in_flight=f"{plan.in_flight:,.1f}", worst=plan.worst_case_in_flight),
        "",
        f"## {t('plan.checks')}",
        "",
        f"| {t('plan.check')} | {t('plan.status')} | | |",
        "|---|---|---|---|",
    ]
    for c in plan.checks:
        out.append(
            f"| {t(f'check.{c.name}')} | {t(f'status.{c.status}')} | `{_bar(c.ratio)}` | {headroom_line(c, lang)} |"
        )
    out += ["", t("plan.bar_legend"), "", f"## {t('plan.fixes_title')}", ""]
    if not fixes:
        out.append(t("plan.no_fixes") if plan.verdict != "feasible" else t("plan.no_fix_needed"))
    for group, members in fix_groups(fixes):
        out += [f"**{t(f'plan.fix_group_{group}')}**", ""]
        for fix in members:
            caveat = f" — {fix.caveat.text(lang)}" if fix.caveat else ""
            out.append(
                f"- **{fix.lever.text(lang)}**: {fix.num_gpus} GPU · {price_text(fix.cost_per_hour, lang)} · "
                f"{headroom_line(fix.plan.binding, lang)}{caveat}"
            )
        out.append("")
    if data["cost"]:
        c = data["cost"]
        out += [
            "",
            f"## {t('plan.cost')}",
            "",
            t(
                "plan.cost_line",
                per_hour=c["per_hour_usd"],
                per_million=c["per_million_output_tokens_usd"] or "∞",
                per_user=c["per_user_month_usd"] or "-",
            ),
        ]
    out += [
        "",
        f"## {t('plan.command')}",
        "",
        "```bash",
        data["launch"]["command"],
        "```",
        "",
        t("plan.expected_log"),
        "",
        "```",
        *data["launch"]["expected_log"],
        "```",
        "",
    ]
    return "\n".join(out)


def html_report(data: dict[str, Any], plan: Plan, fixes: list[Fix], lang: str = "en") -> str:
    """The Markdown report's content as a self-contained HTML page with headroom bars."""
    t = lambda key, **kw: html.escape(message(key, lang, **kw))  # noqa: E731
    colors = {"ok": "#16a34a", "marginal": "#d97706", "failed": "#dc2626"}
    rows = []
    for c in plan.checks:
        width = 100 if c.ratio == float("inf") else min(c.ratio / 1.5 * 100, 100)
        rows.append(
            f"<tr><td>{t(f'check.{c.name}')}</td><td style='white-space:nowrap'>{t(f'status.{c.status}')}</td>"
            f"<td><div style='background:#e5e7eb;width:240px;height:14px;position:relative'>"
            f"<div style='background:{colors[c.status]};width:{width:.0f}%;height:14px'></div>"
            f"<div style='position:absolute;left:66.7%;top:-2px;height:18px;border-left:2px solid #111'></div>"
            f"</div></td><td>{html.escape(headroom_line(c, lang))}</td></tr>"
        )
    fix_items = "".join(
        f"<li>{t(f'plan.fix_group_{group}')}<ul>"
        + "".join(
            f"<li><b>{html.escape(f.lever.text(lang))}</b>: {f.num_gpus} GPU · "
            f"{html.escape(price_text(f.cost_per_hour, lang))} · "
            f"{html.escape(headroom_line(f.plan.binding, lang))}"
            f"{' — ' + html.escape(f.caveat.text(lang)) if f.caveat else ''}</li>"
            for f in members
        )
        + "</ul></li>"
        for group, members in fix_groups(fixes)
    )
    inputs = "".join(
        f"<li>{html.escape(str(k))}: {html.escape(str(v))}</li>"
        for k, v in {**data["deployment"], **data["requirement"]}.items()
        if v is not None
    )
    expected = html.escape("\n".join(data["launch"]["expected_log"]))
    return (
        f"<!doctype html><html lang='{lang}'><meta charset='utf-8'><title>{t('plan.report_title')}</title>"
        "<body style='font-family:system-ui,sans-serif;max-width:900px;margin:2em auto'>"
        f"<h1>{t('plan.report_title')}</h1><p><b>{html.escape(data['summary'])}</b></p>"
        f"<h2>{t('plan.inputs')}</h2><ul>{inputs}</ul>"
        f"<p>{t('plan.in_flight_line', in_flight=f'{plan.in_flight:,.1f}', worst=plan.worst_case_in_flight)}</p>"
        f"<h2>{t('plan.checks')}</h2><table>{''.join(rows)}</table><p><small>{t('plan.bar_legend')}</small></p>"
        f"<h2>{t('plan.fixes_title')}</h2><ul>{fix_items}</ul>"
        f"<h2>{t('plan.command')}</h2><pre>{html.escape(data['launch']['command'])}</pre>"
        f"<p>{t('plan.expected_log')}</p><pre>{expected}</pre></body></html>"
    )


def csv_report(data: dict[str, Any]) -> str:
    """The checks and fixes as CSV rows (kind, name, status or verdict, ratio, need, limit, unit, GPUs, cost)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["kind", "name", "status", "ratio", "need", "limit", "unit", "num_gpus", "cost_per_hour"])
    for c in data["checks"]:
        writer.writerow(
            [
                "check",
                c["name"],
                c["status"],
                c["headroom_ratio"],
                c["need"],
                c["limit"],
                c["unit"],
                data["num_gpus"],
                "",
            ]
        )
    for f in data["fixes"]:
        writer.writerow(["fix", f["lever"], f["verdict"], "", "", "", "", f["num_gpus"], f["cost_per_hour"] or ""])
    return buffer.getvalue()
