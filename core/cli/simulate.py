"""``python -m core simulate``: serve simulated traffic on one replica and report latency percentiles."""

from __future__ import annotations

import argparse
import json
import sys
import time

from core.cli.args import deployment_from_args, heading
from core.messages import duration, message
from core.planning.requirement import DEFAULT_TPOT_SLO_S, DEFAULT_TTFT_SLO_S
from core.serving.load_sweep import summarize
from core.serving.simulate import simulate
from core.serving.traffic import (
    LENGTH_DISTRIBUTIONS,
    MAX_CSV_BYTES,
    Lengths,
    Traffic,
    longest_request,
    read_lengths_csv,
)
from core.spec import units
from core.spec.catalog import load_catalog
from core.spec.local_file import read_local_file
from core.timing.aic_backend import step_time_backend


def add_simulate_arguments(parser: argparse.ArgumentParser) -> None:
    load = parser.add_mutually_exclusive_group(required=True)
    load.add_argument("--request-rate", type=float, help="open loop: requests per second (Poisson)")
    load.add_argument("--concurrency", type=int, help="closed loop: clients each sending the next request at once")
    load.add_argument("--users", type=int, help="closed loop: users who think between requests")
    parser.add_argument("--think-time-s", type=float, default=30.0, help="mean think time with --users (default 30)")
    parser.add_argument("--burstiness", type=float, default=1.0, help="inter-arrival CV: 1 Poisson, >1 bursty")
    parser.add_argument("--num-requests", type=int, default=1000, help="requests to serve (default 1000)")
    parser.add_argument("--input-len", type=int, default=1000, help="mean prompt tokens (default 1000)")
    parser.add_argument("--output-len", type=int, default=200, help="mean answer tokens (default 200)")
    parser.add_argument("--length-dist", choices=LENGTH_DISTRIBUTIONS, default="fixed")
    parser.add_argument(
        "--length-spread", type=float, default=0.5, help="uniform: half-width / mean; lognormal: sigma (default 0.5)"
    )
    parser.add_argument("--lengths-csv", help="CSV of (prompt, answer) token counts, used instead of the lengths")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--ttft-slo-ms",
        type=float,
        default=DEFAULT_TTFT_SLO_S / units.MS,
        help="for goodput (default %(default)g, as the Load test page; 0: none)",
    )
    parser.add_argument(
        "--tpot-slo-ms",
        type=float,
        default=DEFAULT_TPOT_SLO_S / units.MS,
        help="for goodput (default %(default)g; 0: none)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run_simulate(args: argparse.Namespace) -> str:
    if args.request_rate is not None:
        traffic = Traffic(mode="rate", rate_per_s=args.request_rate, burstiness=args.burstiness)
    elif args.concurrency is not None:
        traffic = Traffic(mode="concurrency", concurrency=args.concurrency)
    else:
        traffic = Traffic(mode="users", users=args.users, think_time_s=args.think_time_s)
    if args.lengths_csv:
        prompts, answers = read_lengths_csv(read_local_file(args.lengths_csv, "--lengths-csv", MAX_CSV_BYTES))
    else:
        prompts = Lengths(mean=args.input_len, distribution=args.length_dist, spread=args.length_spread)
        answers = Lengths(mean=args.output_len, distribution=args.length_dist, spread=args.length_spread)
    dep, match = deployment_from_args(args, load_catalog(), longest_request(prompts, answers))
    start = time.perf_counter()
    result = simulate(dep, traffic, args.num_requests, prompts, answers, args.seed)
    elapsed = time.perf_counter() - start
    ttft_slo = args.ttft_slo_ms * units.MS if args.ttft_slo_ms else None
    tpot_slo = args.tpot_slo_ms * units.MS if args.tpot_slo_ms else None
    stats = summarize(result)
    data = {
        **{f"{name}_ms": {k: round(v / units.MS, 3) for k, v in values.items()} for name, values in stats.items()},
        "output_tokens_per_s": round(result.output_tokens_per_s, 2),
        "request_throughput_per_s": round(result.request_throughput_per_s, 4),
        "preemptions": result.preemptions,
        "goodput": None if ttft_slo is None and tpot_slo is None else round(result.goodput(ttft_slo, tpot_slo), 4),
        "num_requests": args.num_requests,
        "duration_s": round(result.duration_s, 3),
        "engine_steps": result.steps,
        "simulation_seconds": round(elapsed, 3),
        "model_match": match.as_dict(dep.weights.name),
        "step_time_backend": step_time_backend(dep),
    }
    if args.json:
        return json.dumps(data, indent=2)
    lines = [heading(args, match, dep.weights.name, dep.gpu).rstrip("\n")]
    lines += [f"{args.num_requests} requests in {data['duration_s']:,.1f} s simulated"]
    lines += [f"step time backend: {data['step_time_backend']}"]
    if dep.parallel.dp > 1:
        ranks = dep.parallel.dp
        lines.append(message("sim_dp.one_rank", "en", ranks=ranks, requests=-(-args.num_requests // ranks)))
    # how long it took differs between runs: on stderr, so the answer on stdout is the same bytes each time
    print(f"({elapsed:.2f} s to compute)", file=sys.stderr)
    for name, values in stats.items():
        cells = "  ".join(f"{stat} {duration(values[stat]):>9}" for stat in ("mean", "p50", "p90", "p99"))
        lines.append(f"  {name.upper():5} {cells}")
    goodput = "goodput: no SLO set" if data["goodput"] is None else f"goodput {data['goodput']:.1%}"
    lines.append(
        f"  {data['output_tokens_per_s']:,.0f} output tokens/s, {data['request_throughput_per_s']:.3f} "
        f"requests/s, {data['preemptions']} preemptions, {goodput}"
    )
    return "\n".join(lines)
