"""Streamlit entry point: page config, the shared sidebar (the scenario), and navigation.

Run with ``streamlit run app.py``. Pages read the scenario from ``st.session_state`` and call core.

This file has two roles. Streamlit runs it as ``__main__`` for every run of every session (AppTest
too): :func:`main` draws the frame. ``streamlit run app.py`` first reads it for an ``st.App`` and,
finding ``app`` below, imports it as a module and serves that app, whose lifespan runs once when the
server starts (:mod:`ui.server_start`: the process is told it uses ``st.navigation``, so a first
visitor who opens ``/plan`` gets no "Page not found", and every module is imported before a session).
The app's modules are imported inside :func:`main`: at import, Streamlit's runtime does not exist yet.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

HERE = Path(__file__).resolve().parent
PAGE_ICON = HERE / "ui" / "assets" / "icon.svg"
"""The browser tab's icon, drawn here and sent inline: a ``:material/...:`` icon would make every
browser fetch it from Google's font host, which an offline classroom cannot reach."""


def main() -> None:
    """One run of one session: the link's language, the navigation (which resolves the page the URL
    names), the sidebar (which may rerun once to turn a link's catalog ids into names; after the
    navigation, that rerun keeps the page), the notice of the link's values the sidebar did not take
    (before the page, which may stop), then the page and the notice with its own values too."""
    from core.spec.catalog import load_catalog
    from ui.i18n import t
    from ui.link_state import open_language, show_ignored
    from ui.sidebar import link_checks, render_sidebar

    st.set_page_config(page_title="LLM Inference Tradeoff Explorer", page_icon=PAGE_ICON, layout="wide")
    open_language()  # before the navigation, whose titles are in the session's language
    # Page files end in "_page.py" and get explicit URL paths without that suffix: AppTest runs every run
    # in Streamlit's legacy mode for a folder named pages/, where a page named after its file would run alone.
    explorer = HERE / "pages" / "explorer_page.py"
    pages = [
        # the default page: its address is the app's root; its url_path only names it
        st.Page(explorer, title=t("nav.explorer"), icon=":material/speed:", url_path="home", default=True),
        st.Page(HERE / "pages" / "plan_page.py", title=t("nav.plan"), icon=":material/task_alt:", url_path="plan"),
        st.Page(
            HERE / "pages" / "loadtest_page.py",
            title=t("nav.loadtest"),
            icon=":material/monitoring:",
            url_path="load-test",
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
            HERE / "pages" / "compare_page.py",
            title=t("nav.compare"),
            icon=":material/compare_arrows:",
            url_path="compare",
        ),
        st.Page(HERE / "pages" / "catalog_page.py", title=t("nav.catalog"), icon=":material/list:", url_path="catalog"),
        # the workshop handout's links name the Explorer /explorer?..., a path the root page does not
        # answer to: this hidden page opens the Explorer there instead of "Page not found"
        st.Page(explorer, title=t("nav.explorer"), url_path="explorer", visibility="hidden"),
    ]
    navigation = st.navigation(pages)
    link_notices = st.container()  # link values the page could not honour, above the page
    render_sidebar(load_catalog())
    notice_after_page = show_ignored(link_notices, lambda: link_checks(load_catalog()))  # the sidebar's, now
    try:
        navigation.run()
    finally:  # the page's own inputs judged too, unless the page stopped (st.stop: nothing draws after it)
        notice_after_page()


if __name__ == "__main__":  # a session's run
    main()
else:  # imported by `streamlit run app.py` to start the server
    from starlette.middleware import Middleware

    from ui.query_limit import QueryLimit
    from ui.server_start import lifespan

    # a link whose query Streamlit would drop whole reopens its page with a notice (ui/query_limit.py)
    app = st.App(__file__, lifespan=lifespan, middleware=[Middleware(QueryLimit)])
