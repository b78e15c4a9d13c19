"""Display formatting: SI values from core to short strings with units (same in both languages)."""

from __future__ import annotations

from core.spec import units


def duration(seconds: float) -> str:
    """ms below 10 s, seconds above."""
    if seconds < 10:
        return f"{seconds / units.MS:,.1f} ms" if seconds < 0.1 else f"{seconds / units.MS:,.0f} ms"
    return f"{seconds:,.1f} s"


def gib(value: float) -> str:
    return f"{value / units.GiB:,.2f} GiB"


def rate(tokens_per_s: float) -> str:
    return f"{tokens_per_s:,.0f} tok/s"


def count(value: float) -> str:
    return f"{value:,.0f}"
