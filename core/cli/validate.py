"""``python -m core validate``: predicted against measured over the whole validation set."""

from __future__ import annotations

import argparse
import json

from core.validation.dataset import Comparison, compare_all, summary
from core.validation.uncertainty import ERRORS_PATH, errors_table


def add_validate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--write-errors",
        action="store_true",
        help=f"also write the error bands the dashboard shows to {ERRORS_PATH.name}",
    )


def validation_report(comparisons: list[Comparison]) -> dict:
    fit = [c for c in comparisons if c.row.fit_half]
    check = [c for c in comparisons if not c.row.fit_half]
    return {
        "rows": [
            {
                "id": c.row.id,
                "kind": c.row.get("kind"),
                "gpu": c.row.get("gpu"),
                "model": c.row.get("model"),
                "half": "fit" if c.row.fit_half else "check",
                "source_url": c.row.get("source_url"),
                "predicted": {k: round(v, 4) for k, v in c.predicted.items()},
                "measured": c.measured,
                "error": {k: round(v, 4) for k, v in c.errors.items()},
                "problem": c.error or None,
                "skipped": c.skipped or None,
            }
            for c in comparisons
        ],
        "summary": {
            "all": summary(comparisons),
            "fit_half": summary(fit),
            "check_half": summary(check),
            "by_gpu_class": summary(comparisons, by="class"),
        },
    }


def run_validate(args: argparse.Namespace) -> str:
    comparisons = compare_all()
    report = validation_report(comparisons)
    if args.write_errors:
        ERRORS_PATH.write_text(json.dumps(errors_table(comparisons), indent=2) + "\n")
    if args.json:
        return json.dumps(report, indent=2)
    predicted = sum(r["problem"] is None and r["skipped"] is None for r in report["rows"])
    skipped = sum(r["skipped"] is not None for r in report["rows"])
    lines = [
        f"{len(report['rows'])} validation rows: {predicted} predicted, {skipped} outside the model's scope",
        "",
        f"{'metric':32} {'rows':>5} {'median APE':>11} {'P90 APE':>9}",
    ]
    for scope in ("all", "check_half", "by_gpu_class"):
        lines.append(f"[{scope}]")
        for metric, s in report["summary"][scope].items():
            lines.append(f"  {metric:30} {s['rows']:>5} {s['median_ape']:>10.1%} {s['p90_ape']:>9.1%}")
    problems = [r for r in report["rows"] if r["problem"]]
    lines += [f"not predicted: {r['id']}: {r['problem']}" for r in problems]
    return "\n".join(lines)
