"""Command-line interface: ``python -m core list | estimate | check | simulate | search | validate |
benchmark | readback``.

Human-readable by default, one JSON object with ``--json``. Bad arguments exit with status 2 and a
one-line message on stderr; a configuration that does not fit is an answer (``fits: false``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from core.cli.args import (
    UsageError,
    deployment_arguments,
    deployment_from_args,
    energy_arguments,
    energy_inputs_from_args,
    heading,
)
from core.cli.benchcheck import add_benchmark_arguments, run_benchmark, run_readback
from core.cli.check import add_requirement_arguments, run_check
from core.cli.deploy import add_deploy_parser, run_deploy
from core.cli.search import add_search_arguments, run_search
from core.cli.simulate import add_simulate_arguments, run_simulate
from core.cli.validate import add_validate_arguments, run_validate
from core.energy.report import gpu_power_dict
from core.estimate.report import estimate_to_dict, format_estimate, gpu_to_dict, model_to_dict
from core.estimate.whatif import what_if
from core.estimate.whatif_report import format_whatif, whatif_to_dict
from core.levers.prefix import prefix_error
from core.spec.catalog import CatalogError, load_catalog
from core.spec.deployment import Workload

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line instead of usage + message
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m core", description="LLM inference tradeoff estimates")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    lister = sub.add_parser("list", help="list catalog models or GPUs")
    lister.add_argument("what", choices=("models", "gpus"))
    lister.add_argument("--json", action="store_true", help="print JSON")

    est = sub.add_parser("estimate", help="memory, concurrency, latency and throughput of one setup")
    deployment_arguments(est, max_model_len_default="--input-len + --output-len, rounded up to a power of two")
    est.add_argument("--input-len", type=int, default=1024, help="prompt tokens per request (default 1024)")
    est.add_argument("--output-len", type=int, default=256, help="answer tokens per request (default 256)")
    est.add_argument("--batch", type=int, default=1, help="concurrent requests (default 1)")
    est.add_argument("--json", action="store_true", help="print one JSON object")
    energy_arguments(est)

    chk = sub.add_parser("check", help="can this setup serve a load within SLOs: verdict, binding limit, fixes")
    deployment_arguments(chk, max_model_len_default="the P95 prompt + P95 answer, rounded up to a power of two")
    add_requirement_arguments(chk)
    chk.add_argument("--lang", choices=("en", "zh"), default="en", help="language of the text (default en)")
    chk.add_argument("--json", action="store_true", help="print one JSON object")
    energy_arguments(chk)

    sim = sub.add_parser("simulate", help="simulate continuous batching under traffic: latency percentiles")
    deployment_arguments(
        sim,
        max_model_len_default="the longest prompt + the longest answer, rounded up to a power of two "
        "(the model's context for log-normal lengths)",
    )
    add_simulate_arguments(sim)

    found = sub.add_parser("search", help="the best deployment for a load: GPU types, layouts, formats, modes")
    add_search_arguments(found)

    val = sub.add_parser("validate", help="predicted against measured over the public validation set")
    add_validate_arguments(val)
    add_benchmark_arguments(sub)  # benchmark, readback
    add_deploy_parser(sub)
    return parser


def _estimate(args: argparse.Namespace) -> str:
    deployment, match = deployment_from_args(args, load_catalog(), args.input_len + args.output_len)
    workload = Workload(input_len=args.input_len, output_len=args.output_len, batch=args.batch)
    if problem := prefix_error(deployment.levers.prefix, workload.input_len):
        raise UsageError(f"--prefix-cache-tokens: {problem}")
    effects = what_if(deployment, workload)
    model_match = match.as_dict(deployment.weights.name)
    if args.json:
        data = estimate_to_dict(effects.result, energy_inputs_from_args(args)) | {
            "model_match": model_match,
            "levers": whatif_to_dict(effects),
        }
        return json.dumps(data, indent=2)
    return (
        heading(args, match, deployment.weights.name, deployment.gpu)
        + format_estimate(effects.result, energy_inputs_from_args(args))
        + format_whatif(effects)
    )


def _list(args: argparse.Namespace) -> str:
    catalog = load_catalog()
    if args.what == "models":
        rows = [model_to_dict(m) for m in catalog.models]
        if args.json:
            return json.dumps(rows, indent=2)
        width = max(len(r["id"]) for r in rows)
        return "\n".join(
            f"{r['id']:{width}} {r['attention']:4} {r['params_total_b']:8.2f}B total"
            f" {r['params_active_b']:7.2f}B active"
            f"  ctx {r['max_context']:>7}  {r['hf_id']}"
            for r in rows
        )
    rows = [gpu_to_dict(g) | gpu_power_dict(g) for g in catalog.gpus]
    if args.json:
        return json.dumps(rows, indent=2)
    width = max(len(r["id"]) for r in rows)
    return "\n".join(
        f"{r['id']:{width}} {r['memory_gib']:7.1f} GiB {r['memory_bandwidth_gb_s']:7.0f} GB/s "
        f"{r['tensor_tflops_dense'].get('bf16', r['tensor_tflops_dense'].get('fp16')):7.1f} TFLOPS 16-bit  "
        f"{r['interconnect']:15}  {r['name']}"
        for r in rows
    )


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        commands = {
            "list": _list,
            "estimate": _estimate,
            "check": run_check,
            "simulate": run_simulate,
            "search": run_search,
            "validate": run_validate,
            "benchmark": run_benchmark,
            "readback": run_readback,
            "deploy": run_deploy,
        }
        output = commands[args.command](args)
    except (UsageError, CatalogError, ValueError, OSError) as err:  # OSError: a file the system would not give
        print(f"error: {err}", file=sys.stderr)
        return EXIT_USAGE
    try:
        print(output)
    except BrokenPipeError:  # the reader (e.g. `head`) closed the pipe: not an error of ours
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - stays open until exit, so flushing succeeds
    return 0
