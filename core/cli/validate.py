"""``python -m core validate``: predicted against measured over the whole validation set.

By default every row is predicted with the defaults and again held out by source (the fitted speed
constants chosen on every other source group, :mod:`core.validation.grouped`); that takes a few
minutes on two cores. ``--in-sample`` skips the cross-validation (seconds).
"""

from __future__ import annotations

import argparse
import json
import sys

from core.validation.dataset import compare_all
from core.validation.grouped import efficiencies_fitted, leave_one_source_out
from core.validation.report import REPORT_PATH, build_report, held_out_comparisons
from core.validation.uncertainty import ERRORS_PATH, errors_table


def add_validate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--in-sample",
        action="store_true",
        help="only the defaults' predictions, without the leave-one-source-out fit (seconds, not minutes)",
    )
    parser.add_argument(
        "--write",
        action="store_true",
        help=f"write the report to {REPORT_PATH.name} and the dashboard's error bands to {ERRORS_PATH.name}",
    )


def run_validate(args: argparse.Namespace) -> str:
    if args.write and args.in_sample:
        raise ValueError("--write needs the leave-one-source-out fit: drop --in-sample")
    held = None
    if args.in_sample:
        in_sample = compare_all()
    else:
        print("fitting the speed constants leave-one-source-out (a few minutes)...", file=sys.stderr)
        held = leave_one_source_out()
        # in sample = with the constants fitted on every source: what CLASS_EFFICIENCY must hold
        # (a test checks it does, and that these predictions are what the code gives)
        in_sample = compare_all(efficiency_by_class=efficiencies_fitted(held.fitted_on_all))
    report = build_report(in_sample, held)
    if args.write:
        REPORT_PATH.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
        ERRORS_PATH.write_text(json.dumps(errors_table(held_out_comparisons(report)), indent=2) + "\n")
    if args.json:
        return json.dumps(report, indent=2)
    return _text(report)


SCOPES = (
    ("held_out", "held out by source (headline)"),
    ("held_out_by_engine", "held out, by engine"),
    ("held_out_by_class", "held out, by GPU memory class"),
    ("held_out_by_traffic", "held out, by traffic kind"),
    ("held_out_by_architecture", "held out, dense and MoE"),
    ("in_sample", "in sample (defaults fitted on every source)"),
)


def _text(report: dict) -> str:
    rows = report["rows"]
    predicted = sum(r["problem"] is None and r["skipped"] is None for r in rows)
    skipped = sum(r["skipped"] is not None for r in rows)
    lines = [
        f"{len(rows)} validation rows from {report['sources']} sources: {predicted} predicted, "
        f"{skipped} outside the model's scope",
        "",
        f"{'metric':32} {'rows':>5} {'median APE':>11} {'P90 APE':>9}",
    ]
    for scope, title in SCOPES:
        if scope not in report["summary"]:
            continue
        lines.append(f"[{title}]")
        for metric, s in report["summary"][scope].items():
            lines.append(f"  {metric:30} {s['rows']:>5} {s['median_ape']:>10.1%} {s['p90_ape']:>9.1%}")
    if "held_out_by_source" in report["summary"]:
        lines.append("[held out: median over sources of each source's median]")
        for metric, s in report["summary"]["held_out_by_source"].items():
            lines.append(f"  {metric:30} {s['sources']:>5} {s['median_ape']:>10.1%}")
    if "fit" in report:
        for cls, values in report["fit"]["on_all_sources"].items():
            chosen = ", ".join(f"{k} {v:g}" for k, v in values.items())
            lines.append(f"fitted on every source, {cls}: {chosen}")
    lines += [f"not predicted: {r['id']}: {r['problem']}" for r in rows if r["problem"]]
    return "\n".join(lines)
