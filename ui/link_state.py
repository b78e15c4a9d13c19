"""What a shared link asked for, and what the page could honour of it.

Streamlit drops a URL value a bound widget cannot take (``batch=-5``, ``util=1.5``) and opens the
widget at its default without a word. Here the query a session opened with is kept
(:func:`open_link`, before any widget runs), each value is judged once its widget has run
(:func:`judge_link`, after the page), and every value that was not honoured is named in a notice
with what the input takes ("batch=-5 ignored: must be 1 to 1024").

Two things a link carries besides widget values: catalog ids where the sidebar lists names (the
CLI's ``model=qwen3-8b`` reads as ``Qwen3-8B``), and a model imported from a config.json in
another session, which rides in the ``mcfg`` parameter as its compressed config
(:func:`link_imported_model`) and is imported again when the link opens; its name is cleaned as
every name from outside is (:func:`ui.custom.imported_model`).

What no input can judge is named on the session's first run (:func:`open_language`): a key given
twice with different values (both refused: which one the link meant is unknown), and a query that
Streamlit would have dropped whole (:mod:`ui.query_limit` sends the browser back without it).
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from core.spec import json_fields
from core.spec.hf_config import MAX_CONFIG_BYTES, MAX_CONFIG_DEPTH, ConfigError, unread_dtype
from ui.custom import add_imported_model, imported_config, imported_model
from ui.i18n import LANGUAGE_NAMES, t
from ui.query_limit import DROPPED_PARAM, MAX_QUERY_CHARS, MAX_QUERY_FIELDS, dropped_size
from ui.safe import escape_markdown

OPENED = "link_opened"
"""Session key: the query parameters not judged yet (key -> value as the link had it)."""
IGNORED = "link_ignored"
"""Session key: the notices of values that were not honoured, until dismissed."""
MODEL_PARAM = "mcfg"
MAX_MODEL_CHARS = 6000
"""Longest ``mcfg`` token a link carries [characters]: a compressed config.json takes 0.6-2 KB;
beyond this the page says the model is not in the link."""
NAMED = ("model", "gpu")
"""Select boxes that show names: a link may give the catalog id instead (what the CLI takes)."""
DOMAINS = "link_domains"
"""Session key: what each page input that records it takes, in words (:func:`record_domain`)."""
REFUSED = "link_refused"
"""Session key: the first run took values out of the URL, so the next run must read it again."""
SHOWN_VALUES = 3
"""Values of a repeated key quoted in its notice."""


def open_language() -> None:
    """Before the navigation is built (app.py): a session opened by a link that names a language
    (``lang=zh``) is in it from its first run, so the navigation's page titles are too. The sidebar's
    language switch, built later, starts from this value; a value that names no language is left to
    it (and judged as opened).

    Before that, on the session's first run, the values no input can judge leave the URL with a
    notice: a key given twice with different values, and the marker :mod:`ui.query_limit` leaves for
    a query Streamlit would have dropped whole. (Before anything else reads the URL: the model search
    rewrites a typed ``model`` to one value.)"""
    if OPENED not in st.session_state and REFUSED not in st.session_state:
        st.session_state[REFUSED] = _refuse_repeated() | _refuse_dropped()
    if "lang" not in st.session_state and (code := st.query_params.get("lang")) in LANGUAGE_NAMES:
        st.session_state["lang"] = code


def open_link(models: dict, gpus: dict) -> None:
    """Before the sidebar's widgets run: keep the query the session opened with (once), turn catalog
    ids into the names the model and GPU lists show, and import a model the link carries.

    Its rerun (the bound widgets read the URL as the run started) must come after ``st.navigation``
    has resolved the page (app.py builds the navigation before the sidebar): a rerun asked for before
    that carries the entry script's page instead of the one the link's path names, and Streamlit
    then opens the default page, the Explorer."""
    if OPENED not in st.session_state:
        st.session_state[OPENED] = st.query_params.to_dict()
    renamed = False
    for key, entries in zip(NAMED, (models, gpus), strict=True):
        raw = st.query_params.get(key)
        if raw in entries and raw != entries[raw].name:
            st.query_params[key] = entries[raw].name
            st.session_state[OPENED][key] = entries[raw].name
            renamed = True
    # Streamlit's integer inputs raise OverflowError on an infinite value (batch=1e999) instead of
    # ignoring it: it leaves the URL before any input reads it, and is judged as opened
    infinite = [key for key, raw in st.query_params.items() if key not in NAMED and _infinite(raw)]
    for key in infinite:
        del st.query_params[key]
    refused = st.session_state.pop(REFUSED, False)
    if renamed or infinite or refused:  # the bindings read the URL as the run started: run again on the new one
        st.rerun()
    token = st.query_params.get(MODEL_PARAM)
    if token and st.session_state.get("link_model_restored") != token:
        st.session_state["link_model_restored"] = token
        try:
            payload = json_fields.unpack(token, MAX_MODEL_CHARS, MAX_CONFIG_BYTES, MAX_CONFIG_DEPTH + 1)
            if not isinstance(payload, dict) or not isinstance(payload.get("c"), dict):
                raise ValueError(f"{MODEL_PARAM}: not an object holding a config.json")
            # imported_model cleans the name as every name from outside (F6: a link's was drawn as a link)
            name = payload["n"] if isinstance(payload.get("n"), str) else ""
            model = imported_model(payload["c"], name)
        except (ValueError, ConfigError) as err:
            _ignore(MODEL_PARAM, token[:24] + "…", escape_markdown(str(err)))
            return
        add_imported_model(model, payload["c"], name)
        if (dtype := unread_dtype(payload["c"])) is not None:  # a weight size taken as assumed is said
            _note(t("hostile_config.dtype_assumed", value=f"`{_shown(dtype)}`") + ".")
        if st.query_params.get("model") in (None, model.name):
            st.session_state["model"] = model.id


def link_imported_model(model_id: str) -> None:
    """Put the chosen model's config in the link when it was imported from a config.json and fits
    one (:data:`MAX_MODEL_CHARS`); say so when it does not."""
    config = imported_config(model_id)
    if config is None:
        st.query_params.pop(MODEL_PARAM, None)
        return
    try:
        token = json_fields.pack({"n": config[1], "c": config[0]}, MAX_MODEL_CHARS, MODEL_PARAM)
    except ValueError:
        st.query_params.pop(MODEL_PARAM, None)
        st.caption(t("link.model_too_large"))
        return
    st.session_state["link_model_restored"] = token  # this session made it: nothing to import
    st.query_params[MODEL_PARAM] = token


def judge_link(checks: Callable[[], tuple[dict[str, Callable[[Any], str]], dict[str, str]]]) -> None:
    """After the page: judge every opened value whose widget has run. ``checks`` gives (labels,
    domains), asked for only when there is something to judge: a value is honoured when the widget
    holds it (as text, as a number, or as the name ``labels[key]`` shows for it); else it joins
    the notices with ``domains[key]``, what the input takes."""
    opened: dict[str, str] = st.session_state.get(OPENED, {})
    ready = [k for k in opened if k in st.session_state]
    if not ready:
        return
    labels, domains = checks()
    domains = domains | st.session_state.get(DOMAINS, {})
    for key in ready:
        raw = opened.pop(key)
        value = st.session_state[key]
        label = labels.get(key)
        if not _holds(raw, value, label(value) if label and value is not None else None):
            _ignore(key, raw, domains.get(key) or t("link.not_taken"))


def record_domain(key: str, domain: str) -> None:
    """What the page input ``key`` takes, in words, for the notice of a link value it did not take."""
    st.session_state.setdefault(DOMAINS, {})[key] = domain


def judge_choice(param: str, options: Sequence[str]) -> None:
    """A choice kept in the URL by hand (:func:`ui.url_inputs.choice`) read the link's ``param``: a
    value that is none of ``options`` is named with them (it opened at the first)."""
    opened: dict[str, str] = st.session_state.get(OPENED, {})
    if param in opened and (raw := opened.pop(param)) not in options:
        _ignore(param, raw, ", ".join(options))


def show_ignored(where: Any, checks: Callable[[], tuple[dict, dict]]) -> Callable[[], None]:
    """The notice of link values that were not honoured, with a button that dismisses it, drawn in
    ``where`` (above the page) twice: now, with the values judged so far (the sidebar's), because a
    page that stops (``st.stop()``: Compare with nothing saved) draws nothing after it; and by the
    function returned, to call after the page, with its own inputs judged too (:func:`judge_link`)."""
    with where:
        text, button = st.empty(), st.empty()

    def draw(with_button: bool) -> bool:
        notes = st.session_state.get(IGNORED)
        if notes:
            text.warning(t("link.ignored_title") + "\n\n" + "\n".join(f"- {note}" for note in notes))
            if not with_button:  # one button a run: a second with its key would be an error
                button.button(
                    t("link.dismiss"), key="link_dismiss", on_click=st.session_state.pop, args=(IGNORED, None)
                )
        return with_button or bool(notes)

    judge_link(checks)
    has_button = draw(False)

    def after_page() -> None:
        judge_link(checks)
        draw(has_button)

    return after_page


def _ignore(key: str, raw: str, domain: str) -> None:
    _note(t("link.ignored", param=_shown(key), value=_shown(raw), domain=domain))


def _note(text: str) -> None:
    st.session_state.setdefault(IGNORED, []).append(text)


def _shown(raw: str) -> str:
    """A key or value from the link as a notice quotes it, inside a code span (where Markdown draws
    nothing, links included): at most 40 characters, a backtick (which would end the span, and a
    backslash does not escape it there) as ', line breaks and control characters (a right-to-left
    override would reorder the notice) as spaces."""
    text = raw if len(raw) <= 40 else raw[:40] + "…"
    return "".join("'" if c == "`" else " " if c.isspace() or unicodedata.category(c)[0] == "C" else c for c in text)


def _refuse_repeated() -> bool:
    """Keys the link gives more than once with different values leave the URL, named with their
    values (Streamlit would take the last without a word); whether any did."""
    repeated = {key: values for key in st.query_params if len(set(values := st.query_params.get_all(key))) > 1}
    for key, values in repeated.items():
        shown = ", ".join(f"`{_shown(v)}`" for v in values[:SHOWN_VALUES]) + ("…" if len(values) > SHOWN_VALUES else "")
        _note(t("link_query.repeated", param=_shown(key), count=len(values), values=shown))
        del st.query_params[key]
    return bool(repeated)


def _refuse_dropped() -> bool:
    """The marker of a query Streamlit would have dropped (:mod:`ui.query_limit`) leaves the URL,
    said as what was lost; whether there was one."""
    raw = st.query_params.get(DROPPED_PARAM)
    if raw is None:
        return False
    del st.query_params[DROPPED_PARAM]
    dropped = dropped_size(raw)
    if dropped is None:
        _ignore(DROPPED_PARAM, raw, t("link_query.dropped_domain"))
    else:
        limits = {"max_chars": MAX_QUERY_CHARS, "max_fields": MAX_QUERY_FIELDS}
        _note(t("link_query.dropped", chars=dropped[0], fields=dropped[1], **limits))
    return True


def _infinite(raw: str) -> bool:
    try:
        return math.isinf(float(raw))
    except ValueError:
        return False


def _holds(raw: str, value: Any, label: str | None) -> bool:
    """Whether a widget holding ``value`` took the link's ``raw`` text."""
    if value is None:
        return False
    if raw in (str(value), label):
        return True
    try:
        return float(raw) == float(value)
    except (TypeError, ValueError):
        return False
