"""Inputs of the Load test page, URL-bound like the rest, and the cached simulations they drive."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.deployment import Deployment
from core.simulate import SimResult, simulate
from core.traffic import TRAFFIC_MODES, Lengths, Traffic
from ui.i18n import t

PREFIX = "lt_"
MODE_PARAM = "traffic"


def traffic_mode() -> str:
    """Traffic kind, kept in the URL by hand (a bound widget would write its translated label)."""
    key = PREFIX + "mode"
    if key not in st.session_state:
        from_url = st.query_params.get(MODE_PARAM, "rate")
        st.session_state[key] = from_url if from_url in TRAFFIC_MODES else "rate"
    mode = st.segmented_control(
        t("lt.mode"), TRAFFIC_MODES, key=key, required=True, format_func=lambda m: t(f"lt.mode_{m}")
    )
    if mode == "rate":
        st.query_params.pop(MODE_PARAM, None)
    else:
        st.query_params[MODE_PARAM] = mode
    return mode


def number(label: str, name: str, default, low, high, help: str | None = None):
    key = PREFIX + name
    initial = {} if key in st.session_state else {"value": default}
    return st.number_input(label, min_value=low, max_value=high, key=key, bind="query-params", help=help, **initial)


@st.cache_data(max_entries=16, show_spinner=False)
def run_simulation(dep: Deployment, traffic: Traffic, num_requests: int, prompts, answers, seed: int) -> SimResult:
    return simulate(dep, traffic, num_requests, prompts, answers, seed)


def lengths(mean: int, distribution: str, spread: float) -> Lengths:
    return Lengths(mean=mean, distribution=distribution, spread=spread)


def sweep_rates(static_rate: float, points: int = 12) -> np.ndarray:
    """Offered rates from 10 % to 160 % of the static prediction, evenly on a log scale."""
    return np.geomspace(0.1 * static_rate, 1.6 * static_rate, points)
