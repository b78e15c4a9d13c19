"""Security review, kept true by tests: no dangerous calls on user data, no HTML from users,
the server's production settings, and a clean bandit scan (docs/security.md)."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APP_CODE = [
    ROOT / "app.py",
    *(ROOT / "core").rglob("*.py"),
    *(ROOT / "ui").rglob("*.py"),
    *(ROOT / "pages").rglob("*.py"),
]


def test_no_eval_exec_pickle_or_shell_in_the_app():
    dangerous = re.compile(r"\b(eval|exec)\(|\bpickle\b|\bmarshal\b|\bsubprocess\b|os\.system|shell=True|yaml\.load\(")
    found = [f"{p.relative_to(ROOT)}:{n}" for p in APP_CODE for n, line in enumerate(p.read_text().splitlines(), 1)
             if dangerous.search(line)]  # fmt: skip
    assert found == []


def test_no_page_renders_raw_html():
    found = [str(p.relative_to(ROOT)) for p in APP_CODE if "unsafe_allow_html" in p.read_text()]
    assert found == []  # nothing user-derived can become HTML: Streamlit escapes it everywhere else


def test_production_server_settings():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    server = config["server"]
    assert server["address"] == "127.0.0.1"  # loopback unless the README's deployment notes say otherwise
    assert server["maxUploadSize"] <= 2  # MiB; a config.json is a few KB
    assert server["enableXsrfProtection"] is True
    assert server["fileWatcherType"] == "none"
    assert config["runner"]["postScriptGC"] is False
    assert config["client"]["showErrorDetails"] == "none"  # no traceback on a student's screen


def test_bandit_finds_nothing():
    run = subprocess.run(
        [sys.executable, "-m", "bandit", "-q", "-r", "app.py", "core", "ui", "pages", "deploy", "-f", "txt"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_megabytes_of_junk_and_non_utf8_uploads_are_refused_before_parsing():
    import pytest

    from core.spec.hf_config import MAX_CONFIG_BYTES, ConfigError, read_config

    with pytest.raises(ConfigError, match="larger than"):
        read_config(b"{" + b" " * MAX_CONFIG_BYTES + b"}")
    with pytest.raises(ConfigError, match="not UTF-8"):
        read_config(b'{"model_type": "\xff\xfe"}')
    with pytest.raises(ConfigError, match="invalid JSON"):
        read_config(b"/etc/passwd")  # bytes are never a path
