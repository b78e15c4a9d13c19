"""Property-based fuzzing of core and the CLI over wide input ranges.

Valid inputs never raise; invalid ones raise ValueError naming the field and the allowed range;
no output is negative where it cannot be, NaN or infinite; monotonicity holds. The default
profile ("ci") keeps the run bounded; `HYPOTHESIS_PROFILE=long` runs 20x more examples.
"""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from core.estimate.result import estimate
from core.estimate.sweep import sweep
from core.levers.settings import Levers, Lora, Offload, PrefixCaching, Speculative
from core.planning.check import check
from core.planning.requirement import LOAD_KINDS, Requirement
from core.serving.simulate import simulate
from core.serving.traffic import Lengths, Traffic
from core.spec.catalog import load_catalog
from core.spec.deployment import Deployment, Workload
from core.spec.efficiency import Efficiency
from core.spec.engine import EngineConfig, Parallelism
from core.spec.hf_config import model_from_config
from core.spec.precision import KV_PRECISIONS, WEIGHT_PRECISIONS, kv_precision, weight_precision
from core.spec.support import attention_problem, kv_problem, weights_problem

QUIET = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture]
settings.register_profile("ci", max_examples=40, deadline=None, suppress_health_check=QUIET)
settings.register_profile("long", max_examples=800, deadline=None, suppress_health_check=QUIET)
settings.load_profile(__import__("os").environ.get("HYPOTHESIS_PROFILE", "ci"))

CATALOG = load_catalog()
GPU_IDS = [g.id for g in CATALOG.gpus]
MODEL_IDS = [m.id for m in CATALOG.models]


@st.composite
def synthetic_models(draw):
    """Decoder configs from tiny to far beyond today's largest: every shape core must handle."""
    kv_heads = draw(st.sampled_from([1, 2, 4, 8, 16]))
    heads = kv_heads * draw(st.sampled_from([1, 2, 4, 8]))
    head_dim = draw(st.sampled_from([16, 64, 128, 256]))
    config = {
        "model_type": "llama",
        "num_hidden_layers": draw(st.integers(1, 512)),
        "hidden_size": heads * head_dim,
        "intermediate_size": draw(st.integers(1, 200_000)),
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "head_dim": head_dim,
        "vocab_size": draw(st.integers(2, 1_000_000)),
        "max_position_embeddings": draw(st.sampled_from([2048, 32768, 1_048_576])),
        "tie_word_embeddings": draw(st.booleans()),
    }
    if draw(st.booleans()):
        config |= {
            "model_type": "mixtral",
            "num_local_experts": (experts := draw(st.integers(2, 256))),
            "num_experts_per_tok": draw(st.integers(1, min(experts, 16))),
        }
    return model_from_config(config, id="fuzz")


models = st.one_of(st.sampled_from(MODEL_IDS).map(CATALOG.model), synthetic_models())


@st.composite
def deployments(draw):
    model = draw(models)
    tp = draw(st.sampled_from([t for t in (1, 2, 4, 8, 16, 32, 64) if model.num_heads % t == 0]))
    assume(model.mla is not None or model.num_kv_heads % tp == 0 or tp % model.num_kv_heads == 0)
    gpu = CATALOG.gpu(draw(st.sampled_from(GPU_IDS)))
    assume(tp == 1 or gpu.link_bandwidth_bidirectional > 0)
    weights = weight_precision(draw(st.sampled_from(list(WEIGHT_PRECISIONS))))
    assume(weights_problem(gpu, weights) is None)  # a format vLLM refuses on this GPU is not a valid deployment
    kv = kv_precision(draw(st.sampled_from(["auto", *KV_PRECISIONS])), weights)
    assume(kv_problem(gpu, kv, model) is None)  # nor an FP8 KV cache it refuses there
    assume(attention_problem(gpu, model) is None)  # nor attention it has no backend for
    engine = EngineConfig(
        max_model_len=draw(st.integers(2, model.max_context)),
        gpu_memory_utilization=draw(st.floats(0.05, 1.0)),
        block_size=draw(st.sampled_from([1, 8, 16, 128])),
        max_num_batched_tokens=draw(st.sampled_from([None, 1, 512, 65536])),
        max_num_seqs=draw(st.sampled_from([None, 1, 256, 100_000])),
    )
    return Deployment(model=model, gpu=gpu, weights=weights, kv=kv, parallel=Parallelism(tp=tp), engine=engine)


def finite(*values) -> bool:
    return all(np.all(np.isfinite(np.asarray(v, dtype=float))) for v in values)


@given(dep=deployments(), data=st.data())
def test_any_valid_deployment_and_workload_gives_finite_sensible_numbers(dep, data):
    length = dep.max_model_len
    input_len = data.draw(st.integers(1, length - 1))
    output_len = data.draw(st.integers(1, length - input_len))
    batch = data.draw(st.integers(1, 100_000))
    result = estimate(dep, Workload(input_len=input_len, output_len=output_len, batch=batch))
    m = result.memory
    for part in (m.weights, m.activations, m.overhead, m.kv_in_use, m.held_back, m.driver_reserved):
        assert part >= 0 and math.isfinite(part)
    assert math.isfinite(m.kv_budget)  # negative means "does not fit", said in a warning
    lat, tput = result.latency, result.throughput
    assert finite(lat.ttft_s, lat.tpot_s, lat.e2e_s, tput.output_tokens_per_s, tput.total_tokens_per_s)
    assert lat.ttft_s > 0 and lat.tpot_s > 0 and lat.e2e_s >= lat.ttft_s
    assert result.kv.max_concurrency_at_request_len >= 0 and result.kv.capacity_tokens >= 0
    if m.kv_budget <= 0:
        assert not result.fits and any(w.code == "does_not_fit" for w in result.warnings)
    # monotonicity: a bigger batch never makes a token faster, nor needs less KV cache
    bigger = estimate(dep, Workload(input_len=input_len, output_len=output_len, batch=batch + 1))
    assert bigger.latency.tpot_s >= lat.tpot_s * (1 - 1e-12)
    assert bigger.memory.kv_in_use >= m.kv_in_use


@given(dep=deployments(), data=st.data())
def test_sweeps_are_finite_and_concurrency_falls_with_length(dep, data):
    batches = np.unique(data.draw(st.lists(st.integers(1, 100_000), min_size=1, max_size=8)))
    longest = dep.max_model_len - 1
    lengths = np.unique(data.draw(st.lists(st.integers(1, longest), min_size=1, max_size=6)))
    grid = sweep(dep, batches, lengths, 1)
    assert finite(grid.ttft_s, grid.tpot_s, grid.e2e_s, grid.output_tokens_per_s, grid.kv_in_use)
    assert np.all(np.diff(grid.max_concurrency) <= 0)  # longer prompts, fewer at once
    assert np.all(np.diff(grid.tpot_s, axis=1) >= -1e-12)


@given(
    dep=deployments(),
    load=st.sampled_from(LOAD_KINDS),
    count=st.integers(1, 1_000_000),
    rate=st.floats(0.001, 1e6),
    think=st.floats(0, 86_400),
    prompt=st.integers(1, 100_000),
    answer=st.integers(1, 100_000),
    slo=st.one_of(st.none(), st.floats(0.001, 3600)),
)
def test_requirement_checks_always_answer(dep, load, count, rate, think, prompt, answer, slo):
    req = Requirement(
        load=load,
        users=count,
        in_flight=count,
        rate_per_s=rate,
        think_time_s=think,
        prompt_len=prompt,
        answer_len=answer,
        ttft_slo_s=slo,
        tpot_slo_s=slo,
    )
    engine = dataclasses.replace(dep.engine, max_model_len=min(req.longest_request, dep.model.max_context))
    dep = dataclasses.replace(dep, engine=engine)
    plan = check(dep, req)
    assert plan.verdict in ("feasible", "marginal", "not_feasible")
    assert all(c.need >= 0 and not math.isnan(c.need) and c.limit >= 0 for c in plan.checks)


@settings(max_examples=15)
@given(
    dep=deployments(),
    rate=st.floats(0.01, 100.0),
    prompt=st.integers(1, 4000),
    answer=st.integers(1, 500),
    seed=st.integers(0, 2**31),
)
def test_simulations_conserve_requests(dep, rate, prompt, answer, seed):
    assume(estimate(dep, Workload(input_len=1, output_len=1)).memory.kv_budget > 0)
    try:
        result = simulate(
            dep, Traffic(mode="rate", rate_per_s=rate), 30, Lengths(mean=prompt), Lengths(mean=answer), seed
        )
    except ValueError as err:  # a request longer than the whole KV budget: said, not crashed
        assert "KV cache" in str(err)
        return
    assert np.isfinite(result.finish).all() and (result.finish >= result.first_token).all()


@given(
    dep=deployments(),
    prefix=st.integers(0, 1_000_000),
    hit=st.floats(0, 1),
    offload=st.floats(0, 1.0),
    adapters=st.integers(0, 10_000),
    eager=st.booleans(),
    data=st.data(),
)
def test_any_lever_setting_is_accepted_or_refused_with_a_reason(dep, prefix, hit, offload, adapters, eager, data):
    from core.memory.weights import weight_bytes_per_gpu

    held = weight_bytes_per_gpu(dep.model, dep.weights, dep.parallel)
    try:
        levers = Levers(
            prefix=PrefixCaching(shared_tokens=prefix, hit_rate=hit),
            offload=Offload(weights_bytes=offload * held),
            lora=Lora(adapters=adapters, rank=data.draw(st.integers(1, 1024))) if adapters else None,
            attention="eager" if eager else "flash",
            speculative=data.draw(
                st.one_of(
                    st.none(),
                    st.builds(Speculative, method=st.just("ngram"), k=st.integers(1, 16), acceptance=st.floats(0, 1)),
                )
            ),
        )
        dep = dataclasses.replace(dep, levers=levers)
    except ValueError as err:
        assert re.search(r"offload|LoRA|tp", str(err)), err
        return
    work = Workload(input_len=max(dep.max_model_len // 2, 1), output_len=1, batch=data.draw(st.integers(1, 1000)))
    result = estimate(dep, work)
    assert finite(result.latency.ttft_s, result.latency.tpot_s, result.memory.kv_in_use, result.memory.kv_budget)
    assert result.latency.tpot_s > 0 and result.memory.kv_in_use >= 0


# --- invalid input: a ValueError that names the field and the allowed range ---------------------


@pytest.mark.parametrize(
    ("build", "field", "allowed"),
    [
        (lambda v: Workload(input_len=v), "input_len", "from 1 to"),
        (lambda v: Workload(output_len=v), "output_len", "from 1 to"),
        (lambda v: Workload(batch=v), "batch", "from 1 to"),
        (lambda v: Parallelism(tp=v), "tp", "from 1 to 1024"),
        (lambda v: Parallelism(pp=v), "pp", "from 1 to 1024"),
        (lambda v: EngineConfig(max_num_seqs=v), "max_num_seqs", "from 1 to"),
        (lambda v: EngineConfig(max_num_batched_tokens=v), "max_num_batched_tokens", "from 1 to"),
        (lambda v: EngineConfig(block_size=v), "block_size", "from 1 to 1024"),
        (lambda v: EngineConfig(max_model_len=v), "max_model_len", "from 1 to"),
        (lambda v: Requirement(users=v), "users", "from 1 to"),
        (lambda v: Requirement(prompt_len=v), "prompt_len", "from 1 to"),
        (lambda v: Lora(rank=v), "rank", "from 1 to 1024"),
        (lambda v: Speculative(method="ngram", k=v), "k", "from 1 to 16"),
    ],
)
@given(value=st.one_of(st.integers(max_value=0), st.integers(min_value=10**11), st.booleans(), st.floats()))
def test_bad_integers_are_refused_naming_field_and_range(build, field, allowed, value):
    with pytest.raises(ValueError) as err:
        build(value)
    assert field in str(err.value) and allowed in str(err.value)


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda v: EngineConfig(gpu_memory_utilization=v), "gpu_memory_utilization"),
        (lambda v: Efficiency(compute=v), "compute"),
        (lambda v: Efficiency(bandwidth=v), "bandwidth"),
        (lambda v: Requirement(rate_per_s=v), "rate_per_s"),
        (lambda v: Requirement(think_time_s=v), "think_time_s"),
        (lambda v: PrefixCaching(hit_rate=v), "hit_rate"),
        (lambda v: Speculative(method="ngram", acceptance=v), "acceptance"),
    ],
)
@given(value=st.one_of(st.floats(max_value=-1e-9), st.floats(min_value=1e7), st.just(float("nan"))))
def test_bad_fractions_and_rates_are_refused_naming_the_field(build, field, value):
    with pytest.raises(ValueError, match=field) as err:
        build(value)
    assert re.search(r"between|above|at most|from", str(err.value))


# --- the CLI: exit 0 or 2, one line on stderr, never a traceback ---------------------------------

FLAG_VALUES = st.one_of(
    st.integers(-10, 10**9).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.sampled_from(["", "abc", "-1", "1e400", "nan", "<script>", "０", "1" * 400]),
)


@given(
    command=st.sampled_from(["estimate", "check", "simulate"]),
    flags=st.lists(
        st.tuples(
            st.sampled_from(
                [
                    "--batch",
                    "--input-len",
                    "--output-len",
                    "--max-model-len",
                    "--tp",
                    "--gpu-memory-utilization",
                    "--users",
                    "--request-rate",
                    "--prompt-len",
                    "--num-requests",
                    "--cpu-offload-gb",
                    "--prefix-cache-tokens",
                    "--spec-acceptance",
                    "--max-loras",
                    "--weight-dtype",
                    "--kv-dtype",
                ]
            ),
            FLAG_VALUES,
        ),
        max_size=3,
        unique_by=lambda pair: pair[0],
    ),
    model=st.sampled_from(["llama-3.1-8b", "qwen3-0.6b", "no-such-model", "../../etc/passwd"]),
    gpu=st.sampled_from(["a10", "h100-sxm", "nope"]),
)
def test_the_cli_answers_or_refuses_in_one_line(capsys, command, flags, model, gpu):
    from core.cli import main

    argv = [command, "--model", model, "--gpu", gpu, "--json"]
    if command == "simulate" and not any(f in ("--users", "--request-rate") for f, _ in flags):
        argv += ["--request-rate", "1", "--num-requests", "20"]
    if command == "simulate":
        flags = [(f, v) for f, v in flags if f != "--num-requests"]
        argv += ["--num-requests", "20"] if "--num-requests" not in argv else []
    for flag, value in flags:
        argv += [flag, value]
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's own usage errors
        code = exit_.code
    out, err = capsys.readouterr()
    assert code in (0, 2)
    if code == 2:
        assert out == "" and err.count("\n") == 1 and "Traceback" not in err
