"""The validation set's comparisons as the page shows them, read from the stored report.

The report (``python -m core validate --write``) holds every row predicted with the defaults and
held out by source; reading it keeps the page instant (the leave-one-source-out fit takes minutes).
"""

from __future__ import annotations

import pandas as pd

from core.validation.report import load_report

SCOPES = ("held_out", "held_out_by_engine", "held_out_by_class", "in_sample")


def validation_frame() -> pd.DataFrame:
    """One line per (row, metric): measured, predicted held out by source, in-sample, error, source."""
    records = []
    for row in load_report().get("rows", []):
        held = row.get("held_out", {})
        for metric, value in row["measured"].items():
            if metric not in row["predicted"]:
                continue
            predicted = held.get(metric, row["predicted"][metric])
            records.append(
                {
                    "id": row["id"],
                    "kind": row["kind"],
                    "engine": f"{row['engine']} {row['engine_version']}".strip(),
                    "gpu": row["gpu"],
                    "model": row["model"],
                    "metric": metric,
                    "measured": value,
                    "predicted": predicted,
                    "error": predicted / value - 1 if value else None,
                    "in_sample": row["predicted"][metric],
                    "source_group": row["source_group"],
                    "source_url": row["source_url"],
                }
            )
    return pd.DataFrame.from_records(records)


def validation_summary() -> list[dict]:
    """scope, metric, rows, median and P90 APE: held out by source first (the headline)."""
    stored = load_report().get("summary", {})
    out = []
    for scope in SCOPES:
        out += [{"scope": scope, "metric": metric, **stats} for metric, stats in stored.get(scope, {}).items()]
    return out


def source_count() -> int:
    return int(load_report().get("sources", 0))
