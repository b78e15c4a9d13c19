"""The best-deployment search's filters and the front kept after a point is loaded (Plan page,
:mod:`ui.best_deployment`).

Filters: the GPUs to search (none chosen: every catalog GPU), the most GPUs, the most USD per hour
(0: no limit; a GPU without a price is then left out, its cost unknown) and no quantization (the
checkpoint's own format); each is a field of :class:`core.planning.shapes.SearchSpace`.

Loading a front point changes the sidebar's setup, from which a search would start again and draw
other fronts. So the search the point was picked from is pinned (``PIN``: its requirement, filters,
result and the point) and drawn again while the load, the SLOs and the filters stay as they were and
the sidebar shows the setup the point loaded (``dep``, taken on the first run after the click).
"""

from __future__ import annotations

import streamlit as st

from core.planning.requirement import Requirement
from core.planning.shapes import SearchSpace
from core.spec.deployment import Deployment
from ui.i18n import t

FRONT = "search_front"
"""Session key: the search drawn in this run ({"req", "space", "data"}), for a click to pin."""
PIN = "search_pinned"
"""Session key: the pinned search, with "point" (loaded) and "dep" (the setup it loaded)."""
DEFAULT = SearchSpace()


def filters(gpus: dict[str, str]) -> SearchSpace:
    """The filter inputs and the search space they define (module docstring)."""
    left, middle, right = st.columns([2, 1, 1])
    chosen = left.multiselect(
        t("search.gpus"), list(gpus), format_func=gpus.get, key="search_gpus", placeholder=t("search.gpus_all")
    )
    most = middle.number_input(t("search.max_gpus"), 1, 4096, DEFAULT.max_gpus, step=1, key="search_max_gpus")
    budget = right.number_input(
        t("search.max_cost"), 0.0, 1_000_000.0, 0.0, step=10.0, key="search_max_cost", help=t("search.max_cost_help")
    )
    native = st.checkbox(t("search.native_only"), key="search_native_only", help=t("search.native_only_help"))
    return SearchSpace(
        gpus=tuple(chosen), max_gpus=int(most), max_cost_per_hour=budget if budget > 0 else None, native_only=native
    )


def pinned(dep: Deployment, req: Requirement, space: SearchSpace) -> dict | None:
    """The pinned search while it still answers this page (module docstring); dropped otherwise."""
    pin = st.session_state.get(PIN)
    if pin is None:
        return None
    if pin["dep"] is None:  # the first run after the click: the sidebar now shows the loaded point
        pin["dep"] = dep
    if (pin["req"], pin["space"], pin["dep"]) != (req, space, dep):
        unpin()
        return None
    return pin


def unpin() -> None:
    """Forget the pinned search: the next run searches for the sidebar's setup."""
    st.session_state.pop(PIN, None)
