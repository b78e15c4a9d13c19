"""Streamlit entry point: page config, the shared sidebar (the scenario), and navigation.

Run with ``streamlit run app.py``. Pages read the scenario from ``st.session_state`` and call core.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

import ui.preload
from core.spec.catalog import load_catalog
from ui.i18n import t
from ui.link_state import judge_link, show_ignored
from ui.sidebar import link_checks, render_sidebar

HERE = Path(__file__).resolve().parent

st.set_page_config(page_title="LLM Inference Tradeoff Explorer", page_icon=":material/speed:", layout="wide")
link_notices = st.container()  # link values the page could not honour, above the page
render_sidebar(load_catalog())

# Page files end in "_page.py" and get explicit URL paths without that suffix. Streamlit still has a
# legacy mode for a folder named pages/: until st.navigation has run once in the process, a request
# whose page hash matches a file there would run that file alone, without this sidebar (seen in
# AppTest reruns and on a fresh server opened at a page URL). Distinct URL paths never match.
PAGES = [
    st.Page(
        HERE / "pages" / "explorer_page.py",
        title=t("nav.explorer"),
        icon=":material/speed:",
        url_path="explorer",
        default=True,
    ),
    st.Page(HERE / "pages" / "plan_page.py", title=t("nav.plan"), icon=":material/task_alt:", url_path="plan"),
    st.Page(
        HERE / "pages" / "loadtest_page.py", title=t("nav.loadtest"), icon=":material/monitoring:", url_path="load-test"
    ),
    st.Page(
        HERE / "pages" / "validation_page.py",
        title=t("nav.validation"),
        icon=":material/fact_check:",
        url_path="validation",
    ),
    st.Page(HERE / "pages" / "learn_page.py", title=t("nav.learn"), icon=":material/school:", url_path="learn"),
    st.Page(
        HERE / "pages" / "workshop_page.py",
        title=t("workshop.nav"),
        icon=":material/assignment:",
        url_path="workshop",
    ),
    st.Page(
        HERE / "pages" / "compare_page.py", title=t("nav.compare"), icon=":material/compare_arrows:", url_path="compare"
    ),
    st.Page(HERE / "pages" / "catalog_page.py", title=t("nav.catalog"), icon=":material/list:", url_path="catalog"),
]
navigation = st.navigation(PAGES)
if ui.preload.first_run_in_process():
    # Until st.navigation has run once in a process, Streamlit treats pages/ as a legacy
    # multipage folder, and the first session's widgets get other ids on its next run: its first
    # change was dropped and the sliders fell back to their minimum. Rerunning once, before the
    # visitor can touch anything, puts that session in the same mode as every later one (its
    # widgets start again from their defaults and the URL; nothing was entered yet).
    for key in [k for k in st.session_state if k != "link_opened"]:  # the link as opened is judged later
        del st.session_state[key]
    st.rerun()
try:
    navigation.run()
finally:  # after the page's own inputs have run, even when the page stopped early
    judge_link(lambda: link_checks(load_catalog()))
    with link_notices:
        show_ignored()
