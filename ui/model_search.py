"""The sidebar's "find a model" box: any name a user types (a Hugging Face id of an instruct tune,
a dated release, a quantized upload, an Ollama name, or loose words) resolved by
:mod:`core.spec.names` to a catalog architecture, which then becomes the model the list below shows.

A name that resolves to no single model stops the pages (:func:`stop_unmatched_search`) instead of
leaving them on the model the list showed before, and offers the closest models as buttons. Names
people type in a link (``?gpu=h100``, ``?model=llama3.1:8b``) become the catalog ids they name
before the link is read (:func:`typed_link_names`)."""

from __future__ import annotations

import streamlit as st

from core.messages import alternatives
from core.spec.gpu import GpuSpec
from core.spec.gpu_names import find_gpus
from core.spec.hf_config import ConfigError, unread_dtype
from core.spec.hub import HubError, fetch_with_config, looks_like_repo_id
from core.spec.model import ModelSpec
from core.spec.names import ModelMatch, match_model, unknown_model
from ui.i18n import lang, t
from ui.safe import escape_markdown

SEARCH_KEY = "model_search"
MAX_CHARS = 200
UNMATCHED = "model_search_unmatched"
"""Session key: why the search names no single model (this run), for the pages to stop on."""


def _select_match(models: dict[str, ModelSpec]) -> None:
    """On a new search: show the architecture it names in the model list."""
    match = match_model(st.session_state.get(SEARCH_KEY, ""), models.values())
    if match is not None:
        st.session_state["model"] = match.model.id


FETCH_ERROR_KEY = "model_search_fetch_error"
FETCH_NOTICE_KEY = "model_search_fetch_notice"
"""Session key: (repo id, what its config.json held that was not understood), shown while the search names it."""


def _fetch(repo_id: str) -> None:
    """Fetch the repo's config.json from the Hub; on success the model joins the list and is chosen.
    Every way a fetch fails is a HubError or a ConfigError (:mod:`core.spec.hub`): said, with the
    offline path, under the search box."""
    st.session_state.pop(FETCH_ERROR_KEY, None)
    st.session_state.pop(FETCH_NOTICE_KEY, None)
    try:
        model, config = fetch_with_config(repo_id)
    except (HubError, ConfigError) as err:
        st.session_state[FETCH_ERROR_KEY] = (
            repo_id,
            t("sidebar.model_search_fetch_failed", error=escape_markdown(str(err))),
        )
        return
    if (dtype := unread_dtype(config)) is not None:
        st.session_state[FETCH_NOTICE_KEY] = (repo_id, t("hostile_config.dtype_assumed", value=escape_markdown(dtype)))
    st.session_state.setdefault("custom_models", {})[model.id] = model
    st.session_state["model"] = model.id


def _choose(model_id: str) -> None:
    """A suggestion clicked: that model in the list, and the search that named none cleared."""
    st.session_state[SEARCH_KEY] = ""
    st.session_state["model"] = model_id


def clear_search(models: dict[str, ModelSpec]) -> None:
    """On a new choice in the model list: the search is cleared unless it names that model (the
    search itself sets the list, which Streamlit reports as a change of it too)."""
    match = match_model(st.session_state.get(SEARCH_KEY, ""), models.values())
    if match is None or match.model.id != st.session_state.get("model"):
        st.session_state[SEARCH_KEY] = ""


def model_search_box(models: dict[str, ModelSpec]) -> None:
    """The search box (URL-bound, so a shared link keeps the name that was typed)."""
    st.text_input(
        t("sidebar.model_search"),
        key=SEARCH_KEY,
        max_chars=MAX_CHARS,
        placeholder="meta-llama/Llama-3.1-8B-Instruct",
        on_change=_select_match,
        args=(models,),
        bind="query-params",
        help=t("sidebar.model_search_help"),
    )


def searched_model(models: dict[str, ModelSpec], model_id: str) -> ModelSpec:
    """The model to deploy for the list's choice ``model_id``: as the searched checkpoint (served
    under the typed repo's name, in the format its name states) when the search names it, with a
    caption saying what matched; else the catalog's. A search that names no single model says so,
    offers the closest models and leaves the reason for :func:`stop_unmatched_search`."""
    st.session_state.pop(UNMATCHED, None)
    typed = st.session_state.get(SEARCH_KEY, "").strip()
    model = models[model_id]
    if not typed:
        return model
    match: ModelMatch | None = match_model(typed, models.values())
    if match is None:
        _unmatched(typed, models)
        return model
    if match.model.id != model_id:
        return model
    deployed = match.deployed_model()
    st.caption(t("sidebar.model_search_match", summary=escape_markdown(match.describe(deployed.native_dtype, lang()))))
    notice = st.session_state.get(FETCH_NOTICE_KEY)
    if notice and notice[0] == typed:  # shown while the search still names the fetched repo
        st.warning(notice[1])
    return deployed


def _unmatched(typed: str, models: dict[str, ModelSpec]) -> None:
    """Say why ``typed`` names no single model, offer the models it may mean as buttons, and keep
    the reason for the pages."""
    problem = unknown_model(typed, list(models.values()))
    offered = [models[i] for i in problem.ids]
    names = alternatives([m.name for m in offered], lang())
    shown = escape_markdown(typed)
    if problem.ambiguous:
        st.caption(t("sidebar.model_search_ambiguous", typed=shown, models=escape_markdown(names)))
    else:
        st.warning(t("sidebar.model_search_none", typed=shown))
    for m in offered:
        st.button(m.name, key=f"model_search_pick_{m.id}", on_click=_choose, args=(m.id,))
    if not problem.ambiguous and looks_like_repo_id(typed):  # from the text alone: no server file is looked at
        st.button(t("sidebar.model_search_fetch"), key="model_search_fetch", on_click=_fetch, args=(typed,))
    failed = st.session_state.get(FETCH_ERROR_KEY)
    if failed and failed[0] == typed:  # shown while the name it was made from is still there
        st.error(failed[1])
    suggestion = t("names.search_suggest", models=names) if offered else ""
    st.session_state[UNMATCHED] = t("names.search_stopped", typed=typed, suggestion=suggestion)


def stop_unmatched_search() -> None:
    """After the scenario is stored: a search that names no single model replaces it by the reason,
    so every page stops with that (:func:`ui.sidebar.require_scenario`) rather than computing for
    the model the list showed before the search."""
    if reason := st.session_state.get(UNMATCHED):
        st.session_state.pop("scenario", None)
        st.session_state["scenario_error"] = reason


def typed_link_names(models: dict[str, ModelSpec], gpus: dict[str, GpuSpec]) -> None:
    """Before a link is read (:func:`ui.link_state.open_link`): a ``gpu`` or ``model`` value written
    as people type names (``gpu=h100``, ``gpu=rtx4090``, ``model=llama3.1:8b``) becomes the catalog
    id it names, by the CLI's rules; a model name that states a checkpoint (``Qwen/Qwen3-8B-FP8``)
    also goes to the search box, which applies its format. Values that name nothing, or several
    things, are left for the link's notice."""
    raw = st.query_params.get("gpu")
    if raw and raw not in gpus and raw not in {g.name for g in gpus.values()}:
        found, how = find_gpus(raw, gpus.values())
        if how in ("id", "name"):
            st.query_params["gpu"] = found[0].id
    raw = st.query_params.get("model")
    if raw and raw not in models and raw not in {m.name for m in models.values()}:
        match = match_model(raw, models.values())
        if match is not None:
            st.query_params["model"] = match.model.id
            if match.deployed_model() != match.model and not st.query_params.get(SEARCH_KEY):
                st.query_params[SEARCH_KEY] = raw
