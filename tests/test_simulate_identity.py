"""Seeded simulations give the results recorded before the simulator was made faster (issue 30): the
same per-request times, token gaps and engine series, bit for bit.

The digests were recorded with this module's ``RECORD=1`` run; a change of the step formula or the
scheduler's rules changes them on purpose and is recorded again, a change for speed must not."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

from core.levers.settings import Levers, PrefixCaching
from core.serving.simulate import simulate
from core.serving.traffic import Lengths, Traffic
from core.spec.engine import Parallelism

RECORDED = Path(__file__).parent / "data" / "sim_identity.json"
CASES = {
    "a10_rate1_fixed": ("a10", Traffic(mode="rate", rate_per_s=1.0), "fixed", {}),
    "a10_rate3_fixed": ("a10", Traffic(mode="rate", rate_per_s=3.0), "fixed", {}),  # queue and preemptions
    "h100_rate20_lognormal": ("h100-sxm", Traffic(mode="rate", rate_per_s=20.0), "lognormal", {}),
    "h100_conc64_fixed": ("h100-sxm", Traffic(mode="concurrency", concurrency=64), "fixed", {}),
    "h100_users_lognormal": ("h100-sxm", Traffic(mode="users", users=200, think_time_s=10.0), "lognormal", {}),
    "h100_prefix_lognormal": (
        "h100-sxm",
        Traffic(mode="rate", rate_per_s=20.0),
        "lognormal",
        {"levers": Levers(prefix=PrefixCaching(shared_tokens=200, hit_rate=0.5))},
    ),
}


def digest(result) -> dict:
    h = hashlib.sha256()
    for a in (result.arrival, result.first_token, result.finish, result.itl, result.series_time):
        h.update(np.ascontiguousarray(a, dtype=float).tobytes())
    for a in (result.series_waiting, result.series_running, result.series_kv_used):
        h.update(np.ascontiguousarray(a, dtype=float).tobytes())
    return {
        "steps": result.steps,
        "preemptions": result.preemptions,
        "ttft_sum": float(result.ttft.sum()),
        "itl_sum": float(result.itl.sum()),
        "time_in_system": result.time_in_system,
        "sha256": h.hexdigest(),
    }


def run(deploy, name: str) -> dict:
    if name == "v3_dp8_conc64":
        dep = dataclasses.replace(deploy(model="deepseek-v3", gpu="h200"), parallel=Parallelism(tp=1, dp=8))
        result = simulate(dep, Traffic(mode="concurrency", concurrency=64), 160, Lengths(mean=500), Lengths(mean=40))
        return digest(result)
    gpu, traffic, distribution, extra = CASES[name]
    dep = dataclasses.replace(deploy(gpu=gpu, weights="bf16", max_model_len=4096), **extra)
    lengths = (
        Lengths(mean=1000, distribution=distribution, spread=0.5),
        Lengths(mean=200, distribution=distribution, spread=0.5),
    )
    return digest(simulate(dep, traffic, 2000, *lengths, seed=7))


NAMES = [*CASES, "v3_dp8_conc64"]


@pytest.mark.parametrize("name", NAMES)
def test_a_seeded_simulation_gives_the_recorded_result(deploy, name):
    if os.environ.get("RECORD"):
        recorded = json.loads(RECORDED.read_text()) if RECORDED.exists() else {}
        recorded[name] = run(deploy, name)
        RECORDED.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    assert run(deploy, name) == json.loads(RECORDED.read_text())[name]
