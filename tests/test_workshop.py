"""A short workshop: 10 simulated students against one `streamlit run` server on loopback.

It speaks Streamlit's websocket protocol (bench/workshop_load.py) and fails on any error (a
traceback, a failed or dropped rerun, a lost connection) or any value that differs from core's;
it records timing but never fails on it (docs/benchmarks.md has the 10- and 30-student figures).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from workshop_load import run_workshop


def test_ten_students_for_ten_seconds_see_no_error_and_no_wrong_value():
    result = run_workshop(students=10, seconds=10.0, warm=False)  # all at once on a fresh server
    assert result["errors"] == []
    assert result["wrong_values"] == []
    assert result["reruns"] >= 10 * 5  # every student kept working: page loads and changes
