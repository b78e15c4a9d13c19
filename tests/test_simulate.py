"""The engine simulator: conservation, Little's law, agreement with the static model, overload,
closed-loop limits, KV limits, determinism, the fast step path, traffic inputs and the CLI."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.levers.settings import Levers, Offload, PrefixCaching
from core.serving.load_sweep import load_sweep, predicted_rates
from core.serving.sim_result import little_law_gap
from core.serving.simulate import simulate
from core.serving.step_cost import StepModel, step_seconds
from core.serving.traffic import Lengths, Traffic, arrival_times, read_lengths_csv
from core.spec import units
from core.timing.phases import decode_step_time, prefill_time
from core.timing.roofline import work_time

PROMPT, ANSWER = Lengths(mean=1000), Lengths(mean=200)
LOGNORMAL = (
    Lengths(mean=800, distribution="lognormal", spread=0.8),
    Lengths(mean=200, distribution="lognormal", spread=0.8),
)


@pytest.fixture(scope="module")
def a10(deploy):
    return deploy(gpu="a10", max_model_len=4096)


@pytest.fixture(scope="module")
def h100(deploy):
    return deploy(gpu="h100-sxm", max_model_len=4096)


def test_conservation_every_request_completes_with_all_its_tokens(a10):
    result = simulate(a10, Traffic(mode="rate", rate_per_s=1.0), 500, *LOGNORMAL, seed=3)
    assert np.isfinite(result.finish).all() and np.isfinite(result.first_token).all()
    assert (result.finish >= result.first_token).all() and (result.first_token > result.arrival).all()
    # every token after a request's first leaves exactly one inter-token gap
    assert result.itl.size == int((result.answer - 1).sum())


def test_littles_law_holds_on_the_simulated_run(h100):
    result = simulate(h100, Traffic(mode="rate", rate_per_s=10.0), 2000, *LOGNORMAL, seed=1)
    assert little_law_gap(result) < 0.03


def test_at_very_low_load_the_simulator_is_the_static_model(a10):
    result = simulate(a10, Traffic(mode="rate", rate_per_s=0.005), 40, PROMPT, ANSWER, seed=0)
    # no queueing: TTFT is the core's prefill of one prompt, TPOT its batch-1 decode step
    unqueued = float(prefill_time(a10, 1, 1000).seconds) + a10.efficiency.request_overhead_s
    assert np.median(result.ttft) == pytest.approx(unqueued, rel=1e-6)
    mean_context = 1000 + 200 / 2
    assert np.median(result.tpot) == pytest.approx(float(decode_step_time(a10, 1, mean_context).seconds), rel=1e-3)
    assert result.preemptions == 0


def test_under_overload_the_queue_grows_and_p99_ttft_grows_with_run_length(a10):
    overload = Traffic(mode="rate", rate_per_s=20.0)
    short = simulate(a10, overload, 300, PROMPT, ANSWER, seed=0)
    long = simulate(a10, overload, 1200, PROMPT, ANSWER, seed=0)
    assert np.percentile(long.ttft, 99) > 3 * np.percentile(short.ttft, 99)
    half = len(long.series_waiting) // 2
    assert long.series_waiting[half] > long.series_waiting[half // 4]


@pytest.mark.parametrize("clients", [1, 8, 64])
def test_closed_loop_never_exceeds_its_concurrency(h100, clients):
    result = simulate(h100, Traffic(mode="concurrency", concurrency=clients), 400, *LOGNORMAL, seed=2)
    in_system = result.series_running + result.series_waiting
    assert in_system.max() <= clients
    assert np.isfinite(result.finish).all()


def test_kv_in_use_never_exceeds_the_budget_and_preemption_recovers(deploy):
    tight = deploy(gpu="a10", max_model_len=8192)
    result = simulate(
        tight, Traffic(mode="concurrency", concurrency=200), 400, Lengths(mean=600), Lengths(mean=1500), seed=0
    )
    assert result.series_kv_used.max() <= 1.0 + 1e-9
    assert result.preemptions > 0
    assert np.isfinite(result.finish).all()
    assert result.itl.size == int((result.answer - 1).sum())


def test_users_with_think_time(h100):
    result = simulate(h100, Traffic(mode="users", users=30, think_time_s=5.0), 300, PROMPT, ANSWER, seed=4)
    assert (result.series_running + result.series_waiting).max() <= 30


def test_deterministic_for_a_seed(a10):
    runs = [
        simulate(a10, Traffic(mode="rate", rate_per_s=1.0, burstiness=2.0), 300, *LOGNORMAL, seed=s) for s in (7, 7, 8)
    ]
    np.testing.assert_array_equal(runs[0].finish, runs[1].finish)
    np.testing.assert_array_equal(runs[0].itl, runs[1].itl)
    assert not np.array_equal(runs[0].finish, runs[2].finish)


def test_sliding_window_models_run(deploy):
    gemma = deploy(model="gemma-2-9b", gpu="l40s", max_model_len=8192)
    result = simulate(gemma, Traffic(mode="rate", rate_per_s=2.0), 200, Lengths(mean=6000), Lengths(mean=100))
    assert np.isfinite(result.finish).all()
    assert result.itl.size == int((result.answer - 1).sum())


@settings(max_examples=40, deadline=None)
@given(new=st.lists(st.integers(1, 2048), min_size=1, max_size=12), seed=st.integers(0, 1000))
def test_fast_step_equals_the_general_roofline(deploy, new, seed):
    dep = deploy(gpu="a100-80gb", max_model_len=16384)
    cached = np.random.default_rng(seed).integers(0, 8000, len(new))
    new = np.array(new)
    assert StepModel(dep).step(new, cached) == pytest.approx(step_seconds(dep, new, cached), rel=1e-9)


def test_request_longer_than_the_kv_budget_is_a_clear_error(deploy):
    dep = deploy(gpu="a10", max_model_len=65536)
    with pytest.raises(ValueError, match="needs more KV cache than the whole budget"):
        simulate(dep, Traffic(mode="rate", rate_per_s=1.0), 10, Lengths(mean=60000), Lengths(mean=100))


def test_arrivals_are_poisson_at_the_rate():
    rng = np.random.default_rng(0)
    times = arrival_times(5.0, 20_000, rng)
    gaps = np.diff(times)
    assert gaps.mean() == pytest.approx(0.2, rel=0.03)
    assert gaps.std() / gaps.mean() == pytest.approx(1.0, rel=0.05)  # exponential: CV 1
    bursty = np.diff(arrival_times(5.0, 20_000, rng, burstiness=3.0))
    assert bursty.std() / bursty.mean() == pytest.approx(3.0, rel=0.1)


def test_lognormal_lengths_have_the_requested_mean():
    values = Lengths(mean=500, distribution="lognormal", spread=0.6).sample(50_000, np.random.default_rng(1), 10**6)
    assert values.mean() == pytest.approx(500, rel=0.02)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("prompt,answer\n100,20\nx,5\n", "line 3: lengths must be whole numbers"),
        ("100\n", "expected two columns"),
        ("100,0\n", "between 1 and"),
        ("", "CSV has no"),
        (b"\xff\xfe1,2", "not UTF-8"),
    ],
)
def test_bad_length_csv_is_a_clear_error(text, message):
    with pytest.raises(ValueError, match=message):
        read_lengths_csv(text)


def test_length_csv_with_header():
    prompts, answers = read_lengths_csv("prompt,answer\n100,20\n300,40\n")
    assert prompts.tolist() == [100, 300] and answers.tolist() == [20, 40]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mode": "flood"}, "traffic mode"),
        ({"rate_per_s": 0.0}, "request rate"),
        ({"burstiness": 50.0}, "burstiness"),
        ({"concurrency": 0}, "concurrency"),
    ],
)
def test_bad_traffic_names_the_field(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Traffic(**kwargs)


def test_load_sweep_finds_the_knee_between_light_and_heavy_load(h100):
    static, naive = predicted_rates(h100, 1000, 200)
    rates = np.geomspace(0.2 * static, 2.5 * static, 6)
    sweep = load_sweep(h100, rates, 600, PROMPT, ANSWER, ttft_slo_s=1.0, tpot_slo_s=0.05)
    assert sweep.knee_rate is not None and rates[0] <= sweep.knee_rate < rates[-1]
    assert sweep.points[-1].ttft_p99_s > 5 * sweep.points[0].ttft_p99_s  # the avalanche
    assert naive > static  # every slot at single-request speed: the chapters' pitfall over-promises


@pytest.mark.parametrize("gpu", ["a10", "h100-sxm"])
def test_the_naive_single_request_rate_over_promises_past_the_knee(deploy, gpu):
    # the chapters' pitfall: ceiling at the mean length x one request's speed, with long-tail
    # (log-normal) lengths, TPOT growing with the batch and queueing left out
    dep = deploy(gpu=gpu, max_model_len=4096)
    static, naive = predicted_rates(dep, LOGNORMAL[0].mean, LOGNORMAL[1].mean)
    rates = np.geomspace(0.2 * static, naive, 6)
    sweep = load_sweep(dep, rates, 300, *LOGNORMAL)
    assert sweep.naive_rate == pytest.approx(naive)
    assert sweep.knee_rate is not None and sweep.knee_rate < naive
    assert not sweep.points[-1].keeps_up  # offered the naive rate, the queue grows


def test_simulate_cli_json(cli):
    code, out, _ = cli(
        "simulate",
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "h100-sxm",
        "--max-model-len",
        "4096",
        "--request-rate",
        "5",
        "--num-requests",
        "300",
        "--json",
    )
    assert code == 0
    data = json.loads(out)
    for key in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"):
        assert set(data[key]) == {"mean", "p50", "p90", "p99"}
    assert {"output_tokens_per_s", "request_throughput_per_s", "preemptions"} <= set(data)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--request-rate", "-1"], "request rate"),
        (["--concurrency", "2", "--users", "3"], "not allowed with"),
        (["--request-rate", "1", "--lengths-csv", "/no/such.csv"], "no such file"),
        (["--request-rate", "1", "--length-dist", "zipf"], "invalid choice"),
    ],
)
def test_simulate_cli_bad_arguments(cli, argv, message):
    code, out, err = cli("simulate", "--model", "llama-3.1-8b", "--gpu", "a10", *argv)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


def _lever_cases(catalog):
    from core.levers.settings import Levers, Lora, Offload, PrefixCaching, Speculative
    from core.spec import units

    return {
        "prefix": Levers(prefix=PrefixCaching(shared_tokens=600)),
        "speculative": Levers(speculative=Speculative(draft=catalog.model("llama-3.2-1b"), k=4, acceptance=0.7)),
        "offload": Levers(offload=Offload(weights_bytes=2 * units.GiB)),
        "lora": Levers(lora=Lora(adapters=4, rank=16)),
    }


@pytest.mark.parametrize("lever", ["prefix", "speculative", "offload", "lora"])
def test_at_very_low_load_the_simulator_is_the_static_model_with_each_lever(a10, catalog, lever):
    import dataclasses

    dep = dataclasses.replace(a10, levers=_lever_cases(catalog)[lever])
    result = simulate(dep, Traffic(mode="rate", rate_per_s=0.005), 30, PROMPT, ANSWER, seed=0)
    unqueued = float(prefill_time(dep, 1, 1000).seconds) + dep.efficiency.request_overhead_s
    assert np.median(result.ttft) == pytest.approx(unqueued, rel=1e-6)
    mean_context = 1000 + 200 / 2
    assert np.median(result.tpot) == pytest.approx(float(decode_step_time(dep, 1, mean_context).seconds), rel=2e-3)
    plain = simulate(a10, Traffic(mode="rate", rate_per_s=0.005), 30, PROMPT, ANSWER, seed=0)
    if lever == "prefix":
        assert np.median(result.ttft) < 0.6 * np.median(plain.ttft)
    if lever == "speculative":
        assert np.median(result.tpot) < 0.7 * np.median(plain.tpot)


def test_a_shared_prefix_is_held_once_so_more_requests_run(a10, catalog):
    import dataclasses

    from core.levers.settings import Levers, PrefixCaching

    shared = dataclasses.replace(a10, levers=Levers(prefix=PrefixCaching(shared_tokens=1504)))
    lengths = (Lengths(mean=2000), Lengths(mean=300))
    busy = Traffic(mode="concurrency", concurrency=40)
    plain = simulate(a10, busy, 300, *lengths, seed=0)
    cached = simulate(shared, busy, 300, *lengths, seed=0)
    assert cached.series_running.max() > 1.5 * plain.series_running.max()
    assert cached.series_kv_used.max() <= 1.0 + 1e-9
    assert np.isfinite(cached.finish).all()
    assert cached.output_tokens_per_s > plain.output_tokens_per_s


def test_preemption_is_one_rule_whichever_step_preempts(a10):
    """Issue 13: the simulator had two copies of preemption and only one reset what the victim must
    prefill again (the other's victims, always mid-prefill, had it set already, so results did not
    differ). Both paths now call Engine.preempt_newest, which frees the victim's own blocks and has
    it recompute its prompt and all but its last generated token."""
    from core.serving.scheduler import Engine
    from core.serving.step_cost import Blocks

    blocks = Blocks(a10)
    prompt, answer = np.array([100, 300]), np.array([50, 50])
    engine = Engine(a10, prompt, answer, blocks, 1000, hit=np.zeros(2, dtype=np.int64), shared=np.zeros(2))
    engine.waiting.extend([0, 1])
    chunks: list[tuple[int, int]] = []
    engine.admit(10_000, chunks)
    ids = np.array([r for r, _ in chunks])
    engine.advance(np.zeros(0, dtype=np.int64), ids, np.array([s for _, s in chunks]), 1.0)
    decoding, _ = engine.schedule_decodes()
    engine.advance_decodes(decoding, np.full(9, 0.01), 1.09)  # each has emitted 1 + 9 tokens
    used_before = engine.used
    victim = engine.preempt_newest()
    assert victim == 1 and engine.waiting[0] == 1 and engine.running == [0]
    assert engine.generated[1] == 10 and engine.cached[1] == 0 and engine.held[1] == 0
    assert engine.target[1] == 300 + 10 - 1  # prompt + generated tokens but the last one
    assert engine.used == pytest.approx(used_before - float(blocks(300 + 9)))
    assert engine.preemptions == 1


def test_preempted_requests_still_emit_exactly_their_answer(deploy):
    """Under a KV cache that holds a few 3,400-token requests, 64 clients force preemptions; every
    request still finishes with exactly its answer's tokens (first tokens plus every later gap)."""
    tight = deploy(gpu="a10", max_model_len=4096, gpu_memory_utilization=0.8)
    result = simulate(tight, Traffic(mode="concurrency", concurrency=64), 300, Lengths(mean=3000), Lengths(mean=400))
    assert result.preemptions > 0
    assert np.isfinite(result.finish).all()
    emitted = len(result.itl) + int((result.answer >= 1).sum())  # first tokens + every later gap
    assert emitted == int(result.answer.sum())


@pytest.mark.parametrize(
    ("gpu", "tp", "levers"),
    [
        ("a10", 1, None),
        ("h100-sxm", 2, None),
        ("a10", 1, Levers(offload=Offload(weights_bytes=2 * units.GiB))),
        ("a10", 1, Levers(prefix=PrefixCaching(shared_tokens=600))),
        ("h100-sxm", 1, "qwen3-30b-a3b"),  # a MoE model: the experts' kernels and MoE layer overhead
    ],
)
def test_a_run_of_decode_steps_is_work_time_bit_for_bit(deploy, gpu, tp, levers):
    # the simulator's fast path for runs of decode steps (Roofline.step_times) repeats
    # work_time's arithmetic in place: a change to one that the other lacks fails here
    if isinstance(levers, str):
        dep = deploy(model=levers, gpu=gpu, tp=tp, max_model_len=4096)
        dep = dep.with_efficiency(moe_layer_overhead_s=30e-6, expert=0.6)
    else:
        dep = deploy(gpu=gpu, tp=tp, max_model_len=4096)
        dep = dataclasses.replace(dep, levers=levers) if levers else dep
    model = StepModel(dep)
    cached = np.array([900, 1200, 37, 4000])
    n, context = cached.size, int(cached.sum()) + cached.size
    pairs = context + n * np.arange(50.0)  # pairs and KV tokens both grow by n a step
    weights, expert_weights, comm = model._token_terms(float(n))
    phase = work_time(
        dep,
        linear=model.per_token * n + model.per_sequence * n,
        attention=pairs * model.per_pair,
        weights=weights,
        expert_weights=expert_weights,
        expert_linear=model.per_expert_token * n,
        kv_per_gpu=pairs * model.kv_per_token + n * model.state_traffic,
        tokens=float(n),
        steps=1.0,
        sequence_steps=n,
        comm_s=comm,
    )
    np.testing.assert_array_equal(model.decode_steps(cached, context, 50), phase.seconds)
