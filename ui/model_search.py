"""The sidebar's "find a model" box: any name a user types (a Hugging Face id of an instruct tune,
a dated release, a quantized upload, or loose words) resolved by :mod:`core.spec.names` to a
catalog architecture, which then becomes the model the list below shows."""

from __future__ import annotations

import streamlit as st

from core.spec.hf_config import ConfigError
from core.spec.hub import HubError, fetch_model, looks_like_repo_id
from core.spec.model import ModelSpec
from core.spec.names import ModelMatch, find_models, match_model
from ui.i18n import t
from ui.safe import escape_markdown

SEARCH_KEY = "model_search"
MAX_CHARS = 200


def _select_match(models: dict[str, ModelSpec]) -> None:
    """On a new search: show the architecture it names in the model list."""
    match = match_model(st.session_state.get(SEARCH_KEY, ""), models.values())
    if match is not None:
        st.session_state["model"] = match.model.id


FETCH_ERROR_KEY = "model_search_fetch_error"


def _fetch(repo_id: str) -> None:
    """Fetch the repo's config.json from the Hub; on success the model joins the list and is chosen."""
    st.session_state.pop(FETCH_ERROR_KEY, None)
    try:
        model = fetch_model(repo_id)
    except (HubError, ConfigError) as err:
        st.session_state[FETCH_ERROR_KEY] = (
            repo_id,
            t("sidebar.model_search_fetch_failed", error=escape_markdown(str(err))),
        )
        return
    st.session_state.setdefault("custom_models", {})[model.id] = model
    st.session_state["model"] = model.id


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
    caption saying what matched; else the catalog's."""
    typed = st.session_state.get(SEARCH_KEY, "").strip()
    model = models[model_id]
    if not typed:
        return model
    match: ModelMatch | None = match_model(typed, models.values())
    if match is None:
        found, _ = find_models(typed, models.values())
        if found:
            names = ", ".join(m.name for m in found[:5])
            st.caption(t("sidebar.model_search_ambiguous", typed=escape_markdown(typed), models=escape_markdown(names)))
        else:
            st.warning(t("sidebar.model_search_none", typed=escape_markdown(typed)))
            if looks_like_repo_id(typed):
                st.button(t("sidebar.model_search_fetch"), key="model_search_fetch", on_click=_fetch, args=(typed,))
        failed = st.session_state.get(FETCH_ERROR_KEY)
        if failed and failed[0] == typed:  # shown while the name it was made from is still there
            st.error(failed[1])
        return model
    if match.model.id != model_id:
        return model
    deployed = match.deployed_model()
    st.caption(t("sidebar.model_search_match", summary=escape_markdown(match.describe(deployed.native_dtype))))
    return deployed
