"""The requirement check: hand-worked cases, Little's law, fixes, solver boundaries, command, cost."""

from __future__ import annotations

import csv
import dataclasses
import html
import io
import json

import pytest

from core.messages import duration, message
from core.planning.check import check, in_flight_requests
from core.planning.cost import cost
from core.planning.fixes import family, fixes
from core.planning.launch import serve_command
from core.planning.presets import load_presets
from core.planning.report import plan_to_dict, solvers_to_dict, verdict_sentence
from core.planning.report_csv import csv_report
from core.planning.report_formats import html_report, markdown_report
from core.planning.requirement import Requirement
from core.planning.solve import gpu_options, max_prompt_len, max_users, min_gpus, passes
from core.spec import units
from core.timing.steady_state import steady_state

CHAT = Requirement(
    load="users", users=50, think_time_s=30.0, prompt_len=1500, answer_len=300, ttft_slo_s=1.0, tpot_slo_s=1 / 20
)
GENERATING_50 = Requirement(load="in_flight", in_flight=50, prompt_len=1500, answer_len=500)


def test_fifty_generating_users_on_an_a10_are_kv_bound_until_int4_and_fp8(deploy, catalog):
    # 50 x 2000 tokens x 128 KiB = 12.2 GiB of KV cache against a 3.25 GiB budget on an A10
    bf16 = check(deploy(gpu="a10", max_model_len=2048), GENERATING_50)
    assert bf16.verdict == "not_feasible"
    assert bf16.binding.name == "kv_cache"
    assert bf16.binding.ratio == pytest.approx(50 * 2000 * 128 * units.KiB / bf16.estimate.memory.kv_budget, rel=0.01)
    # INT4 weights free ~10 GiB and FP8 halves the KV: 50 x 2000 x 64 KiB = 6.1 GiB fits
    small = check(deploy(gpu="a10", weights="int4", kv="fp8", max_model_len=2048), GENERATING_50)
    kv = next(c for c in small.checks if c.name == "kv_cache")
    assert kv.status != "failed"
    assert small.verdict in ("feasible", "marginal")


def test_users_follow_littles_law_at_a_consistent_operating_point(deploy):
    dep = deploy(gpu="a100-80gb", max_model_len=2048)
    plan = check(dep, CHAT)
    e2e, engine = plan.state.e2e_s, plan.state.engine_e2e_s
    # in flight = users x engine time / (user-facing E2E + think time) = arrival rate x engine time
    assert plan.in_flight == pytest.approx(CHAT.users * engine / (e2e + CHAT.think_time_s), rel=1e-3)
    assert plan.in_flight == pytest.approx(plan.state.request_rate * engine, rel=1e-9)
    # and the operating point is the one of that batch
    assert steady_state(dep, plan.in_flight, 1500, 300).e2e_s == pytest.approx(e2e)
    assert e2e - engine == pytest.approx(dep.efficiency.request_overhead_s)
    assert plan.worst_case_in_flight == 50


def test_rate_load_follows_littles_law(deploy):
    dep = deploy(gpu="h100-sxm", max_model_len=2048)
    req = Requirement(load="rate", rate_per_s=5.0, prompt_len=1000, answer_len=200)
    batch = in_flight_requests(dep, req)
    assert batch == pytest.approx(5.0 * steady_state(dep, batch, 1000, 200).engine_e2e_s, rel=1e-3)


def test_an_undrainable_rate_is_not_feasible_with_finite_numbers(deploy):
    plan = check(
        deploy(gpu="t4", model="qwen3-0.6b", max_model_len=2048),
        Requirement(load="rate", rate_per_s=10_000.0, prompt_len=1000, answer_len=200),
    )
    assert plan.verdict == "not_feasible"
    assert plan.in_flight < 10_000
    assert next(c for c in plan.checks if c.name == "throughput").status == "failed"


def test_the_steady_state_without_prefill_is_the_static_decode(deploy):
    # a lone request: TTFT = prefill + one step, E2E = TTFT + (O - 1) TPOT
    state = steady_state(deploy(), 1.0, 1000, 100)
    assert state.e2e_s == pytest.approx(state.ttft_s + 99 * state.tpot_s, rel=1e-6)


def test_each_fix_delivers_the_verdict_it_claims(deploy, catalog):
    dep = deploy(gpu="a10", max_model_len=2048)
    found = fixes(catalog, dep, CHAT)
    assert found, "an A10 that cannot serve 50 chat users must have fixes"
    for fix in found:
        again = check(fix.plan.deployment, fix.plan.requirement)
        assert again.verdict == fix.plan.verdict
        assert again.verdict in ("feasible", "marginal")
    # the same model first; within it feasible before marginal, then the answers as asked before
    # quantized or capped ones, then cheapest first
    same = [f for f in found if f.group == "same_model"]
    assert found[: len(same)] == same
    rank = [(f.plan.verdict != "feasible", not f.keeps_quality) for f in same]
    assert rank == sorted(rank)
    for tier in set(rank):
        costs = [f.cost_per_hour for f, r in zip(same, rank, strict=True) if r == tier and f.cost_per_hour is not None]
        assert costs == sorted(costs)
    assert any(f.lever.code == "fix_int4_fp8" and not f.keeps_quality for f in found)
    assert all(f.lever.code == "fix_model" for f in found[len(same) :])


def test_the_worst_failing_limit_binds_and_the_others_are_named(deploy):
    """50 chat users on one A10: TTFT, TPOT, KV cache and throughput all fail. The engine is full, so
    requests wait seconds for a slot and TTFT is the worst (before the admission ceiling was
    modelled, TPOT at an impossible 21 running requests bound instead; the simulator queues)."""
    plan = check(deploy(gpu="a10", max_model_len=2048), CHAT)
    assert plan.queued and not plan.unbounded
    failed = [c for c in plan.checks if c.status == "failed"]
    assert len(failed) >= 2
    assert plan.binding == max(failed, key=lambda c: c.ratio)
    assert [c.ratio for c in plan.failing] == sorted((c.ratio for c in failed), reverse=True)
    sentence = verdict_sentence(plan)
    assert sentence.startswith(f"Not feasible: TTFT (P95 prompt) binds at {plan.binding.ratio:.0%}")
    assert all(f"KV cache ({c.ratio:.0%})" in sentence for c in failed if c.name == "kv_cache")


def test_weights_that_do_not_load_bind_before_everything(deploy):
    """70B bf16 on one A10: the weights fail (the KV check's limit is then 0, its ratio infinite)."""
    plan = check(deploy(model="llama-3.1-70b", gpu="a10", max_model_len=2048), CHAT)
    assert plan.binding.name == "weights"
    assert any(c.name == "kv_cache" and c.ratio == float("inf") for c in plan.failing)


def test_a_presales_case_names_tpot(deploy):
    """Issue 16's case: Qwen2.5-72B INT4 on 2 x L40S, 100 users, 30 s think time, 1500/300 tokens,
    TTFT 1 s, 20 tokens/s per user: TPOT is far over (about 4x), so it binds, not the KV cache."""
    dep = deploy(model="qwen2.5-72b", gpu="l40s", tp=2, weights="int4", max_model_len=1800)
    req = dataclasses.replace(CHAT, users=100, think_time_s=30, prompt_len=1500, answer_len=300, tpot_slo_s=0.05)
    plan = check(dep, req)
    assert plan.binding.name == "tpot" and plan.binding.ratio > 3


def test_a_marginal_case_only_gets_fixes_that_make_it_feasible(deploy, catalog):
    dep = deploy(gpu="a10", max_model_len=2048)
    marginal = next(
        req for users in range(5, 60) if check(dep, req := dataclasses.replace(CHAT, users=users)).verdict == "marginal"
    )
    found = fixes(catalog, dep, marginal)
    assert found and all(f.plan.verdict == "feasible" for f in found)


def test_solvers_return_the_boundary(deploy):
    dep = deploy(gpu="a10", max_model_len=2048)
    n = max_users(dep, CHAT)
    assert n > 0
    assert passes(dep, CHAT, users=n) and not passes(dep, CHAT, users=n + 1)
    length = max_prompt_len(dep, dataclasses.replace(CHAT, users=10))
    assert 0 < length < dep.model.max_context
    engine = dataclasses.replace(dep.engine, max_model_len=length + 301)
    longer = dataclasses.replace(dep, engine=engine)
    assert not passes(longer, CHAT, users=10, prompt_len=length + 1, prompt_len_p95=length + 1)


def test_min_gpus_is_minimal(deploy):
    dep = deploy(gpu="h100-sxm", model="llama-3.1-70b", max_model_len=2048)
    req = Requirement(
        load="users", users=200, think_time_s=30.0, prompt_len=1500, answer_len=300, ttft_slo_s=1.0, tpot_slo_s=0.05
    )
    sizing = min_gpus(dep, req)
    assert sizing is not None and sizing.plan.verdict != "not_feasible"
    assert sizing.num_gpus >= 2  # 70B in BF16 is 141 GB: never one H100
    for tp in (1, 2, 4, 8):  # no layout with fewer GPUs passes
        fewer = dataclasses.replace(dep, parallel=dataclasses.replace(dep.parallel, tp=tp))
        for replicas in range(1, (sizing.num_gpus - 1) // tp + 1):
            assert not passes(fewer, req, replicas=replicas)


def test_vllm_command_for_a_known_config(deploy):
    plan = check(deploy(gpu="a10", kv="fp8", max_model_len=2048), CHAT)
    command = serve_command(plan)
    assert command.command == (
        "vllm serve meta-llama/Llama-3.1-8B --tensor-parallel-size 1 --max-model-len 2048 "
        f"--max-num-seqs {min(plan.estimate.max_num_seqs, plan.estimate.kv.max_concurrency_at_request_len)} "
        "--gpu-memory-utilization 0.92 --kv-cache-dtype fp8"  # the current release's default (0.20+)
    )
    assert command.expected_log[0] == f"GPU KV cache size: {plan.estimate.kv.capacity_tokens:,} tokens"
    assert not command.needs_quantized_checkpoint
    assert serve_command(check(deploy(gpu="a10", weights="int4", max_model_len=2048), CHAT)).needs_quantized_checkpoint
    online = serve_command(check(deploy(gpu="h100-sxm", weights="fp8", max_model_len=2048), CHAT))
    assert "--quantization fp8" in online.command


def test_cost_by_hand(deploy):
    plan = check(deploy(gpu="a100-80gb", max_model_len=2048), CHAT)
    money = cost(plan, 2.0)
    assert money.per_hour == 2.0
    # USD/h / (tokens/s x 3600) x 1e6
    assert money.per_million_output_tokens == pytest.approx(2.0 / (plan.output_tokens_per_s * 3600) * 1e6)
    assert money.per_user_month == pytest.approx(2.0 * 730 / 50)
    with pytest.raises(ValueError, match="price"):
        cost(plan, 0.0)


def test_presets_are_valid_and_distinct():
    presets = load_presets()
    assert set(presets) == {"chat", "batch", "api"}
    assert presets["chat"].ttft_slo_s == pytest.approx(0.2)
    assert presets["batch"].ttft_slo_s is None and presets["batch"].load == "in_flight"
    assert presets["api"].load == "rate"


def test_family_strips_the_size():
    assert family("Qwen2.5-7B-Instruct") == family("Qwen2.5-72B-Instruct") == "qwen2.5"
    assert family("Llama-3.1-8B") == family("Llama-3.1-405B") != family("Llama-3.2-1B")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"users": 0}, "users must be"),
        ({"load": "crowd"}, "load must be"),
        ({"ttft_slo_s": -1.0}, "ttft_slo_s"),
        ({"think_time_s": -5.0}, "think_time_s"),
        ({"rate_per_s": 0.0}, "rate_per_s"),
    ],
)
def test_bad_requirements_name_the_field(change, message):
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(CHAT, **change)


def test_reports_carry_the_verdict_and_escape_html(deploy, catalog):
    dep = deploy(gpu="a10", max_model_len=2048)
    plan = check(dep, CHAT)
    found = fixes(catalog, dep, CHAT)
    data = plan_to_dict(plan, found, serve_command(plan), cost(plan, 1.29))
    markdown = markdown_report(data, plan, found)
    assert verdict_sentence(plan) in markdown and "vllm serve" in markdown
    assert verdict_sentence(plan).startswith("Not feasible: TTFT (P95 prompt) binds")  # a full engine queues
    chinese = markdown_report(plan_to_dict(plan, found, serve_command(plan), None, "zh"), plan, found, "zh")
    assert "不可行" in chinese
    page = html_report(data, plan, found)
    assert page.startswith("<!doctype html>") and "<script" not in page
    rows = list(csv.reader(io.StringIO(csv_report(data))))
    assert rows[0][:3] == ["kind", "name", "status"]
    kinds = [row[0] for row in rows[1:]]
    assert kinds.count("check") == len(plan.checks) and kinds.count("fix") == len(found)
    assert kinds.count("report") == 3 and kinds.count("input") == len(data["inputs"])


def test_reports_carry_every_section_of_the_page(deploy, catalog, monkeypatch):
    """Date (SOURCE_DATE_EPOCH honoured), tool version, restoring link, the inputs in words, the
    operating point, the limits of the setup and the cheapest GPUs, in Markdown, HTML and CSV."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764633600")  # 2025-12-02 00:00 UTC
    dep = deploy(gpu="a10", max_model_len=2048)
    plan = check(dep, CHAT)
    found = fixes(catalog, dep, CHAT)
    options = gpu_options(catalog, dep, CHAT, limit=3)
    solvers = solvers_to_dict(
        max_users(dep, CHAT),
        max_prompt_len(dep, CHAT),
        min_gpus(dep, CHAT),
        options,
        {g.id: g.name for g in catalog.gpus},
    )
    link = "http://localhost:8501/plan?model=llama-3.1-8b&gpu=a10&users=50"
    for lang, words in (("en", "50 users, 30 s think time"), ("zh", "50 个用户，两次请求间思考 30 秒")):
        data = plan_to_dict(plan, found, serve_command(plan), cost(plan, 1.29), lang, solvers=solvers, link=link)
        assert data["report"]["generated_at"] == "2025-12-02 00:00 UTC"
        assert data["report"]["tool_version"] not in ("", None)
        markdown, page = markdown_report(data, plan, found, lang), html_report(data, plan, found, lang)
        for text in (markdown, page):
            assert "2025-12-02 00:00 UTC" in text and data["report"]["tool_version"] in text
            assert words in text and "Llama-3.1-8B (llama-3.1-8b)" in text
            assert message("plan.max_users", lang) in text and message("plan.cheapest", lang) in text
            assert catalog.gpu(options[0].gpu_id).name in text
            assert duration(data["ttft_ms"] * units.MS) in text  # the operating point, as every duration reads
        assert link in markdown and html.escape(link) in page
    assert "gpu_memory_utilization" not in "".join(row["label"] for row in data["inputs"])  # words, not keys
    kinds = [row[0] for row in csv.reader(io.StringIO(csv_report(data)))]
    assert kinds.count("gpu_option") == len(options) and kinds.count("limit") == 3


def test_check_cli_json(cli):
    code, out, _ = cli(
        "check",
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "a10",
        "--users",
        "50",
        "--think-time-s",
        "30",
        "--prompt-len",
        "1500",
        "--answer-len",
        "300",
        "--ttft-slo-ms",
        "1000",
        "--tokens-per-s-per-user",
        "20",
        "--json",
    )
    assert code == 0  # whatever the verdict
    data = json.loads(out)
    # the engine is full (KV cache at 2048 + 300 tokens): requests wait for a slot, so TTFT binds
    assert data["verdict"] == "not_feasible" and data["binding"] == "ttft"
    assert data["failing"][0] == "ttft" and {"kv_cache", "tpot"} <= set(data["failing"])
    assert data["queue"] == "waiting" and data["running_requests"] < data["in_flight_requests"]
    assert data["ttft_ms"] > 1000 and data["ttft_ms"] == pytest.approx(data["queue_wait_ms"], rel=0.1)
    assert 0 < data["in_flight_requests"] < 50  # Little's law, checked exactly in test_users_follow_littles_law
    assert {c["name"] for c in data["checks"]} >= {"weights", "kv_cache", "ttft", "tpot", "throughput"}
    assert all({"headroom_ratio", "status"} <= set(c) for c in data["checks"])
    assert data["fixes"] and all(f["verdict"] in ("feasible", "marginal") for f in data["fixes"])
    assert data["launch"]["command"].startswith("vllm serve meta-llama/Llama-3.1-8B")
    # 50 chat users need more than one A10 (two replicas do it), and one A10 serves fewer than 50
    assert data["solvers"]["min_gpus"]["num_gpus"] == 2
    assert 0 < data["solvers"]["max_load"] < 50


def test_check_cli_text_and_presets(cli):
    code, out, _ = cli("check", "--model", "qwen3-8b", "--gpu", "h100-sxm", "--preset", "api")
    assert code == 0 and "vllm serve" in out
    code, out, _ = cli("check", "--model", "qwen3-8b", "--gpu", "h100-sxm", "--preset", "chat", "--lang", "zh")
    assert code == 0 and "每个副本的在途请求" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--users", "0"], "users must be"),
        (["--users", "5", "--in-flight", "5"], "not allowed with"),
        (["--tokens-per-s-per-user", "-5"], "0 (no limit) or above"),  # 0 turns the limit off, as on the page
        (["--preset", "party"], "invalid choice"),
    ],
)
def test_check_cli_bad_arguments(cli, argv, message):
    code, out, err = cli("check", "--model", "llama-3.1-8b", "--gpu", "a10", *argv)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


def test_a_tpot_bound_low_concurrency_case_is_offered_speculative_decoding(deploy, catalog):
    # TPOT about 38 ms on an A10 (its class's fitted bandwidth efficiency 0.7) against an SLO of
    # 28.6 ms: a Llama-3.2-1B draft at acceptance 0.7 brings it under
    dep = deploy(gpu="a10", max_model_len=1300)
    req = Requirement(load="users", users=2, think_time_s=5.0, prompt_len=1000, answer_len=300, tpot_slo_s=1 / 35)
    assert check(dep, req).binding.name == "tpot"
    found = {f.lever.code: f for f in fixes(catalog, dep, req)}
    spec = found["fix_speculative"].plan
    assert spec.deployment.levers.speculative.draft.id == "llama-3.2-1b"
    assert spec.verdict in ("feasible", "marginal")
    assert check(spec.deployment, req).verdict == spec.verdict


def test_a_long_shared_prompt_is_offered_prefix_caching(deploy, catalog):
    dep = deploy(gpu="a10", max_model_len=2300)
    req = Requirement(
        load="users", users=4, think_time_s=5.0, prompt_len=2000, answer_len=300, ttft_slo_s=0.3, shared_prefix_len=1500
    )
    plan = check(dep, req)
    assert plan.binding.name == "ttft" and plan.verdict == "not_feasible"
    found = {f.lever.code: f for f in fixes(catalog, dep, req)}
    cached = found["fix_prefix"].plan
    assert cached.deployment.levers.prefix.shared_tokens == 1500
    assert next(c for c in cached.checks if c.name == "ttft").ratio < 0.5 * plan.binding.ratio


def test_weights_that_do_not_fit_are_offered_offloading(deploy, catalog):
    dep = deploy(model="llama-3.1-70b", gpu="rtx-4090", weights="int4", max_model_len=1200)
    req = Requirement(load="in_flight", in_flight=1, prompt_len=1000, answer_len=200)
    assert check(dep, req).binding.name == "weights"
    found = {f.lever.code: f for f in fixes(catalog, dep, req)}
    offload = found["fix_offload"]
    assert offload.plan.verdict in ("feasible", "marginal")
    assert offload.plan.deployment.levers.offload.weights_bytes % units.GiB == 0
    assert offload.plan.state.tpot_s > 0.5  # the price, stated in the caveat


def test_the_serve_command_carries_the_levers(deploy, catalog):
    from core.levers.settings import Levers, Lora, Offload, PrefixCaching, Speculative

    levers = Levers(
        speculative=Speculative(draft=catalog.model("llama-3.2-1b"), k=3, acceptance=0.7),
        prefix=PrefixCaching(shared_tokens=512),
        offload=Offload(weights_bytes=2 * units.GiB),
        lora=Lora(adapters=4, rank=8),
    )
    dep = dataclasses.replace(deploy(gpu="a10", max_model_len=2048), levers=levers)
    command = serve_command(check(dep, CHAT)).command
    assert """--speculative-config '{"model": "meta-llama/Llama-3.2-1B", "num_speculative_tokens": 3}'""" in command
    assert "--enable-prefix-caching" in command
    assert "--cpu-offload-gb 2 " in command
    assert "--enable-lora --max-loras 4 --max-lora-rank 8" in command


def test_shared_prefix_len_is_range_checked():
    with pytest.raises(ValueError, match="shared_prefix_len"):
        Requirement(prompt_len=100, shared_prefix_len=200)


@pytest.mark.parametrize(
    ("model", "gpu", "users"),
    [("llama-3.1-8b", "a10", 50), ("llama-3.1-70b", "h100-sxm", 200), ("qwen3-30b-a3b", "l4", 20)],
)
def test_the_cheapest_few_gpus_are_the_head_of_the_full_ranking(deploy, catalog, model, gpu, users):
    from core.planning.solve import gpu_options

    dep = deploy(model=model, gpu=gpu, max_model_len=2048)
    req = dataclasses.replace(CHAT, users=users)
    full = gpu_options(catalog, dep, req)
    for limit in (1, 4, 6):
        head = gpu_options(catalog, dep, req, limit=limit)
        assert [(o.gpu_id, o.cost_per_hour, o.sizing.num_gpus) for o in head] == [
            (o.gpu_id, o.cost_per_hour, o.sizing.num_gpus) for o in full[:limit]
        ]


def test_markdown_bars_mark_the_limit_and_html_status_does_not_wrap(deploy, catalog):
    """A 20-cell bar on a 0-150 % scale: 100 % is after cell 13, where "│" stands; 120 % fills 16
    cells, 50 % fills 7. The Chinese HTML keeps the status on one line."""
    from core.planning.report_formats import _bar

    assert _bar(1.2) == "█" * 13 + "│" + "█" * 3 + "░" * 4
    assert _bar(0.5) == "█" * 7 + "░" * 6 + "│" + "░" * 7
    assert _bar(float("inf")).count("█") == 20
    dep = deploy(gpu="a10", max_model_len=2048)
    plan = check(dep, CHAT)
    found = fixes(catalog, dep, CHAT)
    data = plan_to_dict(plan, found, serve_command(plan), None, "zh")
    page = html_report(data, plan, found, "zh")
    assert page.count("<td style='white-space:nowrap'>") == len(plan.checks)
    assert "竖线处为 100%" in markdown_report(data, plan, found, "zh")


def test_the_report_carries_the_best_deployment_when_it_was_searched(deploy, catalog):
    """The front of the Best deployment section, as the page drew it, in every format; a GPU with
    no catalog price reads so, never None."""
    from core.planning.pareto import search_to_dict
    from core.planning.search import search
    from core.planning.shapes import SearchSpace

    dep = deploy(gpu="a10", max_model_len=2048)
    plan = check(dep, CHAT)
    space = SearchSpace(gpus=("a10", "l4"), tensor_parallel=(1, 2), pipeline_parallel=(1,), max_gpus=8)
    found = search_to_dict(search(catalog, dep, CHAT, space), space.modes)
    data = plan_to_dict(plan, [], serve_command(plan), None, search=found)
    markdown = markdown_report(data, plan, [])
    assert (
        message("report.best_title", "en") in markdown and f"{found['candidates_evaluated']:,} candidates" in markdown
    )
    first = found["pareto"][0]
    assert f"| {first['gpu']} | {first['num_gpus']} |" in markdown
    assert "None" not in markdown and "None" not in html_report(data, plan, [])
    kinds = [row[0] for row in csv.reader(io.StringIO(csv_report(data)))]
    assert kinds.count("pareto") == len(found["pareto"])
