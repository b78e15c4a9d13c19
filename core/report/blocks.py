"""The pieces a document's sections are made of, for every export and report the tool writes.

A section is ``(title, [Block, ...])``. Every renderer (Markdown, HTML) draws the same blocks, so a
section written once appears the same in every format.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Block:
    """One piece of a section: ``kind`` p (a paragraph, one line per item), strong (a bold paragraph),
    list (items), table (a header row and rows of cells), checks (the plan's headroom table with bars,
    items are :class:`core.planning.check.Check`), code (preformatted lines)."""

    kind: str
    items: tuple = ()
    header: tuple = ()


Section = tuple[str, list[Block]]
"""A heading and its blocks."""
