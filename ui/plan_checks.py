"""Plan's Checks table: each check's status in its colour, need / limit as a bar with the 100 % mark,
and its headroom line, drawn by the HTML report's own rule
(:func:`core.planning.report_formats.checks_html`), so the page and the report it downloads show the
same bars, colours and rounded percentages."""

from __future__ import annotations

import streamlit as st

from core.planning.check import Plan
from core.planning.report_formats import checks_html
from ui.i18n import lang, t


def checks_table(plan: Plan) -> None:
    """The section: heading, the table and the legend of its bars."""
    st.subheader(t("plan.checks"))
    st.html(checks_html(plan.checks, lang()))
    st.caption(t("plan.checks_legend"))
