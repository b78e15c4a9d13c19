"""Language of the session and the ``t()`` lookup into the message catalog (data/messages.toml)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from core.messages import LANGUAGES, Notice, message

LANGUAGE_NAMES = {"en": "English", "zh": "中文"}
if set(LANGUAGE_NAMES) != set(LANGUAGES):
    raise RuntimeError("ui.i18n.LANGUAGE_NAMES and the message catalog's languages differ")


def lang() -> str:
    value = st.session_state.get("lang", "en")
    return value if value in LANGUAGES else "en"


def t(key: str, **params: Any) -> str:
    """The UI string ``key`` in the session's language."""
    return message(key, lang(), **params)


def notice_text(item: Notice) -> str:
    return item.text(lang())
