"""The validation set's comparisons, computed once per server process (they run the simulator)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.validation.dataset import compare_all, summary


@st.cache_resource(show_spinner=False)
def _comparisons():
    return compare_all()


def validation_frame() -> pd.DataFrame:
    """One line per (row, metric): predicted, measured, error, source."""
    records = []
    for c in _comparisons():
        for metric, error in c.errors.items():
            records.append(
                {
                    "id": c.row.id,
                    "kind": c.row.get("kind"),
                    "gpu": c.row.get("gpu"),
                    "model": c.row.get("model"),
                    "metric": metric,
                    "predicted": c.predicted[metric],
                    "measured": c.measured[metric],
                    "error": error,
                    "half": "fit" if c.row.fit_half else "check",
                    "source_url": c.row.get("source_url"),
                }
            )
    return pd.DataFrame.from_records(records)


def validation_summary() -> list[dict]:
    comparisons = _comparisons()
    out = []
    for scope, group in (("all", comparisons), ("check half", [c for c in comparisons if not c.row.fit_half])):
        for metric, stats in summary(group).items():
            out.append({"scope": scope, "metric": metric, **stats})
    for metric, stats in summary(comparisons, by="class").items():
        out.append({"scope": "by GPU class", "metric": metric, **stats})
    return out
