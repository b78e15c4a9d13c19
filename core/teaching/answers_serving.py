"""Answers of the serving exercises: why single-request numbers over-promise capacity (the memory
ceiling, long-tail lengths, and queueing past the ceiling, simulated with :mod:`core.serving`),
and the tuning order of the chapters applied to a scenario (:mod:`core.estimate.advice`)."""

from __future__ import annotations

import dataclasses

from core.estimate.advice import fit_suggestions
from core.estimate.result import estimate
from core.serving.load_sweep import keeps_up, predicted_rates, summarize
from core.serving.simulate import simulate
from core.serving.traffic import Lengths, Traffic
from core.spec.catalog import Catalog
from core.spec.deployment import Workload
from core.teaching.exercises import Exercise
from core.teaching.text import Answer, Table, Text, count, duration, gib, rate, ratio, share, text

RATE_DIGITS = 2
"""Offered rates are rounded to what the Load test page's input shows [requests/s]."""


def offered_rate(static_rate: float, load: float) -> float:
    """A share of the static prediction as the rate simulated and put in the Load test link [requests/s]."""
    return max(round(static_rate * load, RATE_DIGITS), 10**-RATE_DIGITS)


def traffic_lengths(ex: Exercise) -> tuple[Lengths, Lengths]:
    """Log-normal prompt and answer lengths with the scenario's means."""
    spread = float(ex.settings["spread"])
    scenario = ex.scenario
    return (
        Lengths(mean=scenario.input_len, distribution="lognormal", spread=spread),
        Lengths(mean=scenario.output_len, distribution="lognormal", spread=spread),
    )


def load_test_inputs(ex: Exercise, static_rate: float) -> dict[str, int | float | str]:
    """The Load test page's inputs (by their keys, which are also their URL parameters) that rerun
    the exercise's simulation at its link load."""
    return {
        "lt_rate": offered_rate(static_rate, ex.settings["link_load"]),
        "lt_count": int(ex.settings["requests"]),
        "lt_prompt": ex.scenario.input_len,
        "lt_answer": ex.scenario.output_len,
        "lt_dist": "lognormal",
        "lt_spread": float(ex.settings["spread"]),
        "lt_seed": int(ex.settings["seed"]),
    }


def pitfall(ex: Exercise, catalog: Catalog) -> Answer:
    """Single request, the ceiling at the typical length, a long-tail request, and simulated queues
    at shares of the static prediction."""
    dep, work = ex.scenario.build(catalog)
    single = estimate(dep, work)
    ceiling = max(min(single.kv.max_concurrency_at_request_len, single.max_running), 1)
    full = estimate(dep, dataclasses.replace(work, batch=ceiling))
    static, naive = predicted_rates(dep, work.input_len, work.output_len)  # naive: every slot at one request's speed
    factor = int(ex.settings["tail_factor"])
    tail_len = min(work.request_len * factor, dep.max_model_len)
    tail = estimate(dep, Workload(input_len=max(tail_len - work.output_len, 1), output_len=work.output_len))
    prompts, answers = traffic_lengths(ex)
    runs = []
    for load in ex.settings["loads"]:
        offered = offered_rate(static, load)
        result = simulate(
            dep,
            Traffic(mode="rate", rate_per_s=offered),
            ex.settings["requests"],
            prompts,
            answers,
            ex.settings["seed"],
        )
        runs.append((load, offered, summarize(result), keeps_up(result)))
    rows = tuple(
        (
            share(load),
            f"{offered:.{RATE_DIGITS}f}",
            duration(stats["ttft"]["p50"]),
            duration(stats["ttft"]["p99"]),
            duration(stats["tpot"]["p50"]),
            text("workshop.queue_steady" if steady else "workshop.queue_grows"),
        )
        for load, offered, stats, steady in runs
    )
    names = ("load", "offered", "ttft_p50", "ttft_p99", "tpot_p50", "queue")
    low, high = runs[0], runs[-1]
    growing = [load for load, _, _, steady in runs if not steady]
    values = {
        "ttft_s": single.latency.ttft_s,
        "tpot_s": single.latency.tpot_s,
        "ceiling": ceiling,
        "ceiling_tpot_s": full.latency.tpot_s,
        "static_rate": static,
        "naive_rate": naive,
        "tail_len": tail_len,
        "tail_ceiling": tail.kv.max_concurrency_at_request_len,
        "runs": [
            {
                "load": load,
                "rate": offered,
                "ttft_p50_s": s["ttft"]["p50"],
                "ttft_p99_s": s["ttft"]["p99"],
                "steady": ok,
            }
            for load, offered, s, ok in runs
        ],
    }
    steps = (
        text(
            "workshop.pitfall_single",
            ttft=duration(single.latency.ttft_s),
            tpot=duration(single.latency.tpot_s),
            stream=rate(1 / single.latency.tpot_s),
        ),
        text(
            "workshop.pitfall_ceiling",
            ceiling=count(ceiling),
            tokens=count(work.request_len),
            tpot_single=duration(single.latency.tpot_s),
            answer=count(work.output_len),
            naive=f"{naive:.2f}",
            tpot=duration(full.latency.tpot_s),
            slowdown=ratio(full.latency.tpot_s / single.latency.tpot_s),
            static=f"{static:.2f}",
            static_tokens=rate(static * work.output_len),
        ),
        text(
            "workshop.pitfall_tail",
            factor=factor,
            tail=count(tail_len),
            tail_kv=gib(tail.kv.bytes_per_request, 3),
            kv=gib(single.kv.bytes_per_request, 3),
            tail_ceiling=count(tail.kv.max_concurrency_at_request_len),
        ),
        Table(tuple(text(f"workshop.col_{name}") for name in names), rows),
        text(
            "workshop.pitfall_avalanche",
            requests=ex.settings["requests"],
            spread=ex.settings["spread"],
            low=share(low[0]),
            low_p50=duration(low[2]["ttft"]["p50"]),
            low_p99=duration(low[2]["ttft"]["p99"]),
            high=share(high[0]),
            high_p50=duration(high[2]["ttft"]["p50"]),
            high_p99=duration(high[2]["ttft"]["p99"]),
        ),
    )
    if growing and min(growing) < 1:
        steps += (text("workshop.pitfall_early", first=share(min(growing))),)
    return Answer(ex.id, steps, values)


def tuning(ex: Exercise, catalog: Catalog) -> Answer:
    """The chapters' order on the scenario: baseline, the binding constraint, the changes along it
    (the tool's fixes with what each gives), then the advanced levers."""
    dep, work = ex.scenario.build(catalog)
    r = estimate(dep, work)
    mem, kv = r.memory, r.kv
    steps: list = [
        text(
            "workshop.tuning_baseline",
            batch=work.batch,
            ttft=duration(r.burst.median_s),  # the Explorer's headline: the burst's median as V1 admits it
            tpot=duration(r.latency.tpot_s),
            rate=rate(r.throughput.output_tokens_per_s),
            weights=gib(mem.weights),
            budget=gib(mem.kv_budget),
            concurrency=count(kv.max_concurrency_at_request_len),
            tokens=count(work.request_len),
        )
    ]
    memory_bound = not (r.fits and r.engine_starts)
    if memory_bound:
        steps.append(
            text(
                "workshop.tuning_memory",
                batch=work.batch,
                need=gib(mem.kv_in_use),
                budget=gib(mem.kv_budget),
                running=r.running_batch,
                ttft=duration(r.burst.median_s),
                last=duration(r.burst.last_s),
                preemptions=count(r.burst.preemptions),
            )
        )
    else:
        steps.append(
            text("workshop.tuning_fits", batch=work.batch, concurrency=count(kv.max_concurrency_at_request_len))
        )
    steps.append(text("workshop.tuning_order"))
    fixes = fit_suggestions(dep, work, r) if memory_bound else []
    if fixes:
        steps.append(text("workshop.tuning_table"))
        rows = tuple(
            (
                Text(f"notice.{s.notice.code}", s.notice.params),
                count(s.result.kv.max_concurrency_at_request_len),
                duration(s.result.burst.median_s),
                duration(s.result.latency.tpot_s),
                rate(s.result.throughput.output_tokens_per_s),
            )
            for s in fixes
        )
        names = ("change", "concurrency", "ttft_median", "tpot", "throughput")
        steps.append(Table(tuple(text(f"workshop.col_{name}") for name in names), rows))
    steps.append(text("workshop.tuning_advanced"))
    values = {
        "ttft_s": r.burst.median_s,
        "ttft_last_s": r.burst.last_s,
        "tpot_s": r.latency.tpot_s,
        "output_tokens_per_s": r.throughput.output_tokens_per_s,
        "max_concurrency": kv.max_concurrency_at_request_len,
        "memory_bound": memory_bound,
        "fixes": [(s.notice.code, s.result.kv.max_concurrency_at_request_len, s.result.latency.tpot_s) for s in fixes],
    }
    return Answer(ex.id, tuple(steps), values)
