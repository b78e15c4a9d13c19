"""Every headline number's explanation (core/estimate/explain.py) evaluates to the number itself:
its value is the estimate's, and the terms it shows add up to it."""

from __future__ import annotations

import math

import pytest

from core.estimate.explain import explain
from core.estimate.result import estimate
from core.memory.activations import FP32_BYTES, GATED_FFN_ACTIVATIONS, HIDDEN_ACTIVATIONS, SAMPLER_LOGIT_COPIES
from core.memory.weights import parameter_counts, weight_bytes
from core.spec.deployment import Workload
from core.timing.roofline import Roofline

CASES = [  # (deploy kwargs, workload): GQA and MHA, MoE and MLA, tp, the three engines, a queue
    (dict(model="llama-3.1-8b", gpu="a10"), Workload(input_len=2048, output_len=512, batch=16)),
    (dict(model="llama-3.1-8b", gpu="h100-sxm"), Workload(input_len=1024, output_len=256, batch=64)),
    (dict(model="qwen3-30b-a3b", gpu="h100-sxm", tp=2), Workload(input_len=4096, output_len=512, batch=32)),
    (dict(model="deepseek-v3", gpu="h200", tp=8), Workload(input_len=2048, output_len=512, batch=8)),
    (dict(model="llama-3.1-8b", gpu="l4", weights="int4", kv="fp8"), Workload(input_len=512, output_len=128, batch=4)),
    (dict(model="llama-3.1-8b", gpu="h100-sxm", release="sglang"), Workload(input_len=1024, output_len=256, batch=8)),
    (dict(model="llama-3.1-8b", gpu="h100-sxm", release="trtllm"), Workload(input_len=1024, output_len=256, batch=8)),
]


@pytest.fixture(params=range(len(CASES)), ids=[c[0]["model"] + "-" + c[0]["gpu"] for c in CASES])
def case(request, deploy):
    kwargs, work = CASES[request.param]
    kwargs = dict(kwargs)
    release = kwargs.pop("release", None)
    if release is not None:
        from core.spec.release import parse_release

        kwargs["release"] = parse_release(release, "")
    return estimate(deploy(**kwargs), work)


def test_each_value_is_the_number_shown(case):
    found = explain(case)
    lat, mem, kv = case.latency, case.memory, case.kv
    assert found["ttft"].value == lat.ttft_s and found["tpot"].value == lat.tpot_s
    assert found["e2e"].value == lat.e2e_s
    assert found["throughput"].value == case.throughput.output_tokens_per_s
    assert found["max_concurrency"].value == kv.max_concurrency_at_request_len
    assert found["fits"].value == float(case.fits)
    assert found["bound"].value == float(case.bound_decode == "compute")
    for key in ("weights", "activations", "overhead", "kv_budget", "kv_in_use"):
        assert found[key].value == getattr(mem, key)
    assert found["kv_per_token"].value == kv.bytes_per_token


def test_the_step_terms_add_up_to_tpot_and_the_prefill(case):
    dep = case.deployment
    eff = dep.efficiency
    matmul_rate, attention_rate, read_rate = Roofline(dep).rates
    for phase, shown in ((case.latency.decode, case.latency.tpot_s), (case.latency.prefill, None)):
        # each kernel class's roofline from the FLOPs and bytes the explanation shows, added up
        kv, attention = float(phase.kv_bytes), float(phase.attention_flops)
        expert_f, expert_b = float(phase.expert_flops), float(phase.expert_bytes)
        dense_f = float(phase.flops) - attention - expert_f
        dense_b = float(phase.bytes_moved) - kv - expert_b
        gemms = max(dense_f / matmul_rate, dense_b / read_rate)
        attention_s = max(attention / attention_rate, kv / read_rate)
        assert float(phase.attention_s) == pytest.approx(attention_s, rel=1e-9)
        if dep.model.moe is not None:
            experts = max(expert_f / matmul_rate, expert_b / (read_rate * eff.expert))
            per_step = dep.model.num_moe_layers * eff.moe_layer_overhead_s  # router, sort, combine
            fixed = float(phase.moe_s) - experts
            if shown is not None:  # one decode step
                assert fixed == pytest.approx(per_step, abs=1e-12)
            else:  # one per prefill step, at least one step
                assert fixed >= per_step * (1 - 1e-9)
        else:
            assert float(phase.moe_s) == 0.0 and expert_f == expert_b == 0.0
        assert float(phase.kernel_seconds) == pytest.approx(gemms + attention_s + float(phase.moe_s), rel=1e-9)
        total = float(phase.kernel_seconds)
        total += sum(float(getattr(phase, f)) for f in ("comm_s", "overhead_s", "host_s", "side_s"))
        total = max(total, float(phase.frontend_s))
        assert total == pytest.approx(float(phase.seconds), rel=1e-12)
        if shown is not None:
            assert total == pytest.approx(shown, rel=1e-12)
        assert 0 < float(phase.kv_bytes) < float(phase.bytes_moved)  # weights and KV both read


def test_ttft_is_queue_plus_request_plus_prefill(case):
    dep, lat, work = case.deployment, case.latency, case.workload
    k = math.ceil(work.batch / case.running_batch)
    # the request overhead and, where the release renders chat templates on its loop, the burst's templates
    rest = lat.ttft_s - dep.efficiency.request_delay_s(work.batch) - float(lat.prefill.seconds)
    assert (rest > 1e-9) == (k > 1)  # a queue only when the batch does not run at once
    assert lat.e2e_s == pytest.approx(lat.ttft_s + (work.output_len - 1) * lat.tpot_s, rel=1e-12)
    assert case.throughput.output_tokens_per_s == pytest.approx(work.batch * work.output_len / lat.e2e_s)


def test_memory_formulas_reproduce_the_parts(case):
    dep, mem = case.deployment, case.memory
    model = dep.model
    share = mem.weights / weight_bytes(model, dep.weights).total
    per_param = weight_bytes(model, dep.weights).total / parameter_counts(model).total
    assert parameter_counts(model).total * per_param * share == pytest.approx(mem.weights, rel=1e-12)
    assert share <= 1 / dep.parallel.tp + 0.02  # one GPU holds about its tp share
    if model.moe is None:
        ffn = model.ffn_size
        tokens, seqs = case.max_num_batched_tokens, case.max_num_seqs
        peak = tokens * 2 * (GATED_FFN_ACTIVATIONS * ffn + HIDDEN_ACTIVATIONS * model.hidden_size)
        peak += SAMPLER_LOGIT_COPIES * min(seqs, tokens) * model.vocab_size * FP32_BYTES
        assert peak == pytest.approx(mem.activations)
    if model.mla is None and not model.is_hybrid and not model.num_sliding_layers:
        heads = max(model.num_kv_heads // dep.parallel.tp, 1)
        per_token = 2 * model.num_layers * heads * model.head_dim * dep.kv.bytes_per_element
        assert per_token == case.kv.bytes_per_token
    space = mem.kv_space - case.kv.shared_prefix_bytes
    per_request = case.kv.bytes_per_request - case.kv.shared_prefix_bytes
    assert max(math.floor(space / per_request), 0) * dep.parallel.dp == case.kv.max_concurrency_at_request_len


def test_the_worked_example_reads_as_the_chapter_does(deploy):
    """DOMAIN.md: 2 x 32 x 8 x 128 x 2 B per token for Llama-3-8B's GQA, and the budget in GiB."""
    result = estimate(deploy(model="llama-3.1-8b", gpu="a10"), Workload(input_len=2048, output_len=512, batch=16))
    found = explain(result)
    assert r"2 \times 32 \times 8 \times 128 \times 2 = 131{,}072" in found["kv_per_token"].values
    assert found["fits"].values.startswith(r"5.00\ \text{GiB} > ")
    assert found["ttft"].values.endswith(r"(B = 16,\ R = 11,\ k = 2)")
    assert "vllm" in found["kv_budget"].source.lower() or "0." in found["kv_budget"].source


def test_every_source_names_a_real_module_and_section(case):
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    headings = [
        line.lstrip("#").strip() for line in (root / "docs/model.md").read_text().splitlines() if line[:2] == "##"
    ]
    for item in explain(case).values():
        modules, _, section = item.source.rpartition("; docs/model.md, ")
        assert any(h.startswith(section) for h in headings), item.source
        for path in (p.split(" ")[0] for p in modules.replace(",", ";").split(";")):
            assert (root / path.strip()).exists(), item.source


def _evaluate(latex: str) -> float:
    """The number a product or sum chain of an explanation's values evaluates to (plain arithmetic
    only: numbers, \\times, +, -, brackets)."""
    expr = latex.split(" = ", 1)[1].rsplit(" = ", 1)[0]
    for old, new in (("{,}", ""), (r"\times", "*"), ("[", "("), ("]", ")"), ("{", "("), ("}", ")")):
        expr = expr.replace(old, new)
    return eval(expr, {"__builtins__": {}})


@pytest.mark.parametrize(
    ("model", "gpu", "par", "kv", "prefix"),
    [
        ("qwen3-30b-a3b", "h100-sxm", dict(tp=2, dp=2), "auto", 0),  # the busiest rank's requests
        ("deepseek-v3.2", "h200", dict(tp=8), "fp8", 0),  # vLLM's fp8_ds_mla layout
        ("llama-3.1-8b", "h100-sxm", dict(tp=8), "auto", 1024),  # a shared prefix held once
    ],
)
def test_kv_chains_evaluate_to_the_numbers(catalog, model, gpu, par, kv, prefix):
    from core.levers.settings import Levers, PrefixCaching
    from core.spec.deployment import Deployment
    from core.spec.engine import EngineConfig, Parallelism
    from core.spec.precision import kv_precision, weight_precision

    spec = catalog.model(model)
    weights = weight_precision(spec.native_dtype)
    levers = Levers(prefix=PrefixCaching(shared_tokens=prefix)) if prefix else Levers()
    dep = Deployment(
        model=spec,
        gpu=catalog.gpu(gpu),
        weights=weights,
        kv=kv_precision(kv, weights),
        parallel=Parallelism(**par),
        engine=EngineConfig(max_model_len=8192),
        levers=levers,
    )
    result = estimate(dep, Workload(input_len=2048, output_len=512, batch=16))
    found = explain(result)
    assert _evaluate(found["kv_per_token"].values) == result.kv.bytes_per_token
    in_use = _evaluate(found["kv_in_use"].values)  # GiB, printed to six figures
    assert in_use == pytest.approx(result.memory.kv_in_use / 2**30, rel=1e-4)
