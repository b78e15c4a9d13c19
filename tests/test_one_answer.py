"""One scenario, one answer (issue 28, items 1-3 and 10): each path of the UX audit walked in AppTest.

- D1: Plan's price follows the GPU unless the user set one, and the cost follows the price.
- D2: the efficiency inputs follow the GPU class on every path (Explorer -> GPU -> Plan -> Explorer,
  a custom GPU, a loaded search point), and a value the user set stays, shown as set, until reset.
- D16: the P95 lengths follow the typical ones unless set.
- D7: a load above the engine's admission ceiling waits for a slot: TTFT includes the wait, the
  cost is marked not achievable; a rate above the full engine's is an unbounded queue.
- Item 10: the answer sentence is first on both pages, and applying a fix gives the fix's plan.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from app_helpers import metrics, open_app

from core.estimate.result import estimate
from core.planning.answer import quoted_ttft_s
from core.planning.check import admission_ceiling, check
from core.planning.cost import cost
from core.planning.requirement import Requirement
from core.serving.simulate import simulate
from core.serving.traffic import Lengths, Traffic
from core.spec.deployment import Workload
from core.spec.efficiency import default_efficiency
from ui.fmt import duration, rate

CHAT_A10 = Requirement(
    load="users", users=50, think_time_s=30.0, prompt_len=2000, answer_len=300, ttft_slo_s=1.0, tpot_slo_s=0.05
)


def _sliders(at) -> dict[str, float]:
    return {s.key: s.value for s in at.slider if s.key in ("eff_compute", "eff_bw", "util")}


def _plan(at):
    at.switch_page("pages/plan_page.py").run()
    assert not at.exception
    return at


def _explorer(at):
    at.switch_page("pages/explorer_page.py").run()
    assert not at.exception
    return at


def _price(at) -> float:
    return at.number_input(key="plan_price").value


def test_plan_price_follows_the_gpu_and_the_cost_with_it(catalog):
    """D1: /plan on the A10, then the H100: the price is the H100's and so is the cost."""
    at = _plan(open_app())
    assert _price(at) == catalog.gpu("a10").price_per_hour
    at.selectbox(key="gpu").set_value("h100-sxm").run()
    h100 = catalog.gpu("h100-sxm").price_per_hour
    assert _price(at) == h100 != catalog.gpu("a10").price_per_hour
    shown = {m.label: m.value for m in at.metric}
    assert shown["USD / h"] == f"${h100:,.2f}"  # one GPU at the H100's price


def test_a_price_the_user_set_stays_shown_as_set_until_reset(catalog):
    at = _plan(open_app())
    at.number_input(key="plan_price").set_value(2.5).run()
    at.selectbox(key="gpu").set_value("a100-80gb").run()
    assert _price(at) == 2.5  # what the user typed is kept, and said
    notes = [c.value for c in at.caption if "set by you" in c.value]
    assert any("$2.50" in n and f"${catalog.gpu('a100-80gb').price_per_hour:,.2f}" in n for n in notes)
    at.button(key="_reset_plan_price").click().run()
    assert _price(at) == catalog.gpu("a100-80gb").price_per_hour
    assert not [c for c in at.caption if "set by you" in c.value]


@pytest.mark.parametrize("path", ["pages", "custom_gpu", "search_point"])
def test_efficiencies_follow_the_gpu_on_every_path(path, catalog):
    """D2: whatever path changes the GPU, its class's defaults replace the previous GPU's, and the
    Explorer shows what a fresh link to the same scenario shows."""
    at = open_app()
    assert _sliders(at)["eff_compute"] == default_efficiency("gddr").compute
    if path == "pages":  # the audit's path: Explorer -> H100 -> Plan -> Explorer
        at.selectbox(key="gpu").set_value("h100-sxm").run()
        _explorer(_plan(at))
    elif path == "search_point":  # ui/best_deployment.py's callback sets the GPU directly
        at.session_state["gpu"] = "h100-sxm"
        at.run()
    else:  # from the H100, a GPU added from its datasheet figures (GDDR-like 600 GB/s)
        at.selectbox(key="gpu").set_value("h100-sxm").run()
        at.session_state["sidebar_gpu_open"] = True
        at.run()
        next(b for b in at.get("form_submit_button") if b.proto.form_id == "sidebar_gpu_form").click().run()
        assert _scenario_deployment(at).gpu.id.startswith("custom-")
    wanted = default_efficiency(_scenario_deployment(at).gpu.memory_type)
    assert _sliders(at)["eff_compute"] == wanted.compute and _sliders(at)["eff_bw"] == wanted.bandwidth
    if path != "custom_gpu":
        fresh = open_app(gpu="NVIDIA H100 SXM5 80GB")
        assert metrics(at) == metrics(fresh)


def test_an_efficiency_set_by_the_user_or_a_link_stays_and_is_shown():
    at = open_app(eff_compute="0.8")  # a shared link carrying a value the sender set
    assert _sliders(at)["eff_compute"] == 0.8
    at.selectbox(key="gpu").set_value("h100-sxm").run()
    _explorer(_plan(at))
    assert _sliders(at)["eff_compute"] == 0.8
    note = [c.value for c in at.sidebar.caption if "set by you" in c.value]
    assert note and "0.8" in note[0] and f"{default_efficiency('hbm').compute:.3g}" in note[0]
    at.button(key="_reset_eff_compute").click().run()
    assert _sliders(at)["eff_compute"] == default_efficiency("hbm").compute


def test_p95_lengths_follow_the_typical_ones_until_set():
    """D16: typical prompt 2000 made P95 read 1500 and be used as 2000 silently."""
    at = _plan(open_app())
    at.number_input(key="plan_prompt").set_value(2000).run()
    assert at.number_input(key="plan_prompt_p95").value == 2000
    at.number_input(key="plan_prompt_p95").set_value(3000).run()
    at.number_input(key="plan_prompt").set_value(2500).run()
    assert at.number_input(key="plan_prompt_p95").value == 3000


def test_a_full_engine_queues_and_ttft_says_so(deploy):
    """D7: 50 users on an A10 with 2000/300 tokens: the check said TTFT ok at 404 ms; the engine
    holds 13 and the simulator's median TTFT is tens of seconds."""
    dep = deploy(gpu="a10", max_model_len=4096)
    plan = check(dep, CHAT_A10)
    ceiling = admission_ceiling(estimate(dep, Workload(input_len=2000, output_len=300)))
    assert plan.in_flight > ceiling == plan.running and plan.queued and not plan.unbounded
    ttft = next(c for c in plan.checks if c.name == "ttft")
    assert ttft.status == "failed" and ttft.need > 10  # seconds, not 404 ms
    users = Traffic(mode="users", users=50, think_time_s=30.0)
    sim = simulate(dep, users, 600, Lengths(mean=2000), Lengths(mean=300), seed=1)
    assert 0.5 < quoted_ttft_s(plan) / float(np.median(sim.ttft)) < 2  # the same avalanche, within 2x
    money = cost(plan, 1.29)
    assert not money.achievable and money.delivered_share == pytest.approx(
        plan.output_tokens_per_s / next(c.need for c in plan.checks if c.name == "throughput")
    )


def test_a_rate_above_the_full_engine_is_an_unbounded_queue(deploy):
    dep = deploy(gpu="a10", max_model_len=4096)
    rate_load = dataclasses.replace(CHAT_A10, load="rate", rate_per_s=5.0)
    plan = check(dep, rate_load)
    assert plan.unbounded and plan.verdict == "not_feasible"
    assert math.isinf(next(c for c in plan.checks if c.name == "ttft").need)
    assert not cost(plan, 1.29).achievable


def test_below_the_ceiling_nothing_waits(deploy):
    plan = check(deploy(gpu="h100-sxm"), CHAT_A10)
    assert not plan.queued and plan.running == pytest.approx(plan.in_flight)
    assert cost(plan, 3.99).achievable


def test_the_answer_comes_first_on_both_pages():
    at = open_app(batch="50", input_len="2000", output_len="300")
    first = at.main.children[2] if len(at.main.children) > 2 else None  # title, caption, then the answer
    answer = at.error[0].value
    assert answer.startswith("No: the KV cache binds") and "at once" in answer and "/h" in answer
    assert first is not None
    loop = estimate(_scenario_deployment(at), Workload(input_len=2000, output_len=300, batch=50)).closed_loop
    assert f"TPOT {duration(loop.tpot_s)}" in answer and rate(loop.output_tokens_per_s) in answer
    plan = _plan(at)
    assert plan.error[0].value.startswith("Not feasible") and "Cheapest fix that works" in plan.error[0].value


def _frame(at, column: str):
    """The first table on the page with ``column`` (the before/after tables)."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def _scenario_deployment(at):
    return at.session_state["scenario"].deployment


def test_applying_a_fix_gives_the_fixs_plan():
    """Item 10: pick each fix, apply it: the page's plan is the fix's (verdict and numbers)."""
    at = _plan(open_app())
    options = at.selectbox(key="plan_fix_pick").options
    assert len(options) > 1
    for row in range(len(options)):
        session = _plan(open_app())
        session.selectbox(key="plan_fix_pick").select_index(row).run()
        preview = _frame(session, "Before")
        after = dict(zip(preview.iloc[:, 0], preview.iloc[:, 2], strict=True))
        session.button(key="plan_fix_apply").click().run()
        assert not session.exception
        applied = _frame(session, "Before")
        now = dict(zip(applied.iloc[:, 0], applied.iloc[:, 2], strict=True))
        assert now == after, f"row {row}: {now} != {after}"


def test_check_json_carries_the_queue_and_the_answer(cli):
    code, out, _ = cli(
        "check", "--model", "llama-3.1-8b", "--gpu", "a10", "--users", "50", "--prompt-len", "2000",
        "--answer-len", "300", "--ttft-slo-ms", "1000", "--json",
    )  # fmt: skip
    assert code == 0
    data = json.loads(out)
    assert data["queue"] == "waiting" and data["running_requests"] == 13
    assert data["answer"].startswith(data["summary"]) and "Steady state" in data["answer"]
    assert data["cost"]["achievable"] is False
    assert any(row["label"] == "Price per GPU-hour" for row in data["inputs"])
    assert any(row["label"] == "Efficiency assumptions" for row in data["inputs"])


def test_the_plan_page_and_check_share_their_defaults(cli):
    """D16: the page's default SLOs (TTFT 1 s, 20 tokens/s) were not check's (none), so one question
    failed TPOT on the page and passed in the CLI. With nothing set, both give the same answer."""
    at = _plan(open_app())
    code, out, err = cli("check", "--model", "llama-3.1-8b", "--gpu", "a10", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["requirement"]["ttft_slo_ms"] == 1000 and data["requirement"]["tpot_slo_ms"] == 50
    assert at.code[0].value == data["answer"]
    code, out, _ = cli("check", "--model", "llama-3.1-8b", "--gpu", "a10", "--ttft-slo-ms", "0", "--json")
    assert json.loads(out)["requirement"]["ttft_slo_ms"] is None  # 0 turns a limit off, as on the page
