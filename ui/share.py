"""The link that reopens the current view: the page's address with every input bound to the URL."""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st


def view_link() -> str | None:
    """This page's URL with the current query parameters (``st.context.url`` is the address the
    browser asked for, without its query); None where there is no browser (bare runs)."""
    base = st.context.url
    if not base:
        return None
    query = urlencode({key: st.query_params.get_all(key) for key in st.query_params}, doseq=True)
    return f"{base}?{query}" if query else base
