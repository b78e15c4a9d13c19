"""The one renderer of every document the tool writes: a title and its sections ``(title, [Block])``
(:mod:`core.report.blocks`) as Markdown or as one self-contained HTML page.

Block kinds: ``p`` (a paragraph, one line per item), ``strong`` (a bold paragraph), ``list`` (an item
is a text, or ``(term, text)`` drawn as a bold term before its text), ``table`` (``header`` and rows
of cells; a column whose cells are at least half numbers is right-aligned), ``code`` (preformatted lines) and
``checks`` (the plan's headroom checks with their bars, :mod:`core.report.checks`). A section with an
empty title has no heading. Links (http/https) in paragraphs become links; every text is escaped in
HTML, and table-breaking characters are escaped in Markdown.
"""

from __future__ import annotations

import html as _html
import re
from collections.abc import Iterable, Sequence
from typing import Any

from core.report.blocks import Block
from core.report.checks import checks_html, checks_markdown

KINDS = ("p", "strong", "list", "table", "code", "checks")
STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:960px;margin:2em auto;padding:0 1em}"
    "table{border-collapse:collapse;margin:0.5em 0}"
    "td,th{border-bottom:1px solid #e5e7eb;padding:2px 10px;text-align:left;vertical-align:top}"
    "td.n,th.n{text-align:right;white-space:nowrap}pre{background:#f3f4f6;padding:0.5em;overflow-x:auto}"
)
_NUMBER = re.compile(r"[-+−]?[\d,]*\.?\d+(?:e[-+]?\d+)?|[–∞]")
_MD_URL = re.compile(r"(?<![<(])\bhttps?://[^\s<>]+")
_HTML_URL = re.compile(r"\bhttps?://[^\s<]+")


def _numeric(rows: Sequence[Sequence[Any]], column: int) -> bool:
    """Whether at least half of a column's cells are numbers (it is then right-aligned)."""
    cells = [str(row[column]).strip() for row in rows if column < len(row) and str(row[column]).strip()]
    return bool(cells) and sum(bool(_NUMBER.fullmatch(c)) for c in cells) * 2 >= len(cells)


def _md_text(text: Any) -> str:
    """One line safe in a Markdown table cell or list item: line breaks flattened, pipes escaped."""
    return " ".join(str(text).split()).replace("|", r"\|")


def _md_links(text: str) -> str:
    return _MD_URL.sub(lambda m: f"<{m.group(0)}>", text)


def _md_item(item: Any) -> str:
    if isinstance(item, tuple):
        term, text = item
        return f"- **{_md_text(term)}**: {_md_links(_md_text(text))}"
    return f"- {_md_links(_md_text(item))}"


def markdown_block(block: Block, lang: str = "en") -> list[str]:
    """One block as Markdown lines."""
    if block.kind == "p":
        return ["  \n".join(_md_links(str(line)) for line in block.items)]
    if block.kind == "strong":
        return ["**" + " ".join(str(i) for i in block.items) + "**"]
    if block.kind == "list":
        return [_md_item(item) for item in block.items]
    if block.kind == "code":
        longest = max((len(run) for line in block.items for run in re.findall(r"`+", str(line))), default=0)
        fence = "`" * max(3, longest + 1)
        return [fence, *map(str, block.items), fence]
    if block.kind == "checks":
        return checks_markdown(block.items, lang)
    if block.kind == "table":
        width = len(block.header)
        align = ["---:" if _numeric(block.items, i) else "---" for i in range(width)]
        lines = ["| " + " | ".join(_md_text(h) for h in block.header) + " |", "|" + "|".join(align) + "|"]
        return lines + ["| " + " | ".join(_md_text(c) for c in row) + " |" for row in block.items]
    raise ValueError(f"block kind: {block.kind!r} is not one of {', '.join(KINDS)}")


def markdown(title: str, sections: Iterable[tuple[str, Sequence[Block]]], lang: str = "en") -> str:
    """The document as Markdown: ``# title``, then each section as ``## heading`` and its blocks."""
    out = [f"# {title}", ""]
    for heading, blocks in sections:
        out += [f"## {heading}", ""] if heading else []
        for block in blocks:
            out += [*markdown_block(block, lang), ""]
    return "\n".join(out)


def _html_text(text: Any) -> str:
    """Escaped, with http(s) addresses as links (the address escaped inside the attribute too)."""
    return _HTML_URL.sub(lambda m: f"<a href='{m.group(0)}'>{m.group(0)}</a>", _html.escape(str(text)))


def html_block(block: Block, lang: str = "en") -> str:
    """One block as HTML, every text escaped."""
    e = _html.escape
    if block.kind == "p":
        return "<p>" + "<br>".join(_html_text(i) for i in block.items) + "</p>"
    if block.kind == "strong":
        return "<p><strong>" + " ".join(e(str(i)) for i in block.items) + "</strong></p>"
    if block.kind == "list":
        items = (
            f"<b>{e(str(i[0]))}</b>: {_html_text(i[1])}" if isinstance(i, tuple) else _html_text(i) for i in block.items
        )
        return "<ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>"
    if block.kind == "code":
        return "<pre><code>" + e("\n".join(map(str, block.items))) + "</code></pre>"
    if block.kind == "checks":
        return checks_html(block.items, lang)
    if block.kind == "table":
        number = [_numeric(block.items, i) for i in range(len(block.header))]
        cls = lambda i: " class='n'" if i < len(number) and number[i] else ""  # noqa: E731
        head = "".join(f"<th{cls(i)}>{e(str(h))}</th>" for i, h in enumerate(block.header))
        body = "".join(
            "<tr>" + "".join(f"<td{cls(i)}>{e(str(c))}</td>" for i, c in enumerate(row)) + "</tr>"
            for row in block.items
        )
        return f"<table><tr>{head}</tr>{body}</table>"
    raise ValueError(f"block kind: {block.kind!r} is not one of {', '.join(KINDS)}")


def html(title: str, sections: Iterable[tuple[str, Sequence[Block]]], lang: str = "en") -> str:
    """The document as one self-contained HTML page (inline style, no script, nothing fetched)."""
    body = [f"<h1>{_html.escape(title)}</h1>"]
    for heading, blocks in sections:
        body += [f"<h2>{_html.escape(heading)}</h2>"] if heading else []
        body += [html_block(block, lang) for block in blocks]
    return (
        f"<!doctype html><html lang='{_html.escape(lang)}'><head><meta charset='utf-8'>"
        f"<title>{_html.escape(title)}</title><style>{STYLE}</style></head>"
        f"<body>{''.join(body)}</body></html>\n"
    )


def to_data(sections: Iterable[tuple[str, Sequence[Block]]]) -> list[dict[str, Any]]:
    """Sections as plain data for a JSON file: each block's kind, header and items (a check as its
    name, status and need / limit)."""

    def item(value: Any) -> Any:
        if hasattr(value, "ratio") and hasattr(value, "status"):
            ratio = value.ratio if value.ratio != float("inf") else None
            return {"name": value.name, "status": value.status, "ratio": ratio}
        return list(value) if isinstance(value, tuple) else value

    return [
        {
            "title": heading,
            "blocks": [{"kind": b.kind, "header": list(b.header), "items": [item(i) for i in b.items]} for b in blocks],
        }
        for heading, blocks in sections
    ]


def to_rows(sections: Iterable[tuple[str, Sequence[Block]]]) -> list[tuple[str, str]]:
    """Sections as (heading, one line of text) rows for a CSV file: a table row's cells joined by " | "."""
    rows = []
    for heading, blocks in sections:
        for b in blocks:
            for i in b.items:
                if b.kind == "checks":
                    rows.append((heading, f"{i.name}: {i.status}"))
                elif b.kind == "table" or isinstance(i, tuple):
                    rows.append((heading, " | ".join(map(str, i))))
                else:
                    rows.append((heading, str(i)))
    return rows
