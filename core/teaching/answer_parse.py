"""What a student types in an answer box, read as a number in SI units (bytes, seconds, counts,
per second), or the reason it cannot be read.

Accepted: thousands separators ("131,072", "131 072", "1.234,5"), a decimal comma ("12,5"), a
sign, an exponent ("1.2e3"), a multiplier ("1.2k", "3万"), a unit after the number with or without
a space ("12.5 GiB", "12.5GB", "20 ms", "4,614 tok/s") and full-width characters from Chinese input
("１２．５ＧｉＢ", NFKC). A single comma followed by exactly three digits is a thousands separator
("1,234" is 1234, as the pages print numbers); any other single comma is a decimal one ("0,125",
"12,5"); a single dot is always a decimal point. With both, the last one is the decimal point.
A number without a unit is taken in the box's own unit.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

from core.spec import units

MAX_CHARS = 64
"""Longest answer read [characters]; an answer box holds one number and a unit."""

UNITS: dict[str, tuple[str, float]] = {}
"""Unit as typed (lower case, spaces removed) -> (dimension, SI value of one unit)."""
for _dimension, _scale, _names in (
    ("bytes", 1.0, "b byte bytes 字节"),
    ("bytes", units.KiB, "kib"),
    ("bytes", units.MiB, "mib"),
    ("bytes", units.GiB, "gib"),
    ("bytes", 1e3, "kb"),
    ("bytes", 1e6, "mb"),
    ("bytes", units.GB, "gb g"),
    ("seconds", 1.0, "s sec secs second seconds 秒"),
    ("seconds", units.MS, "ms msec millisecond milliseconds 毫秒"),
    ("seconds", 1e-6, "us µs μs microseconds 微秒"),
    ("requests", 1.0, "x × 倍 req reqs request requests 条 个 条请求 个请求 请求 seqs sequences"),
    ("tokens", 1.0, "tok tokens token 个token"),
    ("tokens_per_s", 1.0, "tok/s tokens/s token/s t/s tps tokenspersecond tok/秒 token/秒 tokens/秒"),
    ("requests_per_s", 1.0, "req/s reqs/s requests/s request/s rps qps requestspersecond 条/秒 请求/秒 个/秒 次/秒"),
):
    for _name in _names.split():
        UNITS[_name] = (_dimension, _scale)

MULTIPLIERS = {"k": 1e3, "K": 1e3, "M": 1e6, "千": 1e3, "万": 1e4}
"""A multiplier right after the number ("1.2k"); lower-case m is left out (milli or mega?)."""

_ABOUT = "≈~约大约"
_END = ".,;。、 "
"""Read around the number: "about" before it, a sentence's end after it."""
_SPACES = " \u00a0\u202f'’_"
_NUMBER = re.compile(r"([+-]?)([\d.,'’_ \u00a0\u202f]*\d)(?:[eE]([+-]?\d{1,6}))?")
_GROUPED = re.compile(r"(?<=\d)[ \u00a0\u202f'’_](?=\d{3}(?!\d))")


class Unreadable(ValueError):
    """Why a typed answer cannot be read: a message key of ``answer_check`` and its fields."""

    def __init__(self, key: str, **fields: str) -> None:
        super().__init__(key)
        self.key = key
        self.fields = fields


@dataclass(frozen=True)
class Reading:
    """A typed answer read: its value [SI] and the dimension of the unit typed (None: no unit)."""

    value: float
    dimension: str | None
    unit: str


def _grouped(whole: str, sep: str) -> bool:
    parts = whole.split(sep)
    return 1 <= len(parts[0]) <= 3 and all(len(p) == 3 for p in parts[1:])


def plain_number(body: str) -> str | None:
    """Digits and separators as Python reads a float ("131,072" -> "131072"), or None."""
    body = _GROUPED.sub("", body)
    if any(c in body for c in _SPACES):
        return None
    dots, commas = body.count("."), body.count(",")
    if dots and commas:
        decimal = "." if body.rfind(".") > body.rfind(",") else ","
        thousands = "," if decimal == "." else "."
        if body.count(decimal) > 1:
            return None
        whole, frac = body.split(decimal)
        return whole.replace(thousands, "") + "." + frac if _grouped(whole, thousands) else None
    if not (dots or commas):
        return body
    sep = "," if commas else "."
    if body.count(sep) > 1:
        return body.replace(sep, "") if _grouped(body, sep) else None
    whole, frac = body.split(sep)
    if sep == "," and len(frac) == 3 and whole.strip("0"):
        return whole + frac
    return (whole or "0") + "." + frac


def read(typed: str) -> Reading:
    """``typed`` as a value [SI in the unit typed; as typed when no unit]; raises :class:`Unreadable`."""
    if not isinstance(typed, str) or not typed.strip():
        raise Unreadable("empty")
    if len(typed) > MAX_CHARS:
        raise Unreadable("too_long", limit=str(MAX_CHARS))
    text = unicodedata.normalize("NFKC", typed).strip().lstrip(_ABOUT).rstrip(_END).strip()
    match = _NUMBER.match(text)
    if match is None:
        raise Unreadable("not_a_number")
    sign, body, exponent = match.groups()
    digits = plain_number(body)
    if digits is None:
        raise Unreadable("not_a_number")
    value = float(f"{sign}{digits}" + (f"e{exponent}" if exponent else ""))
    rest = re.sub(r"\s+", "", text[match.end() :])
    if rest[:1] in MULTIPLIERS and rest.lower() not in UNITS:
        value *= MULTIPLIERS[rest[0]]
        rest = rest[1:]
    if not math.isfinite(value):
        raise Unreadable("not_finite")
    if not rest:
        return Reading(value, None, "")
    if rest.lower() not in UNITS:
        raise Unreadable("unknown_unit", unit=rest[:16])
    dimension, scale = UNITS[rest.lower()]
    value *= scale
    if not math.isfinite(value):
        raise Unreadable("not_finite")
    return Reading(value, dimension, rest)
