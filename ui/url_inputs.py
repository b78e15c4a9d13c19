"""Page inputs that live in the URL, so a copied link reopens the same view."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st


def number(key: str, label: str, default, low, high, help: str | None = None):
    """A number input bound to the URL under ``key``; ints stay ints.

    The default is passed on every run: Streamlit leaves a bound value equal to the widget's default
    out of the URL, and without one it takes the minimum for the default, so a value set to the
    minimum would vanish from a link and reopen at ``default``. A value a preset put in the session
    still wins over it.
    """
    return st.number_input(label, min_value=low, max_value=high, value=default, key=key, bind="query-params", help=help)


def choice(key: str, param: str, label: str, options: Sequence[str], format_func: Callable[[str], str]) -> str:
    """A segmented choice kept in the URL as ``param`` by hand: a bound widget would write its
    translated label there, and a link would break when the language changes. The first option is
    the default and is left out of the URL."""
    if key not in st.session_state:
        from_url = st.query_params.get(param, options[0])
        st.session_state[key] = from_url if from_url in options else options[0]
    value = st.segmented_control(label, options, key=key, required=True, format_func=format_func)
    if value == options[0]:
        st.query_params.pop(param, None)
    else:
        st.query_params[param] = value
    return value
