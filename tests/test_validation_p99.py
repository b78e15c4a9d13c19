"""The measured P99 TTFT column: a positive number or empty, never below the row's median, never on start-up rows."""

from __future__ import annotations

import csv
import math
from pathlib import Path

SERVING = Path(__file__).resolve().parent.parent / "data" / "validation" / "serving.csv"


def _rows() -> list[dict[str, str]]:
    with SERVING.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_the_column_follows_the_median():
    header = next(csv.reader(SERVING.open(newline="", encoding="utf-8")))
    assert header[header.index("ttft_ms_median") + 1] == "ttft_ms_p99"


def test_every_p99_is_a_positive_number_or_empty():
    bad = []
    for row in _rows():
        cell = row["ttft_ms_p99"].strip()
        if not cell:
            continue
        try:
            value = float(cell)
        except ValueError:
            bad.append((row["id"], cell))
            continue
        if not (math.isfinite(value) and value > 0):
            bad.append((row["id"], cell))
    assert not bad, bad


def test_p99_is_not_below_the_median():
    bad = [
        (r["id"], r["ttft_ms_median"], r["ttft_ms_p99"])
        for r in _rows()
        if r["ttft_ms_p99"].strip()
        and r["ttft_ms_median"].strip()
        and float(r["ttft_ms_p99"]) < float(r["ttft_ms_median"])
    ]
    assert not bad, bad


def test_startup_rows_have_no_p99():
    assert not [r["id"] for r in _rows() if r["kind"] == "startup_log" and r["ttft_ms_p99"].strip()]
