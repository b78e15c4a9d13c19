"""The plan's headroom checks as a document draws them: a text bar for Markdown and a coloured bar
for HTML, both on a 0-150 % track with a mark at 100 % of the limit (the Plan page draws the HTML)."""

from __future__ import annotations

import html
from collections.abc import Iterable

from core.messages import message
from core.planning.check import Check
from core.planning.report import headroom_line

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


def checks_markdown(checks: Iterable[Check], lang: str = "en") -> list[str]:
    """The checks as a Markdown table: name, status, the text bar and the headroom line."""
    t = lambda key: message(key, lang)  # noqa: E731
    rows = [f"| {t('plan.check')} | {t('plan.status')} | | |", "|---|---|---|---|"]
    return rows + [
        f"| {t(f'check.{c.name}')} | {t(f'status.{c.status}')} | `{_bar(c.ratio)}` | {headroom_line(c, lang)} |"
        for c in checks
    ]


def checks_html(checks: Iterable[Check], lang: str = "en") -> str:
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
