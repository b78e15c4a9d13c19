"""Lint, format and spelling run with the tests, so CI enforces them (config in pyproject.toml)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def tool(name: str) -> str:
    found = BIN / name if (BIN / name).exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[test]'")
    return str(found)


@pytest.mark.parametrize(
    "command",
    [["ruff", "check", "."], ["ruff", "format", "--check", "."], ["typos", "."]],
    ids=["ruff-check", "ruff-format", "typos"],
)
def test_tool_passes(command):
    proc = subprocess.run([tool(command[0]), *command[1:]], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_core_never_imports_ui_libraries():
    for path in (ROOT / "core").rglob("*.py"):
        text = path.read_text()
        for library in ("streamlit", "plotly"):
            assert f"import {library}" not in text and f"from {library}" not in text, path
