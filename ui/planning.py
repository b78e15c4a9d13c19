"""Cached planner results for the Plan page: the check, fixes and solvers for one (setup, load)."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from core.planning.check import Plan, check
from core.planning.fixes import Fix, fixes
from core.planning.requirement import Requirement
from core.planning.solve import GpuOption, Sizing, gpu_options, max_prompt_len, max_users, min_gpus
from core.spec.catalog import load_catalog
from core.spec.deployment import Deployment
from ui.cache import FAST_HASH

GPU_OPTIONS_SHOWN = 5


@dataclass(frozen=True)
class NamedOption(GpuOption):
    gpu_name: str = ""


@dataclass(frozen=True)
class PlanBundle:
    plan: Plan
    fixes: list[Fix]
    max_load: float
    max_prompt: int
    min_gpus: Sizing | None
    gpu_options: list[NamedOption]


@st.cache_data(max_entries=64, show_spinner=False, hash_funcs=FAST_HASH)
def plan_bundle(dep: Deployment, req: Requirement) -> PlanBundle:
    catalog = load_catalog()
    plan = check(dep, req)
    names = {g.id: g.name for g in catalog.gpus}
    # the cheapest few, sized once: the fixes offer the cheapest other GPUs among them
    every_option = gpu_options(catalog, dep, req, limit=GPU_OPTIONS_SHOWN + 1)
    options = [
        NamedOption(gpu_id=o.gpu_id, sizing=o.sizing, cost_per_hour=o.cost_per_hour, gpu_name=names[o.gpu_id])
        for o in every_option[:GPU_OPTIONS_SHOWN]
    ]
    return PlanBundle(
        plan=plan,
        fixes=fixes(catalog, dep, req, every_option) if plan.verdict != "feasible" else [],
        max_load=max_users(dep, req),
        max_prompt=max_prompt_len(dep, req),
        min_gpus=min_gpus(dep, req),
        gpu_options=options,
    )
