"""Inputs whose default follows the scenario unless the user set them: the GPU's price, its memory
class's efficiencies, the engine's memory fraction, the P95 lengths that follow the typical ones.

One rule, on every page and every path: such an input shows the scenario's current default until the
user sets it (by moving it, by a link that carries it, by a preset, a calibration or a loaded search
point); from then on it shows what the user set, marked as set, with the default beside it and a
button back to the default. Nothing else resets or keeps it.

Why not reset on a change callback: Streamlit keeps a keyed widget's value when its default changes,
and a value popped from the session leaves the browser showing the old one, which the next page
switch sends back (the UX audit's D2: the A10's efficiencies came back on an H100 after Explorer ->
Plan -> Explorer). So the value is set before each widget is drawn, which also tells the browser.

Use: :func:`bound_input` draws such an input (:func:`follow` before it, :func:`mark` as its change
callback, :func:`settled` after it); :func:`assign` sets one for the user, :func:`show_set` says which
are set.
"""

from __future__ import annotations

import math
from typing import Any

import streamlit as st

SET = "_inputs_set"
"""Session key: {input key: the value the user set}. Survives page switches (not a widget)."""
DEFAULTS = "_inputs_default"
"""Session key: {input key: the default it had on its last run}, for :func:`mark` and the notes."""


def bound_input(draw, key: str, default: Any, **widget: Any) -> Any:
    """Draw ``draw`` (``st.slider``, ``st.number_input``) bound to the URL under ``key``, its default
    following the scenario until the user sets it; ``widget`` holds its label, range and help. The
    default is also the widget's own: Streamlit leaves a bound value equal to it out of the URL, so
    a link carries exactly the values the user set."""
    follow(key, default)
    value = draw(value=default, key=key, bind="query-params", on_change=mark, args=(key,), **widget)
    settled(key, value)
    return value


def same(a: Any, b: Any) -> bool:
    """Equal, floats to 9 significant digits (a slider's float against a computed default)."""
    if isinstance(a, float) or isinstance(b, float):
        try:
            return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
        except (TypeError, ValueError):
            return False
    return a == b


def _set_values() -> dict[str, Any]:
    return st.session_state.setdefault(SET, {})


def follow(key: str, default: Any) -> Any:
    """Before the widget ``key``: give it the value it must show (the user's, else ``default``)."""
    st.session_state.setdefault(DEFAULTS, {})[key] = default
    chosen = _set_values()
    expected = chosen.get(key, default)
    if key not in st.session_state or not same(st.session_state[key], expected):
        st.session_state[key] = expected
    return expected


def settled(key: str, value: Any) -> None:
    """After the widget: a value other than the one :func:`follow` gave came from the URL (a link
    opened, the browser's back button): the user's, and kept as set."""
    expected = _set_values().get(key, st.session_state.get(DEFAULTS, {}).get(key))
    if not same(value, expected):
        _set_values()[key] = value  # the widget holds it already


def mark(key: str) -> None:
    """The widget's change callback: the value is the user's, unless it is the default again."""
    value = st.session_state.get(key)
    default = st.session_state.get(DEFAULTS, {}).get(key)
    if default is not None and same(value, default):
        _set_values().pop(key, None)
    else:
        _set_values()[key] = value


def assign(key: str, value: Any) -> None:
    """Set ``key`` for the user (a preset, a calibration, a loaded point, a fix): kept as set if its
    default follows the scenario (any other input simply holds it)."""
    _set_values()[key] = value
    st.session_state[key] = value


def reset(key: str) -> None:
    """Back to the scenario's default (a callback)."""
    _set_values().pop(key, None)
    default = st.session_state.get(DEFAULTS, {}).get(key)
    if default is not None:
        st.session_state[key] = default


def is_set(key: str) -> bool:
    return key in _set_values()


def overrides(keys) -> list[tuple[str, Any, Any]]:
    """(key, value set, the default it replaces) for each of ``keys`` the user set, in order."""
    chosen, defaults = _set_values(), st.session_state.get(DEFAULTS, {})
    return [(k, chosen[k], defaults.get(k)) for k in keys if k in chosen and not same(chosen[k], defaults.get(k))]


def show_set(keys, name_of, shown, where=None) -> None:
    """Each of ``keys`` the user set, as "name: value (set by you; default d)" with a button back to
    the default, so a value that no longer follows the scenario is never silent."""
    from ui.i18n import t  # here: ui.i18n reads the session's language

    where = where or st
    for key, value, default in overrides(keys):
        left, right = where.columns([4, 1], vertical_alignment="center")
        left.caption(t("defaults.set_line", name=name_of(key), value=shown(key, value), default=shown(key, default)))
        right.button(
            t("defaults.reset"), key=f"_reset_{key}", on_click=reset, args=(key,), help=t("defaults.reset_help")
        )
