"""``python -m core benchmark`` and ``python -m core readback``: the benchmark that checks a plan, and its
result read back against the prediction (:mod:`core.benchcheck`).

``benchmark`` takes check's arguments (deployment and requirement) and prints each tool's command with
what the simulator predicts that benchmark will measure, and the band the validation supports.
``readback FILE`` reads a result file and prints predicted against measured at the run's own load;
``--calibrate`` fits the efficiencies to it and re-plans the requirement with them.
"""

from __future__ import annotations

import argparse
import dataclasses
import json

from core.benchcheck.commands import DATASETS, MAX_PROMPTS, TOOLS, bench_check, note_text
from core.benchcheck.compare import Comparison, RunError, calibrate_run, compare
from core.benchcheck.result_files import MAX_FILE_BYTES, BenchFileError, MeasuredRun, read_result
from core.cli.args import UsageError, deployment_arguments, deployment_from_args, heading
from core.cli.check import add_requirement_arguments, requirement_from_args
from core.planning.check import check
from core.spec.catalog import load_catalog
from core.spec.local_file import read_local_file
from core.timing.kernel_speed import kernel_speed
from core.validation.calibrate import CalibrationError

NAMES = {
    "ttft_ms": "median TTFT [ms]",
    "ttft_p99_ms": "P99 TTFT [ms]",
    "tpot_ms": "median TPOT [ms]",
    "itl_ms": "median ITL [ms]",
    "output_tokens_per_s": "output tokens/s",
}


def add_benchmark_arguments(sub) -> None:
    bench = sub.add_parser("benchmark", help="the benchmark command that checks a plan, with its predictions")
    deployment_arguments(bench, max_model_len_default="the P95 prompt + P95 answer, rounded up to a power of two")
    add_requirement_arguments(bench)
    bench.add_argument("--tool", choices=TOOLS, help="print this tool's command only (default: all three)")
    bench.add_argument("--dataset", choices=DATASETS, default="random", help="random lengths (default) or ShareGPT")
    bench.add_argument("--num-prompts", type=int, help=f"requests to send (default: 10 per client, 1 to {MAX_PROMPTS})")
    bench.add_argument("--json", action="store_true", help="print one JSON object")

    back = sub.add_parser("readback", help="a benchmark's result file against the prediction; --calibrate fits it")
    back.add_argument("file", help="vllm bench serve --save-result JSON, guidellm report or aiperf export")
    deployment_arguments(back, max_model_len_default="the P95 prompt + P95 answer, rounded up to a power of two")
    add_requirement_arguments(back)
    back.add_argument("--calibrate", action="store_true", help="fit the efficiencies to the run and re-plan")
    back.add_argument("--json", action="store_true", help="print one JSON object")


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def run_benchmark(args: argparse.Namespace) -> str:
    req = requirement_from_args(args)
    dep, match = deployment_from_args(args, load_catalog(), req.longest_request)
    try:
        found = bench_check(check(dep, req), args.dataset, args.num_prompts)
    except ValueError as err:
        raise UsageError(str(err)) from None
    tools = (args.tool,) if args.tool else TOOLS
    predicted, notes = found.predicted, [note_text(note) for note in found.notes]
    if args.json:
        data = {
            "commands": {tool: found.commands[tool] for tool in tools},
            "load": dataclasses.asdict(found.load),
            "predicted": None if predicted is None else {k: _rounded(v) for k, v in predicted.values.items()},
            "bands": None
            if predicted is None
            else {k: None if b is None else [_rounded(b[0]), _rounded(b[1])] for k, b in predicted.bands.items()},
            "kernel_tier": kernel_speed(dep).tier,
            "notes": notes,
        }
        return json.dumps(data, indent=2)
    lines = [heading(args, match, dep.weights.name, dep.gpu).rstrip("\n")]
    for tool in tools:
        lines += [f"{tool}:", f"  {found.commands[tool]}"]
    lines += [f"note: {note}" for note in notes]
    if predicted is None:
        return "\n".join(lines)
    lines.append(f"predicted for this benchmark ({found.load.num_prompts} requests, kernel tier {predicted.tier}):")
    for metric, value in predicted.values.items():
        band = predicted.bands.get(metric)
        likely = f"  likely {band[0]:,.4g} to {band[1]:,.4g}" if band else ""
        lines.append(f"  {NAMES[metric]:18} {value:>10,.4g}{likely}")
    return "\n".join(lines)


def _table(comparison: Comparison) -> list[str]:
    lines = [f"  {'metric':18} {'predicted':>10} {'measured':>10} {'ratio':>6}  in band"]
    for row in comparison.rows:
        measured = "—" if row.measured is None else f"{row.measured:,.4g}"
        ratio = "—" if row.ratio is None else f"{row.ratio:.2f}"
        inside = {True: "yes", False: "no", None: "—"}[row.inside]
        lines.append(f"  {NAMES[row.metric]:18} {row.predicted:>10,.4g} {measured:>10} {ratio:>6}  {inside}")
    return lines


def _rows(comparison: Comparison) -> list[dict]:
    return [
        {
            "metric": row.metric,
            "predicted": _rounded(row.predicted),
            "measured": _rounded(row.measured),
            "ratio": _rounded(row.ratio),
            "band": None if row.band is None else [_rounded(row.band[0]), _rounded(row.band[1])],
            "inside_band": row.inside,
        }
        for row in comparison.rows
    ]


def _run_dict(run: MeasuredRun) -> dict:
    return {k: _rounded(v) if isinstance(v, float) else v for k, v in dataclasses.asdict(run).items()}


def run_readback(args: argparse.Namespace) -> str:
    try:
        run = read_result(read_local_file(args.file, "FILE", MAX_FILE_BYTES))
    except BenchFileError as err:
        raise UsageError(f"FILE: {err}") from None
    req = requirement_from_args(args)
    longest = max(req.longest_request, round(run.mean_input_len + run.mean_output_len) + 1)
    dep, match = deployment_from_args(args, load_catalog(), longest)
    try:
        before = compare(dep, run)
        fit = calibrate_run(dep, run) if args.calibrate else None
        after = compare(fit.calibration.apply(dep), run) if fit else None
    except (RunError, CalibrationError) as err:
        raise UsageError(str(err)) from None
    data: dict = {"tool": run.tool, "measured_run": _run_dict(run), "comparison": _rows(before)}
    if fit:
        replanned = check(fit.calibration.apply(dep), req)
        data["calibration"] = {
            "compute_efficiency": round(fit.calibration.compute or 0, 4),
            "bandwidth_efficiency": round(fit.calibration.bandwidth or 0, 4),
            "before": {k: round(v, 4) for k, v in fit.before.items()},
            "after": {k: round(v, 4) for k, v in fit.after.items()},
            "comparison": _rows(after),
            "verdict_before": check(dep, req).verdict,
            "verdict_after": replanned.verdict,
        }
    if args.json:
        return json.dumps(data, indent=2)
    load = before.load
    at = f"{load.concurrency} clients" if load.mode == "concurrency" else f"{load.rate_per_s:g} requests/s"
    lines = [heading(args, match, dep.weights.name, dep.gpu).rstrip("\n")]
    lines.append(f"{run.tool}: {run.prompts} requests of {load.prompt_len:,} + {load.answer_len:,} tokens at {at}")
    lines += _table(before)
    if fit and after:
        cal = data["calibration"]
        lines.append(
            f"calibrated: compute efficiency {cal['compute_efficiency']:.3f}, "
            f"bandwidth efficiency {cal['bandwidth_efficiency']:.3f}"
        )
        lines += _table(after)
        lines.append(f"plan verdict: {cal['verdict_before']} -> {cal['verdict_after']} with the calibration")
    return "\n".join(lines)
