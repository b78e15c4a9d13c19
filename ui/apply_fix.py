"""Apply one of Plan's fixes to the session: the sidebar and the Plan inputs take the fix's
deployment and requirement, and the page shows the plan before and after.

A fix is a whole :class:`~core.planning.check.Plan` (its deployment and requirement); what differs
from the current plan becomes session values of the inputs that hold it (model, GPU, tp, dp,
formats, the memory fraction, max_num_seqs, the levers, replicas and lengths). The numbers after
applying are the page's own plan of the new inputs, which equals the fix's plan (tests check it).
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import streamlit as st

from core.planning.answer import price_text, quoted_ttft_s
from core.planning.check import Plan
from core.planning.fixes import Fix
from core.spec import units
from core.spec.deployment import Deployment
from core.spec.support import kv_for
from ui import defaults, fmt
from ui.engine_inputs import AUTO, MAX_SEQS
from ui.i18n import lang, notice_text, t
from ui.money import current_rate

APPLIED = "_plan_fix_applied"
"""Session key: (the fix's words, the plan's numbers before it) until dismissed."""


def _deployment_values(now: Deployment, new: Deployment) -> dict[str, Any]:
    """Sidebar values that turn ``now`` into ``new`` (only what differs)."""
    out: dict[str, Any] = {}
    if new.model.id != now.model.id:
        out["model"] = new.model.id
    if new.gpu.id != now.gpu.id:
        out["gpu"] = new.gpu.id
    if new.parallel.tp != now.parallel.tp:
        out["tp"] = new.parallel.tp
    if new.parallel.dp != now.parallel.dp:
        out["dp"] = new.parallel.dp
    if new.weights.name != now.weights.name:
        out["weights"] = AUTO if new.weights.name == new.model.native_dtype else new.weights.name
    if new.kv.name != now.kv.name or "weights" in out:
        out["kv"] = AUTO if new.kv == kv_for(AUTO, new.weights, new.gpu) else new.kv.name
    if not math.isclose(new.memory_fraction, now.memory_fraction):
        out["util"] = round(new.memory_fraction, 3)
    seqs = new.engine.max_num_seqs
    if seqs != now.engine.max_num_seqs and (seqs is None or seqs in MAX_SEQS):
        out["max_seqs"] = AUTO if seqs is None else seqs
    a, b = now.levers, new.levers
    if b.speculative != a.speculative:
        spec = b.speculative
        out["spec"] = "off" if spec is None else spec.method
        if spec is not None:
            if spec.draft is not None:
                out["draft"] = spec.draft.id
            out["spec_k"] = spec.k
            out["spec_acc"] = round(spec.acceptance, 2)
    if b.prefix != a.prefix:
        out["prefix"] = int(b.prefix.shared_tokens)
        out["prefix_hit"] = float(b.prefix.hit_rate)
    if b.offload != a.offload:
        out["offload_w"] = b.offload.weights_bytes / units.GiB
        out["offload_kv"] = b.offload.kv_bytes / units.GiB
    return out


REQUIREMENT_KEYS = {
    "replicas": "plan_replicas",
    "prompt_len": "plan_prompt",
    "answer_len": "plan_answer",
    "shared_prefix_len": "plan_shared_prefix",
}
P95_KEYS = {"p95_prompt": "plan_prompt_p95", "p95_answer": "plan_answer_p95"}


def fix_values(current: Plan, fix: Plan) -> dict[str, Any]:
    """Every session value that turns the current plan's inputs into the fix's."""
    out = _deployment_values(current.deployment, fix.deployment)
    now, new = current.requirement, fix.requirement
    for field, key in REQUIREMENT_KEYS.items():
        if getattr(new, field) != getattr(now, field):
            out[key] = getattr(new, field)
    for field, key in P95_KEYS.items():
        if getattr(new, field) != getattr(now, field):
            out[key] = getattr(new, field)
    return out


def _apply(current: Plan, fix: Fix) -> None:
    """Button callback (before the widgets): set the inputs; a new GPU brings its catalog price."""
    values = fix_values(current, fix.plan)
    for key, value in values.items():
        defaults.assign(key, value)  # the user's now: kept as set where the default would follow
    if "gpu" in values:
        defaults.reset("plan_price")  # the fix was priced at the new GPU's catalog price
    st.session_state[APPLIED] = (notice_text(fix.lever), numbers(current))


def numbers(plan: Plan) -> dict[str, str]:
    """The plan's figures as the before/after table shows them (the price its deployment carries:
    the page's price for the current GPU, the catalog's for another, as the fixes are priced)."""
    state = plan.state
    price = plan.deployment.gpu.price_per_hour
    per_hour = plan.num_gpus * price if price else None
    return {
        "verdict": t(f"plan.verdict_word_{plan.verdict}"),
        "binding": t(f"check.{plan.binding.name}"),
        "gpus": f"{plan.num_gpus} × {plan.deployment.gpu.name}",
        "ttft": "∞" if plan.unbounded or not state.stable else fmt.duration(quoted_ttft_s(plan)),
        "tpot": "∞" if plan.unbounded or not state.stable else fmt.duration(float(state.tpot_s)),
        "rate": fmt.rate(plan.output_tokens_per_s),
        "price": price_text(per_hour, lang(), current_rate()),
    }


def _table(before: dict[str, str], after: dict[str, str]) -> pd.DataFrame:
    rows = list(before)
    return pd.DataFrame(
        {
            t("apply.quantity"): [t(f"apply.row_{r}") for r in rows],
            t("apply.before"): [before[r] for r in rows],
            t("apply.after"): [after[r] for r in rows],
        }
    )


def fix_chooser(plan: Plan, fixes: list[Fix]) -> None:
    """Under the fixes table: any fix (the first, cheapest working one, unless another is picked)
    with the plan before and after it, and a button that applies it."""
    labels = [f"{notice_text(f.lever)} · {price_text(f.cost_per_hour, lang(), current_rate())}" for f in fixes]
    if st.session_state.get("plan_fix_pick") not in labels:  # a new list of fixes: its first
        st.session_state.pop("plan_fix_pick", None)
    picked = st.selectbox(t("apply.pick"), labels, key="plan_fix_pick")
    index = labels.index(picked) if picked in labels else 0
    fix = fixes[index]
    st.dataframe(
        _table(numbers(plan), numbers(fix.plan)),
        hide_index=True,
        width="stretch",
        key="plan_fix_preview",
    )
    st.button(
        t("apply.button"),
        key="plan_fix_apply",
        type="primary",
        icon=":material/check:",
        on_click=_apply,
        args=(plan, fix),
    )


def applied_note(plan: Plan) -> None:
    """After a fix was applied: what it was, and the plan before and now (dismissable)."""
    applied = st.session_state.get(APPLIED)
    if not applied:
        return
    words, before = applied
    with st.container(border=True):
        st.markdown(t("apply.applied", fix=words))
        st.dataframe(_table(before, numbers(plan)), hide_index=True, width="stretch", key="plan_fix_applied")
        st.button(t("apply.dismiss"), key="plan_fix_dismiss", on_click=st.session_state.pop, args=(APPLIED, None))
