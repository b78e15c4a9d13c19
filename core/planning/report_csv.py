"""A plan as CSV rows, one per item of every section of the Plan page's report."""

from __future__ import annotations

import csv
import io
from typing import Any


def csv_report(data: dict[str, Any]) -> str:
    """Every section as CSV rows (kind, name, status, ratio, need, limit, unit, num_gpus, cost_per_hour):
    the report's provenance, the inputs in words, the checks, the fixes, the setup's limits, the
    cheapest catalog GPUs and the best-deployment front."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["kind", "name", "status", "ratio", "need", "limit", "unit", "num_gpus", "cost_per_hour"])
    for key, value in data["report"].items():
        writer.writerow(["report", key, value if value is not None else "", "", "", "", "", "", ""])
    for row in data["inputs"]:
        writer.writerow(["input", row["label"], row["value"], "", "", "", "", "", ""])
    for key, value in (data.get("price") or {}).items():  # the price and its source (core.report.money)
        writer.writerow(["price", key, "" if value is None else value, "", "", "", "", "", ""])
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
    if solvers := data.get("solvers"):
        sizing = solvers["min_gpus"]
        writer.writerow(["limit", "max_load", "", "", solvers["max_load"], "", data["requirement"]["load"], "", ""])
        writer.writerow(["limit", "max_prompt_len", "", "", solvers["max_prompt_len"], "", "tokens", "", ""])
        writer.writerow(
            [
                "limit",
                "min_gpus",
                sizing["verdict"] if sizing else "",
                "",
                "",
                "",
                "",
                sizing["num_gpus"] if sizing else "",
                "",
            ]
        )
        for o in solvers["cheapest_gpus"]:
            writer.writerow(
                ["gpu_option", o["gpu"], o["verdict"], "", "", "", "", o["num_gpus"], o["cost_per_hour"] or ""]
            )
    for p in (data.get("search") or {}).get("pareto", []):
        name = f"{p['gpu']} tp{p['tp']} pp{p['pp']} {p['weight_dtype']}/{p['kv_dtype']} {p['mode']}"
        writer.writerow(
            [
                "pareto",
                name,
                "meets_slo" if p["meets_slo"] else "misses_slo",
                "",
                "",
                "",
                "",
                p["num_gpus"],
                p["cost_per_hour"] or "",
            ]
        )
    return buffer.getvalue()
