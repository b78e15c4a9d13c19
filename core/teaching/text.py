"""An exercise's answer as text in either language: paragraphs and tables of catalog messages whose
values core computed, plus the raw numbers (SI units) they were formatted from.

Numbers are formatted here the way the dashboard shows them (ms below 10 s, GiB with two decimals,
tokens/s, counts with thousands separators), so a figure in an answer reads as it does on a page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.messages import count, duration, gib, message, rate  # noqa: F401 (re-exported for the answers)


@dataclass(frozen=True)
class Text:
    """A message of the catalog and its values (already formatted)."""

    key: str
    params: tuple[tuple[str, str], ...] = ()

    def render(self, lang: str = "en") -> str:
        return message(self.key, lang, **dict(self.params))


def text(key: str, **params: Any) -> Text:
    return Text(key, tuple((name, str(value)) for name, value in params.items()))


Cell = str | Text


@dataclass(frozen=True)
class Table:
    """Column headings and rows; a cell is a value as shown or a message."""

    columns: tuple[Cell, ...]
    rows: tuple[tuple[Cell, ...], ...]

    def render(self, lang: str = "en") -> tuple[list[str], list[list[str]]]:
        """(headings, rows) in ``lang``."""
        shown = lambda cell: cell.render(lang) if isinstance(cell, Text) else cell  # noqa: E731
        return [shown(c) for c in self.columns], [[shown(c) for c in row] for row in self.rows]


@dataclass(frozen=True)
class Answer:
    """What the tool derives for one exercise: steps in reading order (paragraphs or tables) and
    the numbers behind them, by name [SI units, counts]."""

    exercise_id: str
    steps: tuple[Text | Table, ...]
    values: dict[str, Any] = field(default_factory=dict)


def ratio(value: float, digits: int = 1) -> str:
    """A factor such as "4.0×" (``digits`` decimals)."""
    return f"{value:,.{digits}f}×"


def share(value: float) -> str:
    """A share such as "12%"."""
    return f"{value:.0%}"
