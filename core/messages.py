"""The message catalog (``data/messages.toml`` and ``data/messages/*.toml``): every user-facing
sentence in English and Chinese.

Keys are dotted paths (``notice.does_not_fit``); each leaf table holds ``en`` and ``zh`` templates
with named ``{placeholders}``. Core uses it for the English text of its notices (CLI); the
dashboard uses it for every string it shows. A test checks both languages have every key.
"""

from __future__ import annotations

import functools
import string
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.spec import DATA_DIR, units

MESSAGES_PATH = DATA_DIR / "messages.toml"
MESSAGES_DIR = DATA_DIR / "messages"
"""More catalog files, one per concern; a key defined in two files is an error."""
LANGUAGES = ("en", "zh")


@functools.cache
def load_messages() -> dict[str, dict[str, str]]:
    """Flattened catalog: dotted key -> {language: template}."""
    flat: dict[str, dict[str, str]] = {}

    def walk(prefix: str, node: dict[str, Any], path) -> None:
        if "en" in node and isinstance(node["en"], str):
            if prefix in flat:
                raise ValueError(f"message {prefix!r} is defined twice (again in {path.name})")
            flat[prefix] = {k: v for k, v in node.items() if isinstance(v, str)}
            return
        for key, child in node.items():
            walk(f"{prefix}.{key}" if prefix else key, child, path)

    for path in (MESSAGES_PATH, *sorted(MESSAGES_DIR.glob("*.toml"))):
        with path.open("rb") as fh:
            walk("", tomllib.load(fh), path)
    return flat


class _Formatter(string.Formatter):
    """``str.format`` plus one form for counted words: ``{n:GPU|GPUs}`` is the word for one when
    ``n`` is 1, else the other (English needs it; Chinese templates write the count alone)."""

    def format_field(self, value: Any, format_spec: str) -> str:
        if "|" in format_spec:
            one, other = format_spec.split("|", 1)
            return one if _is_one(value) else other
        return super().format_field(value, format_spec)


def _is_one(value: Any) -> bool:
    try:
        return float(str(value).replace(",", "")) == 1
    except ValueError:
        return False


_FORMATTER = _Formatter()


def message(key: str, lang: str = "en", **params: Any) -> str:
    """The template for ``key`` in ``lang`` (English when missing), filled with ``params``; a field
    written ``{n:replica|replicas}`` gives the word for ``n`` (see :class:`_Formatter`)."""
    entry = load_messages()[key]
    template = entry.get(lang, entry["en"])
    return _FORMATTER.format(template, **params) if "|" in template else template.format(**params)


def alternatives(items: Sequence[str], lang: str = "en") -> str:
    """Choices in a sentence: "a, b or c" ("a、b 或 c")."""
    if len(items) < 2:
        return "".join(items)
    return message("names.separator", lang).join(items[:-1]) + message("names.or", lang) + items[-1]


@dataclass(frozen=True)
class Notice:
    """Something the user should know about a result: a catalog key plus its formatted values."""

    code: str
    params: tuple[tuple[str, str], ...] = ()

    def text(self, lang: str = "en") -> str:
        return message(f"notice.{self.code}", lang, **dict(self.params))


def notice(code: str, **params: Any) -> Notice:
    return Notice(code, tuple((k, str(v)) for k, v in params.items()))


def gib_text(value: float) -> str:
    """Bytes as notices quote them [bytes -> "1.25 GiB"]."""
    return f"{value / units.GiB:.2f} GiB"


# Numbers as every page, export and answer shows them (ui/fmt.py and core/teaching/text.py use these):


def duration(seconds: float) -> str:
    """ms below 1 s, seconds from 1 s, to three figures: 45.6 ms, 404 ms, 1.25 s, 58.3 s."""
    if seconds < 1:
        return f"{seconds / units.MS:,.1f} ms" if seconds < 0.1 else f"{seconds / units.MS:,.0f} ms"
    return f"{seconds:,.2f} s" if seconds < 10 else f"{seconds:,.1f} s"


def gib(value: float, digits: int = 2) -> str:
    """Bytes as GiB."""
    return f"{value / units.GiB:,.{digits}f} GiB"


def rate(tokens_per_s: float) -> str:
    return f"{tokens_per_s:,.0f} tok/s"


def count(value: float) -> str:
    return f"{value:,.0f}"
