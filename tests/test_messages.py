"""The message catalog: every key in both languages, same placeholders, and every key used exists."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

from core.messages import LANGUAGES, load_messages

ROOT = Path(__file__).resolve().parents[1]
MESSAGES = load_messages()
SOURCES = [
    ROOT / "app.py",
    *sorted(ROOT.glob("pages/*.py")),
    *sorted(ROOT.glob("ui/*.py")),
    *sorted(ROOT.glob("core/**/*.py")),
]
LITERAL_KEY = re.compile(r'\b(?:t|message)\("([a-z0-9_.]+)"')
NOTICE_CODE = re.compile(r'\bnotice\(\s*"([a-z0-9_]+)"')
DYNAMIC = {  # keys built with f-strings in the UI: prefix -> the suffixes core can produce
    "bound": ["compute", "memory"],
    "memory": ["weights", "activations", "overhead", "kv_used", "kv_over", "kv_free", "held_back", "reserved"],
    "tradeoff": ["memory", "latency", "throughput"],
    "check": ["context", "weights", "kv_cache", "ttft", "tpot", "throughput"],
    "status": ["ok", "marginal", "failed"],
    "plan.preset": ["custom", "chat", "batch", "api"],
    "plan.load": ["users", "in_flight", "rate"],
    "plan.verdict": ["feasible", "marginal", "not_feasible"],
    "lt.mode": ["rate", "concurrency", "users"],
}


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("key", sorted(MESSAGES))
def test_every_key_has_both_languages_with_the_same_placeholders(key):
    entry = MESSAGES[key]
    assert set(entry) == set(LANGUAGES), f"{key} has {sorted(entry)}"
    assert all(entry[lang].strip() for lang in LANGUAGES)
    assert placeholders(entry["en"]) == placeholders(entry["zh"])


def test_chinese_is_really_translated():
    untranslated = [k for k, v in MESSAGES.items() if v["en"] == v["zh"] and re.search(r"[a-z]{4} [a-z]{4}", v["en"])]
    assert not untranslated


def test_every_key_the_ui_uses_exists():
    used = set()
    for path in SOURCES:
        used |= set(LITERAL_KEY.findall(path.read_text()))
    for prefix, suffixes in DYNAMIC.items():
        separator = "_" if prefix.startswith(("plan.", "lt.")) else "."
        used |= {f"{prefix}{separator}{s}" for s in suffixes}
    assert used - set(MESSAGES) == set()


def test_every_notice_core_raises_has_text():
    codes = set()
    for path in (ROOT / "core").rglob("*.py"):
        codes |= set(NOTICE_CODE.findall(path.read_text()))
    assert codes
    assert {f"notice.{c}" for c in codes} - set(MESSAGES) == set()
