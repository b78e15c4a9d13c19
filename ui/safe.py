"""User-supplied text shown on a page: names kept to plain characters, messages escaped.

Streamlit never renders raw HTML unless a page asks for it (no page does), but it
does render Markdown in alerts, captions and markdown: a name like ``[x](https://evil)`` or
``**`` would become a link or formatting. Custom model and GPU names are cleaned where they
enter (they then appear in many messages); error messages that quote a user's config.json are
escaped where they are shown.
"""

from __future__ import annotations

import re

NAME_MAX = 60
NOT_PLAIN = re.compile(r"[^\w .()/+:-]", flags=re.UNICODE)  # letters (any script), digits and a few signs
MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|~$!])")  # inline markup, links, HTML, math


def clean_name(text: str, fallback: str) -> str:
    """A display name with only letters, digits, spaces and . _ - ( ) / + : kept (at most 60)."""
    cleaned = " ".join(NOT_PLAIN.sub(" ", text).split())[:NAME_MAX]
    return cleaned or fallback


def escape_markdown(text: str) -> str:
    """``text`` shown literally by Streamlit's Markdown renderer."""
    return MARKDOWN_SPECIAL.sub(r"\\\1", text)
