"""Inputs of the Load test page, URL-bound like the rest, and the cached simulations they drive."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.serving.sim_result import SimResult
from core.serving.simulate import simulate
from core.serving.traffic import TRAFFIC_MODES, Lengths, Traffic
from core.spec.deployment import Deployment
from ui import url_inputs
from ui.cache import FAST_HASH
from ui.i18n import t

PREFIX = "lt_"
MODE_PARAM = "traffic"


def traffic_mode() -> str:
    """rate, concurrency or users, kept in the URL as ``traffic``."""
    return url_inputs.choice(PREFIX + "mode", MODE_PARAM, t("lt.mode"), TRAFFIC_MODES, lambda m: t(f"lt.mode_{m}"))


def number(label: str, name: str, default, low, high, help: str | None = None):
    """A number input bound to the URL as ``lt_<name>``."""
    return url_inputs.number(PREFIX + name, label, default, low, high, help)


@st.cache_data(max_entries=16, show_spinner=False, hash_funcs=FAST_HASH)
def run_simulation(dep: Deployment, traffic: Traffic, num_requests: int, prompts, answers, seed: int) -> SimResult:
    return simulate(dep, traffic, num_requests, prompts, answers, seed)


def lengths(mean: int, distribution: str, spread: float) -> Lengths:
    return Lengths(mean=mean, distribution=distribution, spread=spread)


def sweep_rates(static_rate: float, points: int = 12) -> np.ndarray:
    """Offered rates from 10 % to 160 % of the static prediction, evenly on a log scale."""
    return np.geomspace(0.1 * static_rate, 1.6 * static_rate, points)
