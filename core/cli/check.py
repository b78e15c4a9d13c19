"""``python -m core check``: the requirement check from the command line.

Exit status 0 whatever the verdict (the verdict is in the output); 2 only for bad arguments.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math

from core.cli.args import UsageError, deployment_from_args, energy_inputs_from_args, heading
from core.planning.check import check
from core.planning.cost import cost
from core.planning.fixes import fixes
from core.planning.launch import serve_command
from core.planning.presets import load_presets
from core.planning.report import format_plan, plan_to_dict, solvers_to_dict
from core.planning.requirement import DEFAULT_TPOT_SLO_S, DEFAULT_TTFT_SLO_S, Requirement
from core.planning.solve import gpu_options, max_prompt_len, max_users, min_gpus
from core.spec import units
from core.spec.catalog import load_catalog
from core.timing.aic_backend import step_time_backend

CHEAPEST_SHOWN = 5  # catalog GPUs listed under "cheapest_gpus"


def add_requirement_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--preset", choices=sorted(load_presets()), help="start from a scenario preset")
    load = parser.add_mutually_exclusive_group()
    load.add_argument("--users", type=int, help="concurrent users, each thinking between requests")
    load.add_argument("--in-flight", type=int, help="requests generating at once")
    load.add_argument("--request-rate", type=float, help="requests per second arriving")
    parser.add_argument("--think-time-s", type=float, help="seconds a user reads and types (default 30)")
    parser.add_argument("--prompt-len", type=int, help="typical prompt tokens (default 1500)")
    parser.add_argument("--answer-len", type=int, help="typical answer tokens (default 300)")
    parser.add_argument("--prompt-len-p95", type=int, help="P95 prompt tokens (default: typical)")
    parser.add_argument("--answer-len-p95", type=int, help="P95 answer tokens (default: typical)")
    parser.add_argument(
        "--ttft-slo-ms",
        type=float,
        help=f"P95 time to first token limit (default {DEFAULT_TTFT_SLO_S / units.MS:g}, as the Plan page; 0: none)",
    )
    slo = parser.add_mutually_exclusive_group()
    slo.add_argument(
        "--tpot-slo-ms",
        type=float,
        help=f"time per output token limit (default {DEFAULT_TPOT_SLO_S / units.MS:g}, as the Plan page; 0: none)",
    )
    slo.add_argument(
        "--tokens-per-s-per-user",
        type=float,
        help=f"streaming speed each user needs (default {1 / DEFAULT_TPOT_SLO_S:g}; 0: none)",
    )
    parser.add_argument("--replicas", type=int, help="replicas sharing the load (default 1)")
    parser.add_argument(
        "--shared-prefix-len",
        type=int,
        help="prompt tokens every request shares (default 0); see --prefix-cache-tokens",
    )
    parser.add_argument("--price-per-gpu-hour", type=float, help="USD; default: the catalog's price")


def requirement_from_args(args: argparse.Namespace) -> Requirement:
    """The requirement the flags describe: a preset's, else the Plan page's defaults (the same SLOs);
    an SLO of 0 turns it off."""
    default = Requirement(ttft_slo_s=DEFAULT_TTFT_SLO_S, tpot_slo_s=DEFAULT_TPOT_SLO_S)
    req = load_presets()[args.preset] if args.preset else default
    changes: dict = {}
    for flag, field in (("users", "users"), ("in_flight", "in_flight"), ("request_rate", "rate_per_s")):
        if getattr(args, flag) is not None:
            changes |= {"load": "rate" if flag == "request_rate" else flag, field: getattr(args, flag)}
    for field in (
        "think_time_s",
        "prompt_len",
        "answer_len",
        "prompt_len_p95",
        "answer_len_p95",
        "replicas",
        "shared_prefix_len",
    ):
        if getattr(args, field) is not None:
            changes[field] = getattr(args, field)
    if args.ttft_slo_ms is not None:
        changes["ttft_slo_s"] = args.ttft_slo_ms * units.MS if args.ttft_slo_ms != 0 else None
    if args.tpot_slo_ms is not None:
        changes["tpot_slo_s"] = args.tpot_slo_ms * units.MS if args.tpot_slo_ms != 0 else None
    if args.tokens_per_s_per_user is not None:
        if args.tokens_per_s_per_user < 0 or not math.isfinite(args.tokens_per_s_per_user):
            raise UsageError("--tokens-per-s-per-user must be 0 (no limit) or above")
        changes["tpot_slo_s"] = 1 / args.tokens_per_s_per_user if args.tokens_per_s_per_user else None
    return dataclasses.replace(req, **changes)


def run_check(args: argparse.Namespace) -> str:
    catalog = load_catalog()
    req = requirement_from_args(args)
    dep, match = deployment_from_args(args, catalog, req.longest_request)
    price = args.price_per_gpu_hour if args.price_per_gpu_hour is not None else dep.gpu.price_per_hour
    if price is not None:
        dep = dataclasses.replace(dep, gpu=dataclasses.replace(dep.gpu, price_per_hour=price))
    plan = check(dep, req)
    options = gpu_options(catalog, dep, req, limit=CHEAPEST_SHOWN + 1)
    found = fixes(catalog, dep, req, options) if plan.verdict != "feasible" else []
    solvers = solvers_to_dict(
        max_users(dep, req),
        max_prompt_len(dep, req),
        min_gpus(dep, req),
        options[:CHEAPEST_SHOWN],
        {g.id: g.name for g in catalog.gpus},
    )
    money = cost(plan, price) if price else None
    energy = energy_inputs_from_args(args)
    data = plan_to_dict(plan, found, serve_command(plan), money, args.lang, solvers=solvers, energy=energy)
    data["model_match"] = match.as_dict(dep.weights.name)
    data["step_time_backend"] = step_time_backend(dep)
    if args.json:
        return json.dumps(data, indent=2, ensure_ascii=False)
    backend = f"step time backend: {data['step_time_backend']}\n"
    return heading(args, match, dep.weights.name, dep.gpu) + backend + format_plan(data, plan, found, args.lang)
