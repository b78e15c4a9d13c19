"""Page inputs that live in the URL, so a copied link reopens the same view."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from ui.i18n import t
from ui.link_state import judge_choice, record_domain


def number(key: str, label: str, default, low, high, help: str | None = None):
    """A number input bound to the URL under ``key``; ints stay ints.

    The default is passed on every run: Streamlit leaves a bound value equal to the widget's default
    out of the URL, and without one it takes the minimum for the default, so a value set to the
    minimum would vanish from a link and reopen at ``default``. A value a preset put in the session
    still wins over it. A link value it cannot take is named with its range (ui.link_state).
    """
    record_domain(key, t("link_query.range", low=_number(low), high=_number(high)))
    return st.number_input(label, min_value=low, max_value=high, value=default, key=key, bind="query-params", help=help)


def choice(key: str, param: str, label: str, options: Sequence[str], format_func: Callable[[str], str]) -> str:
    """A segmented choice kept in the URL as ``param`` by hand: a bound widget would write its
    translated label there, and a link would break when the language changes. The first option is
    the default and is left out of the URL; a link's value that is none of the options opens at it,
    named in the link's notice with the options (ui.link_state)."""
    if key not in st.session_state:
        from_url = st.query_params.get(param, options[0])
        st.session_state[key] = from_url if from_url in options else options[0]
        judge_choice(param, options)
    value = st.segmented_control(label, options, key=key, required=True, format_func=format_func)
    if value == options[0]:
        st.query_params.pop(param, None)
    else:
        st.query_params[param] = value
    return value


def stepped_int(
    key: str, label: str, steps: Sequence[int], default: int, low: int, high: int, help: str | None = None
) -> int:
    """An integer from ``low`` to ``high``: a slider over ``steps`` (roughly log-spaced, so small
    values are as easy to hit as large ones) above a number input that takes any integer typed.

    The number input holds the value and is bound to the URL under ``key`` (links keep their
    parameter names); the slider, keyed ``<key>_steps`` and kept out of the URL, follows it, with
    the current value among its steps, and moving it sets the number. The number input runs first,
    so the slider shows the value a link just opened with, and is drawn under the slider (which
    fills a container made before it)."""
    top = st.container()
    value = st.number_input(
        label,
        min_value=low,
        max_value=high,
        value=default,
        step=1,
        key=key,
        bind="query-params",
        label_visibility="collapsed",
    )
    slider = f"{key}_steps"
    st.session_state[slider] = value
    top.select_slider(label, sorted({*steps, value}), key=slider, on_change=_follow, args=(slider, key), help=help)
    return value


def _number(value: float) -> str:
    """A bound of a range as the notice writes it: 1,000,000 and 0.001, no trailing .0."""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,}"


def _follow(source: str, target: str) -> None:
    """A slider's callback: the number input it drives takes the slider's value."""
    st.session_state[target] = st.session_state[source]
