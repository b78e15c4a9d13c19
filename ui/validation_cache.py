"""The validation set's comparisons as the page shows them, read from the stored report.

The report (``python -m core validate --write``) holds every row predicted with the defaults and
held out by source; reading it keeps the page instant (the leave-one-source-out fit takes minutes).
"""

from __future__ import annotations

import pandas as pd

from core.messages import load_messages
from core.spec.release import ENGINES
from core.validation.report import load_report
from ui.i18n import t

SCOPES = ("held_out", "held_out_by_engine", "held_out_by_class", "in_sample")
GROUPS = {"gddr": "GDDR", "hbm": "HBM", "tensorrt-llm": "TensorRT-LLM"} | ENGINES
"""A summary line's group (after " / "): a GPU memory class or an engine, by its own name."""


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


def shown_metric(name: str) -> str:
    """A metric of the validation set or of a calibration in words ("kv_cache_gib / hbm" reads
    "KV cache [GiB] / HBM"); a name the catalog does not know is shown as it is."""
    metric, _, group = name.partition(" / ")
    shown = _known(f"val.metrics.{metric}", metric)
    return f"{shown} / {GROUPS.get(group, group)}" if group else shown


def shown_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The comparisons as the page lists them: kinds and metrics in words, engines by their names."""
    if not len(frame):
        return frame
    out = frame.copy()
    out["kind"] = out["kind"].map(lambda kind: _known(f"val.kinds.{kind}", kind))
    out["metric"] = out["metric"].map(shown_metric)
    out["engine"] = out["engine"].map(_engine)
    return out


def _known(key: str, fallback: str) -> str:
    return t(key) if key in load_messages() else fallback


def _engine(text: str) -> str:
    """The engine by its name, the release as the source states it: vllm 0.11.0 reads vLLM 0.11.0."""
    engine, _, release = text.partition(" ")
    return f"{ENGINES.get(engine, engine)} {release}".strip()
