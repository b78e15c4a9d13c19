"""Plan's check bars (audit D6): a 100 % mark on every bar, failing and marginal rows coloured apart,
percentages rounded as the verdict rounds them, a check past the 150 % track shown as over (full bar
and ▶), not as a shorter bar; the page draws the HTML report's rule in both languages."""

from __future__ import annotations

import re

import pytest

from core.messages import message
from core.planning.check import Check
from core.planning.report_formats import BAR_SCALE, STATUS_COLORS, checks_html
from tests.app_helpers import open_app

ROW = re.compile(r"<tr>(.*?)</tr>")
CELL = re.compile(r"<td[^>]*>(.*?)</td>")
STATUS = re.compile(r"<span style='color:(#[0-9a-f]{6})(;font-weight:600)?'>([^<]*)</span>")
FILL = re.compile(r"<div style='background:(#[0-9a-f]{6});width:(\d+)%;height:14px'>")
MARK = "left:66.7%;top:-2px;height:18px;border-left:2px solid #111"
PERCENT = re.compile(r"(\d+(?:\.\d+)?)%")


def rows(body: str) -> list[dict]:
    """Each row of a checks table as the reader sees it: name, status and its colour, the bar's
    fill colour and width, whether it has the 100 % mark and the ▶, and the headroom text."""
    found = []
    for row in ROW.findall(body):
        name, status, bar, text = CELL.findall(row)
        colour, bold, word = STATUS.fullmatch(status).groups()
        fill = FILL.search(bar)
        found.append(
            {
                "name": name,
                "status": word,
                "colour": colour,
                "bold": bool(bold),
                "fill": fill.group(1),
                "width": int(fill.group(2)),
                "mark": MARK in bar,
                "over": "▶" in bar,
                "text": text,
            }
        )
    return found


def test_the_bars_mark_100_colour_each_status_and_round_like_the_text():
    """Hand-made checks: 50 % ok, 87.89 % marginal (above 85 %), 119.68 % failing (the audit's KV),
    250 % and a weight check with no room (infinite) past the track."""
    checks = [
        Check(name="context", need=1024, limit=2048, unit="tokens"),
        Check(name="tpot", need=0.043945, limit=0.05, unit="s"),
        Check(name="kv_cache", need=11.968, limit=10.0, unit="bytes"),
        Check(name="ttft", need=2.5, limit=1.0, unit="s"),
        Check(name="weights", need=5.0, limit=0.0, unit="bytes"),
    ]
    assert [c.status for c in checks] == ["ok", "marginal", "failed", "failed", "failed"]
    shown = rows(checks_html(checks))
    assert all(r["mark"] for r in shown)  # the 100 % mark on every bar, at 1 / 1.5 of the track
    assert [r["colour"] for r in shown] == [STATUS_COLORS[c.status] for c in checks]
    assert [r["fill"] for r in shown] == [r["colour"] for r in shown]  # the bar in its status colour
    assert len({STATUS_COLORS["ok"], STATUS_COLORS["marginal"], STATUS_COLORS["failed"]}) == 3
    assert [r["bold"] for r in shown] == [False, True, True, True, True]
    # need / limit over 150 %: 50 % -> 33 %, 87.89 % -> 59 %, 119.68 % -> 80 % (past the mark at 66.7 %)
    assert [r["width"] for r in shown] == [33, 59, 80, 100, 100]
    assert [r["over"] for r in shown] == [False, False, False, True, True]
    # the text rounds as the verdict does: 87.89 % reads 88 %, never with decimals
    assert [PERCENT.search(r["text"]).group(1) for r in shown[:4]] == ["50", "88", "120", "250"]
    assert "∞" in shown[4]["text"]
    assert not any(re.search(r"\d\.\d+ ?%", r["text"]) for r in shown)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_plan_page_draws_the_checks_with_the_reports_rule(lang):
    """The default Plan (Llama-3.1-8B, one A10, 50 chat users) fails: its table marks every bar,
    colours failing rows red and ok rows green, each bar's width is its text's percentage over the
    150 % track, an over-the-track check ends in ▶, and the verdict's percentages are the table's."""
    at = open_app(**({"lang": "zh"} if lang == "zh" else {}))
    at.switch_page("pages/plan_page.py").run()
    assert not at.exception
    tables = [h.proto.body for h in at.get("html") if "<table>" in h.proto.body]
    assert len(tables) == 1
    shown = rows(tables[0])
    names = {message(f"check.{n}", lang): n for n in ("context", "weights", "kv_cache", "ttft", "tpot", "throughput")}
    assert [r["name"] for r in shown] and all(r["name"] in names for r in shown)
    statuses = {message(f"status.{s}", lang): s for s in STATUS_COLORS}
    assert "failed" in {statuses[r["status"]] for r in shown} and "ok" in {statuses[r["status"]] for r in shown}
    for r in shown:
        assert r["mark"]
        assert r["colour"] == r["fill"] == STATUS_COLORS[statuses[r["status"]]]
        percent = int(PERCENT.search(r["text"]).group(1))  # whole percents, as the verdict writes them
        if percent > 150:
            assert r["over"] and r["width"] == 100
        else:
            assert not r["over"] and abs(r["width"] - percent / BAR_SCALE) <= 1
    verdict = at.error[0].value
    for r in shown:
        if statuses[r["status"]] == "failed":
            assert f"{PERCENT.search(r['text']).group(1)}%" in verdict
    legend = message("plan.checks_legend", lang)
    assert legend in [c.value for c in at.caption]
    if lang == "zh":
        from tests.test_app_zh import english_left

        text = " ".join(f"{r['name']} {r['status']} {r['text']}" for r in shown)
        assert english_left(text) == [] and english_left(legend) == []
