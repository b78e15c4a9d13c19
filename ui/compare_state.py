"""The Compare page's saved scenarios, the link that keeps them, and the comparison's exports.

The saved list lives in ``st.session_state["saved"]``: one entry per scenario with its ``label``,
the sidebar's ``scenario``, its ``link`` dict (:func:`core.spec.scenario_codec.encode`) and, when a
model or GPU added in the session keeps it out of the link, ``link_error``. The URL parameter
``cmp`` holds one token for the entries that have a link dict; it is rewritten whenever it differs
from the list, and a page load whose session has no list yet rebuilds the list from it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import streamlit as st

from core.estimate.compare_report import Compared, exports
from core.spec.catalog import Catalog
from core.spec.deployment import Deployment, Workload
from core.spec.scenario_codec import decode, encode, from_token, to_token
from ui.download import download_button
from ui.i18n import lang, t
from ui.levers import active_summary
from ui.money import current_rate
from ui.safe import escape_markdown
from ui.share import view_link
from ui.sidebar import Scenario

SAVED = "saved"
PARAM = "cmp"
RESTORE_WARNING = "compare_restore_warning"
MAX_SAVED = 8
MAX_COMPARED = 4


def scenario_label(dep: Deployment, work: Workload) -> str:
    """The one-line name of a scenario in the saved list (in the session's language)."""
    return t(
        "compare.label",
        model=dep.model.name,
        gpu=dep.gpu.name,
        gpus=dep.parallel.num_gpus,
        weights=dep.weights.name,
        kv=dep.kv.name,
        input=work.input_len,
        output=work.output_len,
        batch=work.batch,
        levers=f" · {summary}" if (summary := active_summary(dep.levers)) else "",
    )


def saved_entry(scenario: Scenario, catalog: Catalog, label: str | None = None) -> dict[str, Any]:
    """A saved-list entry for ``scenario``; its link dict is None (and ``link_error`` says why) when
    its model, draft or GPU is not the catalog's."""
    try:
        link, error = encode(scenario.deployment, scenario.workload, catalog), None
    except ValueError as err:
        link, error = None, str(err)
    label = label or scenario_label(scenario.deployment, scenario.workload)
    return {"label": label, "scenario": scenario, "link": link, "link_error": error}


def rebuild(token: str, catalog: Catalog) -> tuple[list[dict[str, Any]], str | None]:
    """The saved list a ``cmp`` token holds, and the warning for what could not be restored (a
    token that does not decode, scenarios core refuses, entries beyond :data:`MAX_SAVED`); the rest
    load. Scenarios whose labels repeat are kept once, as saving keeps them."""
    try:
        entries = from_token(token)
    except ValueError as err:
        return [], t("compare.restore_unreadable", reason=escape_markdown(str(err)))
    items: list[dict[str, Any]] = []
    problems = []
    for number, data in enumerate(entries, 1):
        try:
            dep, work = decode(data, catalog)
        except ValueError as err:
            problems.append(f"#{number}: {err}")
            continue
        if len(items) >= MAX_SAVED:
            problems.append(f"#{number}: {t('compare.restore_too_many', count=MAX_SAVED)}")
            continue
        item = saved_entry(Scenario(deployment=dep, workload=work), catalog)
        if all(item["label"] != other["label"] for other in items):
            items.append(item)
    if not problems:
        return items, None
    reasons = escape_markdown("; ".join(problems))
    return items, t("compare.restore_failed", count=len(problems), total=len(entries), reasons=reasons)


def saved_list(catalog: Catalog) -> list[dict[str, Any]]:
    """The session's saved list; on the first load without one, rebuilt from the URL's ``cmp``."""
    if SAVED not in st.session_state:
        token = st.query_params.get(PARAM)
        items, warning = rebuild(token, catalog) if token else ([], None)
        st.session_state[SAVED] = items
        if warning:
            st.session_state[RESTORE_WARNING] = warning
    return st.session_state[SAVED]


def list_changed() -> None:
    """After a save or a clear: the restore warning no longer describes the list."""
    st.session_state.pop(RESTORE_WARNING, None)


def keep_in_url(saved: Sequence[dict[str, Any]]) -> None:
    """Write the entries that have a link dict to ``cmp`` (removed when none has), where it differs."""
    kept = [item["link"] for item in saved if item.get("link") is not None]
    if not kept:
        st.query_params.pop(PARAM, None)
        return
    token = to_token(kept)
    if st.query_params.get(PARAM) != token:
        st.query_params[PARAM] = token


def link_notes(saved: Sequence[dict[str, Any]]) -> None:
    """The restore warning (until the list changes) and which saved scenarios the link leaves out."""
    if warning := st.session_state.get(RESTORE_WARNING):
        st.warning(warning)
    left_out = [item["label"] for item in saved if item.get("link") is None]
    if left_out:
        st.info(t("compare.not_in_link", scenarios=escape_markdown("; ".join(left_out))))
    elif saved:
        st.caption(t("compare.link_hint"))


def export_buttons(columns: Sequence[Compared], table: Sequence[tuple[str, Sequence[str]]]) -> None:
    """Download buttons for the table as shown: Markdown, CSV and JSON (core.estimate.compare_report)."""
    # built when a button is clicked (ui.download: outside the script thread, kept after reruns)
    link, language, rate = view_link(), lang(), current_rate()
    documents = functools.cache(lambda: exports(link, columns, table, language, rate))
    st.markdown(f"**{t('compare.export')}**", help=t("compare.export_help"))
    buttons = (
        ("md", t("compare.download_md"), "text/markdown"),
        ("html", t("prices.compare_download_html"), "text/html"),
        ("csv", t("compare.download_csv"), "text/csv"),
        ("json", t("compare.download_json"), "application/json"),
    )
    for col, (kind, label, mime) in zip(st.columns(len(buttons)), buttons, strict=True):
        download_button(
            col,
            label,
            functools.partial(lambda kind: documents()[kind], kind),
            file_name=f"llm-compare.{kind}",
            mime=mime,
            key=f"compare_download_{kind}",
        )
