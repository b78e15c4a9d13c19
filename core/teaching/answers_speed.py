"""Answers of the speed exercises: batch against latency and throughput with the knee where decode
turns compute-bound, and tensor parallelism. Numbers from :func:`core.estimate.result.estimate`
and :func:`core.estimate.sweep.sweep` for the exercise's scenario."""

from __future__ import annotations

import dataclasses

import numpy as np

from core.estimate.result import estimate
from core.estimate.sweep import sweep
from core.spec.catalog import Catalog
from core.teaching.exercises import Exercise
from core.teaching.text import Answer, Table, Text, count, duration, gib, rate, ratio, share, text

MAX_BATCH = 1024
"""Largest batch searched for the knee (the sidebar's batch range)."""


def decode_knee(dep, work) -> tuple[int | None, int]:
    """(the smallest batch whose decode step is compute-bound, or None within the limit; the limit:
    the most requests the engine runs at once, max_num_seqs x dp and what the KV cache holds)."""
    grid = sweep(dep, np.arange(1, MAX_BATCH + 1), [work.input_len], work.output_len)
    limit = int(min(grid.max_concurrency[0], dep.batch_limits[1] * dep.parallel.dp, MAX_BATCH))
    compute = np.flatnonzero(grid.decode_bound[0, :limit] == "compute")
    return (int(grid.batches[compute[0]]) if compute.size else None), limit


def knee(ex: Exercise, catalog: Catalog) -> Answer:
    """TPOT and throughput at a few batch sizes, the knee and the engine's limit."""
    dep, work = ex.scenario.build(catalog)
    found, limit = decode_knee(dep, work)
    batches = {b for b in ex.settings["batches"] if b <= limit} | {limit}
    if found is not None:
        batches |= {found} | ({2 * found} if 2 * found <= limit else set())
    results = {b: estimate(dep, dataclasses.replace(work, batch=b)) for b in sorted(batches)}
    rows = tuple(
        (
            str(b),
            duration(r.latency.tpot_s),
            rate(r.throughput.output_tokens_per_s),
            text(f"bound.{r.bound_decode}"),
        )
        for b, r in results.items()
    )
    columns = tuple(text(f"workshop.col_{name}") for name in ("batch", "tpot", "throughput", "bound"))
    one = results[min(results)]
    values = {
        "knee": found,
        "limit": limit,
        "max_num_seqs": dep.batch_limits[1],
        "max_concurrency": one.kv.max_concurrency_at_request_len,
        "points": {b: (r.latency.tpot_s, r.throughput.output_tokens_per_s, r.bound_decode) for b, r in results.items()},
    }
    steps: list = [Table(columns, rows)]
    if found is None:
        steps.append(text("workshop.knee_flat", **_gain(results, limit)))
    else:
        steps.append(text("workshop.knee_gain", weights=gib(one.memory.weights), **_gain(results, found)))
        steps += _past_knee(results, found)
    steps.append(
        text(
            "workshop.knee_limit",
            max_seqs=count(dep.batch_limits[1]),
            concurrency=count(one.kv.max_concurrency_at_request_len),
            limit=count(limit),
        )
    )
    return Answer(ex.id, tuple(steps), values)


def _gain(results: dict, last: int) -> dict[str, str]:
    """From the smallest batch shown to ``last``: TPOT's growth, and throughput's as the batch's
    growth over E2E's. Throughput here is batch x output / E2E, and E2E holds the whole batch's
    prefill (the requests arrive together), so it grows less than the batch over TPOT's growth
    (the ``naive_ratio`` a student computes from the table)."""
    first = min(results)
    one, top = results[first], results[last]
    tpot_growth = top.latency.tpot_s / one.latency.tpot_s
    return {
        "first": str(first),
        "knee": str(last),
        "growth": f"{last / first:,.4g}",
        "tpot_ratio": ratio(tpot_growth, 2),
        "naive_ratio": ratio(last / first / tpot_growth),
        "tput_ratio": ratio(top.throughput.output_tokens_per_s / one.throughput.output_tokens_per_s),
        "ttft_one": duration(one.latency.ttft_s),
        "ttft_last": duration(top.latency.ttft_s),
        "e2e_one": duration(one.latency.e2e_s),
        "e2e_last": duration(top.latency.e2e_s),
        "e2e_ratio": ratio(top.latency.e2e_s / one.latency.e2e_s, 2),
    }


def _past_knee(results: dict, found: int) -> list[Text]:
    """What going past the knee to the largest batch shown costs (nothing when the knee is it)."""
    after = max(results)
    if after == found:
        return []
    at, past = results[found], results[after]
    return [
        text(
            "workshop.knee_beyond",
            knee=found,
            after=after,
            batch_growth=ratio(after / found, 2),
            tpot_growth=ratio(past.latency.tpot_s / at.latency.tpot_s, 2),
            e2e_growth=ratio(past.latency.e2e_s / at.latency.e2e_s, 2),
            tput_growth=ratio(past.throughput.output_tokens_per_s / at.throughput.output_tokens_per_s, 2),
        )
    ]


def tensor_parallel(ex: Exercise, catalog: Catalog) -> Answer:
    """The same model and workload over each GPU count: per-GPU weights and KV, the ceiling, TPOT
    with its all-reduce time, throughput."""
    dep, work = ex.scenario.build(catalog)
    results = {tp: estimate(dep.with_tp(tp), work) for tp in ex.settings["tp"]}
    rows = []
    for tp, r in results.items():
        tput = r.throughput.output_tokens_per_s
        rows.append(
            (
                str(tp),
                gib(r.memory.weights),
                gib(r.memory.kv_budget),
                count(r.kv.max_concurrency_at_request_len),
                duration(r.latency.tpot_s),
                duration(float(r.latency.decode.comm_s)),
                rate(tput),
                rate(tput / tp),
            )
        )
    names = ("gpus", "weights", "kv_budget", "concurrency", "tpot", "allreduce", "throughput", "per_gpu")
    first, last = results[min(results)], results[max(results)]
    n = max(results) // min(results)
    comm = float(last.latency.decode.comm_s)
    values = {
        tp: {
            "weights": r.memory.weights,
            "kv_budget": r.memory.kv_budget,
            "kv_bytes_per_token": r.kv.bytes_per_token,
            "max_concurrency": r.kv.max_concurrency_at_request_len,
            "tpot_s": r.latency.tpot_s,
            "allreduce_s": float(r.latency.decode.comm_s),
            "output_tokens_per_s": r.throughput.output_tokens_per_s,
        }
        for tp, r in results.items()
    }
    steps = (
        Table(tuple(text(f"workshop.col_{name}") for name in names), tuple(rows)),
        text(
            "workshop.tensor_parallel_memory",
            weights_first=gib(first.memory.weights),
            weights_last=gib(last.memory.weights),
            budget_first=gib(first.memory.kv_budget),
            budget_last=gib(last.memory.kv_budget),
            kv_first=count(first.kv.bytes_per_token),
            kv_last=count(last.kv.bytes_per_token),
            concurrency_first=count(first.kv.max_concurrency_at_request_len),
            concurrency_last=count(last.kv.max_concurrency_at_request_len),
        ),
        text(
            "workshop.tensor_parallel_speed",
            tpot_first=duration(first.latency.tpot_s),
            tpot_last=duration(last.latency.tpot_s),
            speedup=ratio(first.latency.tpot_s / last.latency.tpot_s),
            gpus=n,
            allreduces=dep.model.num_sublayers + 1,
            comm=duration(comm),
            tp=max(results),
            comm_share=share(comm / last.latency.tpot_s),
        ),
        text(
            "workshop.tensor_parallel_cost",
            per_gpu_first=rate(first.throughput.output_tokens_per_s / min(results)),
            per_gpu_last=rate(last.throughput.output_tokens_per_s / max(results)),
            batch=work.batch,
            tp=max(results),
        ),
    )
    return Answer(ex.id, steps, values)
