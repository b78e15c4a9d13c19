"""The validation report: every row predicted with the defaults and held out by source, and the tables.

``python -m core validate --write`` stores it in ``data/validation/report.json`` (with the error bands
in errors.json); the Validation page and docs/accuracy.md read it, and a test checks that its
default predictions are what the code predicts today, so a change to the model cannot leave a stale
report behind.
"""

from __future__ import annotations

import functools
import json

from core.spec.catalog import DATA_DIR
from core.validation.dataset import Comparison, load_rows, source_summary, summary
from core.validation.grouped import FITTED, HeldOut

REPORT_PATH = DATA_DIR / "validation" / "report.json"
DIGITS = 4


def _rounded(values: dict[str, float]) -> dict[str, float]:
    return {k: round(v, DIGITS) for k, v in values.items()}


def build_report(in_sample: list[Comparison], held: HeldOut | None) -> dict:
    """The report as one JSON-ready dict; ``held`` None leaves out the leave-one-source-out part."""
    held_by_id = {c.row.id: c for c in held.comparisons} if held else {}
    rows = []
    for c in in_sample:
        h = held_by_id.get(c.row.id)
        rows.append(
            {
                "id": c.row.id,
                "kind": c.row.get("kind"),
                "engine": c.row.get("engine"),
                "engine_version": c.row.get("engine_version"),
                "gpu": c.row.get("gpu"),
                "model": c.row.get("model"),
                "source_group": c.row.group,
                "source_url": c.row.get("source_url"),
                "predicted": _rounded(c.predicted),
                "measured": c.measured,
                "error": _rounded(c.errors),
                **({"held_out": _rounded(h.predicted), "held_out_error": _rounded(h.errors)} if h else {}),
                "problem": c.error or None,
                "skipped": c.skipped or None,
            }
        )
    report = {
        "rows": rows,
        "sources": len({c.row.group for c in in_sample}),
        "summary": {"in_sample": summary(in_sample), "in_sample_by_class": summary(in_sample, by="class")},
    }
    if held:
        report["summary"] |= {
            "held_out": summary(held.comparisons),
            "held_out_by_source": source_summary(held.comparisons),
            "held_out_by_engine": summary(held.comparisons, by="engine"),
            "held_out_by_class": summary(held.comparisons, by="class"),
            "held_out_by_traffic": summary(held.comparisons, by="traffic"),
            "held_out_by_architecture": summary(held.comparisons, by="architecture"),
        }
        report["fit"] = {
            "fitted_fields": {k: list(v) for k, v in FITTED.items()},
            "on_all_sources": held.fitted_on_all,
            "by_held_out_source": held.chosen,
        }
    return report


@functools.cache
def load_report() -> dict:
    """The stored report, or {} when it has not been written."""
    if not REPORT_PATH.is_file():
        return {}
    return json.loads(REPORT_PATH.read_text())


def held_out_comparisons(report: dict) -> list[Comparison]:
    """The report's held-out predictions as comparisons over today's rows (for the error bands)."""
    rows = {r.id: r for r in load_rows()}
    out = []
    for entry in report.get("rows", []):
        if entry["id"] in rows and "held_out" in entry:
            out.append(Comparison(rows[entry["id"]], entry["held_out"], entry["measured"]))
    return out
