"""The message catalog (``data/messages.toml`` and ``data/messages/*.toml``): every user-facing
sentence in English and Chinese.

Keys are dotted paths (``notice.does_not_fit``); each leaf table holds ``en`` and ``zh`` templates
with named ``{placeholders}``. Core uses it for the English text of its notices (CLI); the
dashboard uses it for every string it shows. A test checks both languages have every key.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from typing import Any

from core.spec import units
from core.spec.catalog import DATA_DIR

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


def message(key: str, lang: str = "en", **params: Any) -> str:
    """The template for ``key`` in ``lang`` (English when missing), filled with ``params``."""
    entry = load_messages()[key]
    return entry.get(lang, entry["en"]).format(**params)


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
    """ms below 10 s, seconds above."""
    if seconds < 10:
        return f"{seconds / units.MS:,.1f} ms" if seconds < 0.1 else f"{seconds / units.MS:,.0f} ms"
    return f"{seconds:,.1f} s"


def gib(value: float, digits: int = 2) -> str:
    """Bytes as GiB."""
    return f"{value / units.GiB:,.{digits}f} GiB"


def rate(tokens_per_s: float) -> str:
    return f"{tokens_per_s:,.0f} tok/s"


def count(value: float) -> str:
    return f"{value:,.0f}"
