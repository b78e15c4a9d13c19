"""Model and GPU names that came from outside (a config.json, a link, the Hub, a form): one cleaning rule.

Such a name reaches pages, exports, handouts and the CLI's answers. Streamlit renders Markdown in
alerts, captions and tables' text, so ``[x](https://evil)`` or ``**`` in a name would become a link
or formatting, and a name of thousands of characters would flood every line it is quoted in. Every
name built from outside input keeps only letters (any script), digits, spaces and ``. _ - ( ) / + :``,
no ``//`` or ``www.`` (from which Markdown would make a bare URL a link), runs of spaces collapsed,
at most :data:`NAME_MAX` characters: :func:`clean_name`. Where the
cleaning changed what someone typed, the page says so (:func:`name_changed`).
"""

from __future__ import annotations

import re

NAME_MAX = 60
"""Longest display name [characters]: the catalog's longest is 33."""
NOT_PLAIN = re.compile(r"[^\w .()/+:-]", flags=re.UNICODE)
"""Anything but letters (any script), digits, underscore, space and . ( ) / + : -."""
SAFE_ID = re.compile(r"[^a-z0-9._-]+")
"""What an id made from outside text may not hold: ids travel in links and file names."""


AUTOLINK = re.compile(r"/{2,}|(?i:\bwww)\.")
"""What Markdown's autolinks start from, left in plain characters: ``://`` (a URL) and ``www.``."""
EDGE_UNDERSCORE = re.compile(r"(?<![^\W_])_+|_+(?![^\W_])")
"""Underscores at a word's edge, where Markdown makes emphasis (``_x_``); inside one (``my_model``) they stay."""
SHORTCODE = re.compile(r":(?=[\w/+.-]+:)")
"""A colon that opens Streamlit's ``:name:`` shortcodes: ``:smile:`` draws an emoji and ``:material/home:`` an
icon from Google's font (a request to another host). One colon (``llama3.1:8b``) stays."""


def clean_name(text: str, fallback: str) -> str:
    """``text`` as a display name: only letters, digits, spaces and ``. _ - ( ) / + :`` kept, a run of
    slashes one slash and ``www.`` without its dot (so no URL becomes a link), ``_`` only inside a
    word (no emphasis), no ``:name:`` shortcode (no emoji or icon), spaces collapsed, cut to
    :data:`NAME_MAX` characters; ``fallback`` when nothing is left."""
    plain = AUTOLINK.sub(lambda found: "/" if found.group().startswith("/") else found.group()[:-1] + " ", text)
    cut = " ".join(NOT_PLAIN.sub(" ", plain).split())[:NAME_MAX]
    unmarked = SHORTCODE.sub(": ", EDGE_UNDERSCORE.sub(" ", cut))  # after the cut, which can leave one at the end
    cleaned = " ".join(unmarked.split())
    return cleaned or fallback


def name_changed(typed: str, cleaned: str) -> bool:
    """Whether cleaning changed ``typed`` beyond its spacing (a caption should say so)."""
    return " ".join(typed.split()) != cleaned


def safe_id(text: str, fallback: str) -> str:
    """``text`` as an id: lower case, every run of other characters one ``-``, at most 60 characters."""
    slug = SAFE_ID.sub("-", text.strip().lower()).strip("-")[:NAME_MAX].strip("-")
    return slug or fallback
