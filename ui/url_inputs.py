"""Page inputs that live in the URL, so a copied link reopens the same view."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st


def number(key: str, label: str, default, low, high, help: str | None = None):
    """A number input bound to the URL under ``key``; ints stay ints.

    The default is passed only while the session has no value (a preset may have set one), which
    avoids Streamlit's default-plus-session-state warning.
    """
    initial = {} if key in st.session_state else {"value": default}
    return st.number_input(label, min_value=low, max_value=high, key=key, bind="query-params", help=help, **initial)


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
