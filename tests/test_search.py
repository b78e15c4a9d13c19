"""The best-deployment search: consistent with the Plan check, fronts non-dominated, the M/D/1
prefill queue of disaggregated serving, and where disaggregation wins and loses."""

import dataclasses
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.planning.check import check
from core.planning.pareto import best, cost_front, front, search_to_dict, throughput_front
from core.planning.requirement import Requirement
from core.planning.search import MODES, SearchSpace, search

CHAT = Requirement(
    load="users", users=50, think_time_s=30.0, prompt_len=1500, answer_len=300, ttft_slo_s=1.0, tpot_slo_s=0.05
)
ONE_A10 = SearchSpace(
    gpus=("a10",), tensor_parallel=(1,), pipeline_parallel=(1,), weight_dtypes=("bf16",), kv_dtypes=("auto",)
)


@pytest.mark.parametrize(
    "req",
    [
        CHAT,
        Requirement(load="rate", rate_per_s=0.5, prompt_len=1500, answer_len=300),
        Requirement(load="in_flight", in_flight=10, prompt_len=1500, answer_len=300),
    ],
)
def test_an_aggregated_candidate_matches_the_plan_check(deploy, catalog, req):
    """The search reads the same steady state as the Plan check, by interpolation: 1 and 2 replicas
    of one A10 give the check's TPOT and TTFT within 0.5 %, and the same verdict on the KV ceiling."""
    found = search(catalog, deploy(gpu="a10"), req, dataclasses.replace(ONE_A10, modes=("aggregated",)))
    for replicas in (1, 2):
        i = int(np.flatnonzero(found.replicas == replicas)[0])
        plan = check(found.shapes[found.shape[i]], dataclasses.replace(req, replicas=replicas))
        kv = next(c for c in plan.checks if c.name == "kv_cache")
        if kv.status == "failed":
            assert not found.meets_slo[i]
            continue
        assert found.tpot_s[i] == pytest.approx(plan.state.tpot_s, rel=5e-3)
        if req.ttft_slo_s:
            ttft = next(c for c in plan.checks if c.name == "ttft")
            assert found.ttft_s[i] == pytest.approx(ttft.need, rel=5e-3)
        assert found.max_num_seqs[i] == max(int(np.ceil(plan.in_flight - 1e-9)), 1)


def test_fifty_chat_users_need_two_a10s(deploy, catalog):
    """One A10 admits 16 requests but 50 chat users keep 19 in flight (tests/test_plan.py); two fit."""
    found = search(catalog, deploy(gpu="a10"), CHAT, dataclasses.replace(ONE_A10, modes=("aggregated",)))
    chosen = best(found)
    assert chosen is not None and found.num_gpus[chosen] == 2 and found.replicas[chosen] == 2


def test_front_is_non_dominated_and_complete():
    rng = np.random.default_rng(7)
    x, y = rng.random(400), rng.random(400)
    mask = rng.random(400) < 0.8
    idx = front(x, y, mask)
    for i in idx:  # nothing in the pool is at least as good on both and better on one
        dominated = mask & (x <= x[i]) & (y <= y[i]) & ((x < x[i]) | (y < y[i]))
        assert not dominated.any()
    for j in np.flatnonzero(mask):  # every point off the front is dominated by one on it
        if j not in idx:
            assert ((x[idx] <= x[j]) & (y[idx] <= y[j])).any()
    assert list(x[idx]) == sorted(x[idx])


def test_catalog_fronts_are_non_dominated(deploy, catalog):
    found = search(catalog, deploy(model="llama-3.1-70b"), dataclasses.replace(CHAT, users=200))
    assert len(found) >= 5000 and found.meets_slo.any()
    cost, tpot = found.cost_per_million_output_tokens, found.tpot_s
    pool = found.meets_slo & np.isfinite(cost)
    for i in cost_front(found):
        assert found.meets_slo[i]
        assert not (pool & (cost <= cost[i]) & (tpot <= tpot[i]) & ((cost < cost[i]) | (tpot < tpot[i]))).any()
    user, gpu = found.tokens_per_s_per_user, found.tokens_per_s_per_gpu
    for i in throughput_front(found):
        better = found.meets_slo & (user >= user[i]) & (gpu >= gpu[i]) & ((user > user[i]) | (gpu > gpu[i]))
        assert not better.any()
    chosen = best(found)
    priced = found.meets_slo & ~np.isnan(found.cost_per_hour)
    assert found.cost_per_hour[chosen] == found.cost_per_hour[priced].min()


def test_the_disaggregated_prefill_queue_is_md1(deploy, catalog):
    """At rho = 0.5 on one prefill instance the M/D/1 wait is rho t_p / (2 (1 - rho)) = t_p / 2:
    the 1P1D TTFT exceeds the same shape's TTFT at a vanishing rate by t_p / 2 (plus the slightly
    larger decode step of the bigger decode batch)."""
    dep = deploy(gpu="h100-sxm")
    space = dataclasses.replace(ONE_A10, gpus=("h100-sxm",), modes=("disaggregated",))
    probe = Requirement(load="rate", rate_per_s=1e-3, prompt_len=4000, answer_len=100)
    low = search(catalog, dep, probe, space)
    one = int(np.flatnonzero((low.prefill == 1) & (low.decode == 1))[0])
    from core.timing.phases import prefill_time

    t_p = float(prefill_time(low.shapes[0], 1, 4000).seconds)
    busy = search(catalog, dep, dataclasses.replace(probe, rate_per_s=0.5 / t_p), space)
    i = int(np.flatnonzero((busy.prefill == 1) & (busy.decode == 1))[0])
    extra_step = busy.tpot_s[i] - low.tpot_s[one]
    assert busy.ttft_s[i] - low.ttft_s[one] - extra_step == pytest.approx(t_p / 2, rel=1e-3)


def _cheapest_mode(catalog, dep, req) -> str:
    space = SearchSpace(gpus=("h100-sxm",), tensor_parallel=(1,), pipeline_parallel=(1,), weight_dtypes=("bf16",))
    found = search(catalog, dep, req, dataclasses.replace(space, kv_dtypes=("auto",)))
    chosen = best(found)
    assert chosen is not None
    return MODES[found.mode[chosen]]


def test_disaggregation_wins_where_prefill_interference_dominates(deploy, catalog):
    """8k-token prompts, 64-token answers, 12 requests/s, TPOT 15 ms: aggregated replicas spend most
    steps prefilling (TPOT = t_d / (1 - lambda t_p)) and need many; decode instances do not."""
    req = Requirement(load="rate", rate_per_s=12, prompt_len=8000, answer_len=64, ttft_slo_s=2.0, tpot_slo_s=0.015)
    assert _cheapest_mode(catalog, deploy(), req) == "disaggregated"


def test_disaggregation_loses_where_prefill_is_light(deploy, catalog):
    """200-token prompts and 1,000-token answers: prefill takes a sliver of each step, one replica
    serves the load, and disaggregation would need at least two instances."""
    req = Requirement(load="rate", rate_per_s=0.5, prompt_len=200, answer_len=1000, ttft_slo_s=1.0, tpot_slo_s=0.05)
    assert _cheapest_mode(catalog, deploy(), req) == "aggregated"


def test_search_cli_json(cli):
    code, out, _ = cli(
        "search",
        "--model",
        "llama-3.1-70b",
        "--users",
        "200",
        "--prompt-len",
        "1500",
        "--answer-len",
        "300",
        "--ttft-slo-ms",
        "1000",
        "--tpot-slo-ms",
        "50",
        "--json",
    )
    assert code == 0
    data = json.loads(out)
    assert data["candidates_evaluated"] >= 5000 and data["modes_evaluated"] == list(MODES)
    keys = {"gpu", "num_gpus", "tp", "pp", "dp", "ep", "replicas", "weight_dtype", "kv_dtype", "mode"}
    keys |= {"max_num_batched_tokens", "batched_tokens_default"}
    keys |= {"cost_per_hour", "cost_per_million_output_tokens", "ttft_ms", "tpot_ms", "meets_slo"}
    assert data["pareto"] and all(keys <= set(p) for p in data["pareto"])
    assert all(p["meets_slo"] for p in data["pareto"])
    tpots = [p["tpot_ms"] for p in data["pareto"]]
    assert tpots == sorted(tpots, reverse=True)  # cheaper points are slower, or they would dominate
    assert data["best"] == data["pareto"][0]


def test_search_refuses_bad_lists(cli):
    code, _, err = cli("search", "--model", "llama-3.1-8b", "--gpus", "h100-sxm,nope")
    assert code == 2 and "unknown GPU 'nope'" in err
    code, _, err = cli("search", "--model", "llama-3.1-8b", "--tp-options", "2,x")
    assert code == 2 and "--tp-options" in err
    code, _, err = cli("search", "--model", "llama-3.1-8b", "--modes", "split")
    assert code == 2 and "mode must be one of" in err


def test_search_to_dict_says_when_nothing_meets(deploy, catalog):
    impossible = dataclasses.replace(CHAT, tpot_slo_s=1e-4)
    data = search_to_dict(search(catalog, deploy(gpu="a10"), impossible, ONE_A10), ONE_A10.modes)
    assert data["best"] is None and data["meeting_slo"] == 0
    assert data["pareto"] and not any(p["meets_slo"] for p in data["pareto"])


def test_plan_page_best_deployment_matches_the_core(deploy, catalog):
    from tests.app_helpers import open_app

    at = open_app()
    at.switch_page("pages/plan_page.py").run()
    assert not at.exception
    at.toggle(key="search_on").set_value(True).run()
    assert not at.exception
    # the page's defaults: Llama-3.1-8B, 50 users thinking 30 s, 1500 + 300 tokens, TTFT 1 s, 20 tokens/s
    found = search(catalog, deploy(gpu="a10", max_model_len=8192), CHAT)
    data = search_to_dict(found, MODES)
    success = [s.value for s in at.success]
    assert any(s.startswith("Best: ") and f"TPOT {data['best']['tpot_ms']:,.1f} ms" in s for s in success)
    assert any(f"{data['candidates_evaluated']:,} candidates evaluated" in m.value for m in at.markdown)
    table = at.dataframe[-1].value  # the front's table is the page's last
    assert len(table) == len(data["pareto"])
    again = open_app()  # a second session meets the search its first session ran (kept per process)
    again.switch_page("pages/plan_page.py").run()
    again.toggle(key="search_on").set_value(True).run()
    assert not again.exception
    assert again.dataframe[-1].value.equals(table)


def test_choosing_a_front_point_loads_it_into_the_sidebar(monkeypatch):
    from types import SimpleNamespace

    import ui.best_deployment as section

    point = {"gpu": "h200", "tp": 2, "weight_dtype": "fp8", "kv_dtype": "fp8", "replicas": 3}
    state = {"search_cost_front": SimpleNamespace(selection=SimpleNamespace(points=[{"customdata": 1}]))}
    monkeypatch.setattr(section, "st", SimpleNamespace(session_state=state))
    section._load_point("search_cost_front", [{}, point])
    assert (state["gpu"], state["tp"], state["weights"], state["kv"], state["plan_replicas"]) == (
        "h200",
        2,
        "fp8",
        "fp8",
        3,
    )
    assert state["search_loaded"] == point
    # a searched chunk size is loaded when the sidebar offers it, the engine's own as auto
    for tokens, default, expected in ((2048, False, 2048), (16384, True, "auto"), (3000, False, "auto")):
        chunked = {**point, "max_num_batched_tokens": tokens, "batched_tokens_default": default, "dp": 1, "ep": 1}
        state["mnbt"] = "auto"
        section._load_point("search_cost_front", [{}, chunked])
        assert state["mnbt"] == expected


def test_a_loaded_data_parallel_point_sets_the_sidebars_dp():
    """Choosing a front point with dp ranks loads tp, dp and the formats into the sidebar's keys,
    and the section names the point it loaded, dp and ep included."""
    from streamlit.testing.v1 import AppTest

    def page():
        from types import SimpleNamespace

        import streamlit as st

        from core.planning.requirement import Requirement
        from core.spec.catalog import load_catalog
        from core.spec.deployment import Deployment
        from core.spec.precision import kv_precision, weight_precision
        from ui.best_deployment import _load_point, best_deployment_section

        point = {
            **{"gpu": "h200", "num_gpus": 8, "tp": 1, "pp": 1, "dp": 8, "ep": 8, "mode": "aggregated"},
            **{"replicas": 1, "weight_dtype": "fp8", "kv_dtype": "auto", "max_num_batched_tokens": 8192},
            "batched_tokens_default": True,
        }
        if "dp" not in st.session_state:  # the chart's selection callback, as a click runs it
            st.session_state["front"] = SimpleNamespace(selection=SimpleNamespace(points=[{"customdata": 0}]))
            _load_point("front", [point])
        catalog = load_catalog()
        fp8 = weight_precision("fp8")
        dep = Deployment(
            model=catalog.model("deepseek-v3"), gpu=catalog.gpu("h200"), weights=fp8, kv=kv_precision("auto", fp8)
        )
        best_deployment_section(dep, Requirement(users=10))  # the search toggle is off: no search runs

    at = AppTest.from_function(page).run()
    assert not at.exception
    assert (at.session_state["tp"], at.session_state["dp"], at.session_state["weights"]) == (1, 8, "fp8")
    assert at.session_state["mnbt"] == "auto" and at.session_state["plan_replicas"] == 1
    assert "tp 1 pp 1 dp 8 ep 8" in at.success[0].value


def test_the_sidebar_takes_data_parallel_ranks_for_moe_models(deploy):
    """dp from the link reaches the Explorer's numbers (weights per GPU as core computes them for
    tp 1 x dp 8); a dense model has no dp input."""
    from core.estimate.result import estimate
    from core.spec.engine import Parallelism
    from tests.app_helpers import DEFAULT_WORK, metrics, open_app

    at = open_app(model="Qwen3-30B-A3B", gpu="NVIDIA H100 SXM5 80GB", tp="1", dp="4")
    assert at.sidebar.selectbox(key="dp").value == 4
    dep = dataclasses.replace(
        deploy(model="qwen3-30b-a3b", gpu="h100-sxm", max_model_len=4096), parallel=Parallelism(tp=1, dp=4)
    )
    expected = estimate(dep, DEFAULT_WORK)  # the sidebar's lengths and batch
    from ui import fmt

    assert metrics(at)["TPOT"] == fmt.duration(expected.latency.tpot_s)
    assert "--data-parallel-size 4" not in "".join(c.value for c in at.code)  # the Explorer prints no command
    assert not [w for w in open_app().sidebar.selectbox if w.key == "dp"]


def test_each_gpu_keeps_its_own_efficiency_and_the_base_gpu_its_price(deploy, catalog):
    """A calibration on the sidebar's A10 (GDDR class) must not be applied to an H100 (HBM class),
    and a price typed for the sidebar's GPU is the one the search ranks it by."""
    from core.spec.efficiency import class_efficiency

    base = deploy(gpu="a10")
    tuned = base.with_efficiency(compute=0.2)
    tuned = dataclasses.replace(tuned, gpu=dataclasses.replace(tuned.gpu, price_per_hour=0.5))
    space = dataclasses.replace(ONE_A10, gpus=("a10", "h100-sxm"))
    found = search(catalog, tuned, CHAT, space)
    h100 = next(d for d in found.shapes if d.gpu.id == "h100-sxm")
    assert h100.efficiency.compute == class_efficiency("hbm").compute
    assert all(d.efficiency.compute == 0.2 for d in found.shapes if d.gpu.id == "a10")  # the calibration holds
    a10 = next(i for i, d in enumerate(found.shapes) if d.gpu.id == "a10")
    one = int(np.flatnonzero((found.shape == a10) & (found.mode == 0) & (found.replicas == 1))[0])
    assert found.cost_per_hour[one] == pytest.approx(0.5)


def test_front_figures_are_valid_plotly(deploy, catalog):
    """The charts are built without validation (ui/figure.py); plotly's validators check them here."""
    import plotly.graph_objects as go

    import ui.best_deployment as section

    data = search_to_dict(search(catalog, deploy(gpu="a10"), CHAT, ONE_A10), MODES)
    gpus = {g.id: g.name for g in catalog.gpus}
    figure = section._front_figure(data["pareto"], "cost_per_million_output_tokens", "tpot_ms", gpus, "x", "y")
    go.Figure(figure.to_dict())  # raises on an unknown property


KV_BOUND = Requirement(
    load="in_flight", in_flight=1000, prompt_len=4000, answer_len=1000, ttft_slo_s=30.0, tpot_slo_s=0.2
)
V3_ON_H200 = SearchSpace(gpus=("h200",), weight_dtypes=("fp8",), kv_dtypes=("auto",), pipeline_parallel=(1,))


def test_a_kv_bound_mla_load_puts_data_parallel_attention_on_the_front(deploy, catalog):
    """DeepSeek-V3 keeps one MLA latent per token that tensor parallelism does not split: every GPU
    of a tp 8 replica holds all its requests' KV, so it admits 137 requests of 5,000 tokens, and
    1,000 in flight need 8 replicas (64 GPUs). dp 8 ranks each hold only their own (90 per rank,
    720 per replica; tests/test_expert_parallel.py), so data-parallel layouts serve the load on a
    third of the GPUs and the cost front is theirs. The fronts stay non-dominated."""
    from core.planning.curves import curves

    found = search(catalog, deploy(model="deepseek-v3", gpu="h200"), KV_BOUND, V3_ON_H200)
    dp = np.array([found.shapes[s].parallel.dp for s in found.shape])
    assert {d.parallel.dp for d in found.shapes} == {1, 2, 4, 8} and {d.parallel.num_gpus for d in found.shapes} == {8}
    front_dp = dp[cost_front(found)]
    assert (front_dp > 1).any()
    fewest = {kind: found.num_gpus[found.meets_slo & sel].min() for kind, sel in (("tp", dp == 1), ("dp", dp > 1))}
    assert fewest["tp"] == 64 and fewest["dp"] <= 24
    tp8 = next(d for d in found.shapes if d.parallel.dp == 1 and d.engine.max_num_batched_tokens is None)
    dp8 = next(d for d in found.shapes if d.parallel.dp == 8 and d.engine.max_num_batched_tokens is None)
    assert curves(dp8, KV_BOUND).ceiling > 4 * curves(tp8, KV_BOUND).ceiling
    cost, tpot = found.cost_per_million_output_tokens, found.tpot_s
    for i in cost_front(found):
        assert not (
            found.meets_slo & (cost <= cost[i]) & (tpot <= tpot[i]) & ((cost < cost[i]) | (tpot < tpot[i]))
        ).any()
    data = search_to_dict(found, V3_ON_H200.modes)
    assert all(p["ep"] == (p["tp"] * p["dp"] if p["dp"] > 1 else 1) for p in data["pareto"] + data["pareto_throughput"])
    assert any(p["dp"] > 1 and p["ep"] == 8 for p in data["pareto"])


def test_dense_models_search_dp_one_only_and_dp_one_candidates_do_not_move(deploy, catalog):
    """Adding dp and max_num_batched_tokens options adds shapes; the dp 1 shapes at the engine's own
    chunk size keep every number they had in a search without those options."""
    space = dataclasses.replace(ONE_A10, gpus=("a10", "h100-sxm"), tensor_parallel=(1, 2))
    plain = search(
        catalog, deploy(gpu="a10"), CHAT, dataclasses.replace(space, data_parallel=(1,), batched_tokens=(None,))
    )
    wide = search(catalog, deploy(gpu="a10"), CHAT, space)
    assert all(d.parallel.dp == 1 for d in wide.shapes)  # Llama is dense: no data-parallel attention
    assert len(wide.shapes) > len(plain.shapes)
    same = np.isin(wide.shape, np.arange(len(plain.shapes)))  # the default shapes come first, in order
    assert wide.shapes[: len(plain.shapes)] == plain.shapes
    for name in ("shape", "mode", "replicas", "num_gpus", "max_num_seqs", "ttft_s", "tpot_s", "meets_slo"):
        assert np.array_equal(getattr(wide, name)[same], getattr(plain, name)), name


def test_the_chunk_size_is_searched_in_aggregated_serving(deploy, catalog):
    """On an H100 vLLM's own chunk is 8,192 tokens, so (None, 2048, 8192) tries 2,048 once more, in
    aggregated serving only. A 4,000-token P95 prompt then takes 4000 / 2048 = 1.95 steps instead of
    one (each step reads every weight again: a slower prefill, a higher TTFT), while the smaller
    activation peak leaves more KV budget, so the KV ceiling does not fall."""
    from core.planning.curves import curves

    req = Requirement(load="rate", rate_per_s=2.0, prompt_len=4000, answer_len=300, ttft_slo_s=2.0, tpot_slo_s=0.05)
    space = dataclasses.replace(ONE_A10, gpus=("h100-sxm",))
    found = search(catalog, deploy(gpu="h100-sxm"), req, space)
    chunks = [d.engine.max_num_batched_tokens for d in found.shapes]
    assert chunks == [None, 2048]
    assert set(found.mode[found.shape == 1]) == {0}  # the 2,048 shape is aggregated only
    default, small = (curves(d, req) for d in found.shapes)
    assert small.prefill_p95_s > default.prefill_p95_s and small.ceiling >= default.ceiling
    data = search_to_dict(found, space.modes)
    entries = data["pareto"] + data["pareto_throughput"]
    assert {"max_num_batched_tokens", "batched_tokens_default", "dp", "ep"} <= set(entries[0])
    assert {p["max_num_batched_tokens"] for p in entries} <= {8192, 2048}
    assert all(p["batched_tokens_default"] == (p["max_num_batched_tokens"] == 8192) for p in entries)


def test_search_cli_takes_dp_and_chunk_lists(cli):
    base = ("search", "--model", "deepseek-v2-lite", "--gpus", "h100-sxm", "--weight-dtypes", "bf16", "--users", "400")
    code, out, _ = cli(*base, "--prompt-len", "8000", "--dp", "1,4", "--batched-tokens", "auto,4096", "--json")
    assert code == 0
    data = json.loads(out)
    points = data["pareto"] + data["pareto_throughput"]
    assert {p["dp"] for p in points} <= {1, 4}
    # the dp 4 layouts were searched (whether one is on the front is the model's answer, not the CLI's)
    code, out, _ = cli(*base, "--prompt-len", "8000", "--dp", "1", "--batched-tokens", "auto,4096", "--json")
    assert code == 0 and json.loads(out)["shapes_evaluated"] < data["shapes_evaluated"]
    code, out, _ = cli(*base, "--prompt-len", "8000", "--dp-options", "4", "--batched-tokens-options", "auto")
    assert code == 0 and " dp 4 ep " in out
    code, _, err = cli(*base, "--dp", "0")
    assert code == 2 and "--dp-options" in err
    code, _, err = cli(*base, "--batched-tokens", "auto,lots")
    assert code == 2 and "--batched-tokens-options" in err


def _weakly_dominated_at_resolution(x, y, pool, i):
    """Pool points at least as good as point i on both axes at the front's resolution, i excluded,
    and whether each ties i on both."""
    from core.planning.pareto import resolution

    xr, yr = resolution(x), resolution(y)
    better = pool & (xr <= xr[i]) & (yr <= yr[i])
    better[i] = False
    return better, (xr == xr[i]) & (yr == yr[i])


def _assert_a_proper_front(x, y, pool, price, idx):
    """No point on the front is weakly dominated by another candidate at the front's resolution,
    except by a tie on both axes that the front left out for it (one per tie: the cheapest per
    hour of those not beaten on the raw values); no front point is beaten on the raw values either
    (the front is a subset of the raw one); every pool point off it is weakly dominated by one on it."""
    from core.planning.pareto import resolution

    on = np.zeros(len(x), dtype=bool)
    on[idx] = True
    assert pool[idx].all() and len(set(idx.tolist())) == len(idx)
    for i in idx:
        better, tie = _weakly_dominated_at_resolution(x, y, pool, i)
        assert not (better & ~tie).any(), f"point {i} is dominated"
        for j in np.flatnonzero(better & tie):
            assert not on[j], f"points {i} and {j} tie on both axes and both stay"
            assert not (x[j] <= x[i] and y[j] <= y[i] and (x[j] < x[i] or y[j] < y[i]))
            if not np.isnan(price[j]) and not (x[i] <= x[j] and y[i] <= y[j] and (x[i] < x[j] or y[i] < y[j])):
                assert price[i] <= price[j], f"tie {i}/{j}: the dearer one stays"
        raw = pool & (x <= x[i]) & (y <= y[i]) & ((x < x[i]) | (y < y[i]))
        assert not raw.any()
    xr, yr = resolution(x), resolution(y)
    for j in np.flatnonzero(pool & ~on):
        assert ((xr[idx] <= xr[j]) & (yr[idx] <= yr[j])).any(), f"point {j} is off the front but not dominated"
    assert list(x[idx]) == sorted(x[idx])


VALUES = [0.5, 1.0, 1.0586, 1.2485, 13.726, 100.0, 999.6]


@settings(max_examples=300, deadline=None)
@given(
    points=st.lists(
        st.tuples(
            st.sampled_from(VALUES),
            st.sampled_from([0.0, 1e-9, -1e-6, 2e-5, -4e-4, 3e-3]),  # near ties, some within 3 figures
            st.sampled_from(VALUES),
            st.sampled_from([0.0, 1e-9, 1e-6, -2e-5, 4e-4, -3e-3]),
            st.one_of(st.just(float("nan")), st.sampled_from([1.0, 2.5, 6.69, 7.89])),
            st.booleans(),
        ),
        min_size=1,
        max_size=40,
    )
)
def test_no_point_on_a_front_is_weakly_dominated(points):
    """Property (audit D10): on random point sets full of exact and near ties, the front holds no
    point another candidate matches or beats on both axes at the resolution it is shown at."""
    x = np.array([a * (1 + da) for a, da, *_ in points])
    y = np.array([b * (1 + db) for _, _, b, db, *_ in points])
    price = np.array([p[4] for p in points])
    pool = np.array([p[5] for p in points])
    _assert_a_proper_front(x, y, pool, price, front(x, y, pool, price))
    _assert_a_proper_front(-y, -x, pool, price, front(-y, -x, pool, price))  # a maximized front, negated


def test_b300_at_b200s_tpot_is_not_on_the_cost_front(cli, deploy, catalog):
    """Audit D10: Qwen3-32B for 200 users put B300 x1 ($7.89/h, TPOT 13.7260 ms) on the cost front
    beside B200 x1 ($6.69/h, TPOT 13.7262 ms): 0.001 % faster for 18 % more is the same TPOT. The
    CLI's fronts now hold one of them, and both fronts of that search are proper (no point weakly
    dominated by another candidate)."""
    args = ("search", "--model", "qwen3-32b", "--users", "200", "--ttft-slo-ms", "2000", "--tpot-slo-ms", "50")
    code, out, _ = cli(*args, "--json")
    assert code == 0
    data = json.loads(out)
    cost = [(p["gpu"], p["num_gpus"]) for p in data["pareto"]]
    assert ("b200", 1) in cost and ("b300", 1) not in cost
    for points in (data["pareto"], data["pareto_throughput"]):
        shown = [(p["gpu"], p["num_gpus"], p["mode"], p["tp"], p["weight_dtype"], p["kv_dtype"]) for p in points]
        assert len(shown) == len(set(shown))
    base = deploy(model="qwen3-32b", gpu=catalog.gpus[0].id)
    req = Requirement(users=200, ttft_slo_s=2.0, tpot_slo_s=0.05)
    found = search(catalog, base, req)
    assert [(found.shapes[found.shape[i]].gpu.id, int(found.num_gpus[i])) for i in cost_front(found)] == cost
    pool, per_million, price = found.meets_slo, found.cost_per_million_output_tokens, found.cost_per_hour
    _assert_a_proper_front(per_million, found.tpot_s, pool & np.isfinite(per_million), price, cost_front(found))
    user, gpu = found.tokens_per_s_per_user, found.tokens_per_s_per_gpu
    _assert_a_proper_front(-user, -gpu, pool, price, throughput_front(found))


def test_the_search_space_filters(deploy, catalog):
    """A budget per hour keeps exactly the candidates at or under it (and no GPU without a price),
    the same numbers as without it; no quantization searches the checkpoint's format only, whatever
    the base runs; a budget that is not a positive price is refused by name."""
    space = dataclasses.replace(ONE_A10, gpus=("a10", "l4", "gb200"), weight_dtypes=("bf16", "fp8"))
    free = search(catalog, deploy(gpu="a10"), CHAT, space)
    assert np.isnan(free.cost_per_hour).any()  # GB200 has no catalog price
    capped = search(catalog, deploy(gpu="a10"), CHAT, dataclasses.replace(space, max_cost_per_hour=4.0))
    assert len(capped) and (capped.cost_per_hour <= 4.0).all()

    def rows(c, keep):
        """Each kept candidate as (GPU, format, mode, replicas, prefill instances, TPOT)."""
        shape = [c.shapes[s] for s in c.shape]
        return sorted(
            (shape[i].gpu.id, shape[i].weights.name, c.mode[i], c.replicas[i], c.prefill[i], round(c.tpot_s[i], 12))
            for i in np.flatnonzero(keep)
        )

    assert rows(capped, np.ones(len(capped), dtype=bool)) == rows(free, free.cost_per_hour <= 4.0)
    fp8 = deploy(gpu="a10", weights="fp8", kv="fp8")
    native = search(catalog, fp8, CHAT, dataclasses.replace(space, native_only=True, kv_dtypes=("auto", "fp8")))
    assert {(d.weights.name, d.kv.name) for d in native.shapes} == {("bf16", "bf16")}
    for bad in (0.0, -1.0, float("inf")):
        with pytest.raises(ValueError, match="max_cost_per_hour"):
            SearchSpace(max_cost_per_hour=bad)


def _plan_with_search(**state):
    """The Plan page with the search on and its filters seeded (``state``: session keys)."""
    from tests.app_helpers import open_app

    at = open_app()
    at.switch_page("pages/plan_page.py").run()
    for key, value in state.items():
        at.session_state[key] = value
    at.toggle(key="search_on").set_value(True).run()
    assert not at.exception
    return at


def _fronts(at) -> dict[str, list[dict]]:
    """The two front charts' traces by the front's x axis title (cost, throughput)."""
    from core.messages import message
    from tests.app_helpers import figures

    titles = {message("search.axis_cost", "en"): "cost", message("search.axis_user", "en"): "throughput"}
    return {
        titles[f["layout"]["xaxis"]["title"]["text"]]: f["data"]
        for f in figures(at)
        if f["layout"].get("xaxis", {}).get("title", {}).get("text") in titles
    }


def test_the_gpu_filter_searches_only_the_chosen_gpus(deploy, catalog):
    """Audit D11: "H100 only" could not be asked in the dashboard. With A10 and L4 chosen, both
    fronts, the best line and the table name only them, the candidates are the core's for that
    space, and the hover reads each axis with its unit."""
    at = _plan_with_search(search_gpus=["a10", "l4"])
    space = SearchSpace(gpus=("a10", "l4"))
    data = search_to_dict(search(catalog, deploy(gpu="a10", max_model_len=8192), CHAT, space), MODES)
    assert any(f"{data['candidates_evaluated']:,} candidates evaluated" in m.value for m in at.markdown)
    names = ("NVIDIA A10 ", "NVIDIA L4 ")
    fronts = _fronts(at)
    labels = [label for traces in fronts.values() for trace in traces for label in trace["text"]]
    assert labels and all(label.startswith(names) for label in labels)
    assert all(label.startswith(names) for label in at.dataframe[-1].value.iloc[:, 0])
    assert "$%{x:.3g} per 1M output tokens · TPOT %{y:.3g} ms" in fronts["cost"][0]["hovertemplate"]
    assert "%{x:.3g} tokens/s per user · %{y:.3g} output tokens/s per GPU" in fronts["throughput"][0]["hovertemplate"]
    at.number_input(key="search_max_cost").set_value(2.0).run()  # and at most $2 an hour
    costs = [p["cost_per_hour"] for p in at.session_state["search_front"]["data"]["pareto"]]
    assert costs and all(c is not None and c <= 2.0 for c in costs)
    at.number_input(key="search_max_cost").set_value(0.0).run()  # no limit again
    at.checkbox(key="search_native_only").check().run()  # the checkpoint's BF16 only
    points = at.session_state["search_front"]["data"]
    assert {(p["weight_dtype"], p["kv_dtype"]) for p in points["pareto"] + points["pareto_throughput"]} == {
        ("bf16", "bf16")
    }


class _Click:
    """st.session_state as a click on point ``index`` of chart ``chart`` leaves it for the callback."""

    def __init__(self, state, chart: str, index: int):
        from types import SimpleNamespace

        self.state, self.chart = state, chart
        self.selection = SimpleNamespace(selection=SimpleNamespace(points=[{"customdata": index}]))

    def get(self, key, default=None):
        return self.selection if key == self.chart else self.state.get(key, default)

    def __setitem__(self, key, value):
        self.state[key] = value


def test_a_clicked_point_keeps_the_front_it_was_picked_from(monkeypatch):
    """Audit D11: loading a point changed the sidebar, the search ran again for the new setup and
    redrew both fronts without the point. Now the fronts stay as they were, the point circled and
    named, through later reruns, until the user searches again or changes the load."""
    from types import SimpleNamespace

    import ui.best_deployment as section

    at = _plan_with_search(search_gpus=["a10", "l4", "h100-sxm"])
    before = _fronts(at)
    shown = at.session_state["search_front"]["data"]
    index, point = next((i, p) for i, p in enumerate(shown["pareto"]) if p["gpu"] != "a10")
    with monkeypatch.context() as patch:  # the chart's on_select callback, as a click runs it
        patch.setattr(
            section, "st", SimpleNamespace(session_state=_Click(at.session_state, "search_cost_front", index))
        )
        section._load_point("search_cost_front", shown["pareto"])
    at.run()
    assert not at.exception
    assert at.sidebar.selectbox(key="gpu").value == point["gpu"] and at.session_state["tp"] == point["tp"]
    for _ in range(2):  # the click's run and any later rerun
        after = _fronts(at)
        for kind, traces in before.items():
            assert after[kind][: len(traces)] == traces  # the same fronts, point for point
        chosen = after["cost"][-1]
        assert chosen["name"] == "loaded into the sidebar" and chosen["marker"]["symbol"] == "circle-open"
        assert (list(chosen["x"]), list(chosen["y"])) == ([point["cost_per_million_output_tokens"]], [point["tpot_ms"]])
        assert any(
            section._label(point, {"h100-sxm": "NVIDIA H100 SXM5 80GB", "l4": "NVIDIA L4"}) in i.value for i in at.info
        )
        at.run()
    at.button(key="search_again").click().run()  # a new search for the sidebar's setup
    assert "search_pinned" not in at.session_state
    assert all(trace["name"] != "loaded into the sidebar" for traces in _fronts(at).values() for trace in traces)
    with monkeypatch.context() as patch:  # pick again, then change the load: the kept front goes
        shown = at.session_state["search_front"]["data"]
        patch.setattr(section, "st", SimpleNamespace(session_state=_Click(at.session_state, "search_cost_front", 0)))
        section._load_point("search_cost_front", shown["pareto"])
    at.run()
    assert "search_pinned" in at.session_state
    at.number_input(key="plan_users").set_value(80).run()
    assert "search_pinned" not in at.session_state
    assert all(trace["name"] != "loaded into the sidebar" for traces in _fronts(at).values() for trace in traces)
