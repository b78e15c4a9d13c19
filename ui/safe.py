"""User-supplied text shown on a page: names kept to plain characters, messages escaped.

Streamlit never renders raw HTML unless a page asks for it (no page does), but it
does render Markdown in alerts, captions and markdown: a name like ``[x](https://evil)`` or
``**`` would become a link or formatting. Custom model and GPU names are cleaned where they
are built (:mod:`core.spec.display_name`, the one rule for names from a form, a link, a
config.json or the Hub); error messages that quote a user's config.json are escaped where they
are shown.
"""

from __future__ import annotations

import re

from core.spec.display_name import NAME_MAX, clean_name, name_changed

__all__ = ["NAME_MAX", "clean_name", "escape_markdown", "name_changed"]

MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|~$!])")  # inline markup, links, HTML, math
AUTOLINK = re.compile(r"(?i)https?:(?=//)|www(?=\.)|@")
"""Where a zero-width space keeps quoted text from becoming a link (``https:``/``//``, ``www``/``.``,
``a@``/``b.com``): Streamlit draws those as links, backslash-escaped or not (checked in Chromium)."""


def escape_markdown(text: str) -> str:
    """``text`` shown literally by Streamlit's Markdown renderer, with no link in it."""
    return AUTOLINK.sub(lambda found: found.group() + "\u200b", MARKDOWN_SPECIAL.sub(r"\\\1", text))
