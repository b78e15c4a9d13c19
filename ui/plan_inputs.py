"""Inputs of the Plan page: URL-bound numbers, the load kind, and presets that fill them."""

from __future__ import annotations

import streamlit as st

from core.planning.presets import load_presets
from core.planning.requirement import LOAD_KINDS
from core.spec import units
from ui import defaults, url_inputs
from ui.i18n import t

PREFIX = "plan_"
LOAD_PARAM = "load"
FOLLOWING = {"price": "plan.price", "prompt_p95": "plan.prompt_len_p95", "answer_p95": "plan.answer_len_p95"}
"""Plan inputs whose default follows the scenario (:func:`following`), with their labels' keys."""


def number(label: str, name: str, default, low, high, help: str | None = None):
    """A number input bound to the URL as ``plan_<name>``."""
    return url_inputs.number(PREFIX + name, label, default, low, high, help)


def following(label: str, name: str, default, low, high, help: str | None = None):
    """A number bound to the URL as ``plan_<name>`` whose default follows the scenario (the GPU's
    price, the typical length for its P95) until the user sets it (:func:`ui.defaults.bound_input`)."""
    return defaults.bound_input(
        st.number_input, PREFIX + name, default, label=label, min_value=low, max_value=high, help=help
    )


def load_kind() -> str:
    """users, in_flight or rate, kept in the URL as ``load``."""
    return url_inputs.choice(PREFIX + "load", LOAD_PARAM, t("plan.load"), LOAD_KINDS, lambda k: t(f"plan.load_{k}"))


def apply_preset() -> None:
    """Fill the inputs from the chosen preset (a callback: it runs before the widgets exist)."""
    name = st.session_state.get(PREFIX + "preset", "custom")
    if name not in load_presets():
        return
    req = load_presets()[name]
    values = {
        "load": req.load,
        "users": req.users,
        "think": req.think_time_s,
        "in_flight": req.in_flight,
        "rate": req.rate_per_s,
        "prompt": req.prompt_len,
        "prompt_p95": req.p95_prompt,
        "answer": req.answer_len,
        "answer_p95": req.p95_answer,
        "ttft_ms": req.ttft_slo_s / units.MS if req.ttft_slo_s else 0.0,
        "user_rate": 1 / req.tpot_slo_s if req.tpot_slo_s else 0.0,
        "shared_prefix": req.shared_prefix_len,
    }
    for name, value in values.items():  # the preset's values, kept as set (a P95 then stays the preset's)
        defaults.assign(PREFIX + name, value)
