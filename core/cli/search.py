"""``python -m core search``: the best deployment for a load, and the Pareto fronts.

Exit status 0 whether or not a candidate meets the SLOs (the answer says so); 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import json

from core.cli.args import (
    MODEL_HELP,
    UsageError,
    energy_arguments,
    energy_inputs_from_args,
    heading,
    release_from_args,
)
from core.cli.check import add_requirement_arguments, requirement_from_args
from core.messages import duration, message
from core.planning.pareto import OBJECTIVES, search_to_dict
from core.planning.search import MODES, SearchSpace, search
from core.spec import units
from core.spec.catalog import load_catalog, resolve, resolve_gpu
from core.spec.cluster import INTER_NODE_LINKS
from core.spec.deployment import Deployment
from core.spec.engine import EngineConfig
from core.spec.precision import WEIGHT_PRECISIONS, kv_precision
from core.spec.release import ENGINES
from core.spec.suggestions import UnknownName

FRONT_SHOWN = 12  # front points printed in the text answer; the JSON has them all


def add_search_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, help=MODEL_HELP)
    parser.add_argument("--engine", default="vllm", help=f"serving engine: {', '.join(ENGINES)} (default vllm)")
    parser.add_argument("--engine-version", help="its release (default: the newest the rules were read against)")
    parser.add_argument(
        "--gpus", help="comma-separated catalog GPU ids or names (h100, 4090) to search (default: every catalog GPU)"
    )
    parser.add_argument("--tp-options", default="1,2,4,8", help="tensor-parallel degrees (default 1,2,4,8)")
    parser.add_argument("--pp-options", default="1,2", help="pipeline-parallel degrees (default 1,2)")
    parser.add_argument(
        "--dp-options",
        "--dp",
        dest="dp_options",
        default="1,2,4,8",
        help="data-parallel attention ranks for MoE models, the experts over tp x dp GPUs (default 1,2,4,8)",
    )
    parser.add_argument(
        "--batched-tokens-options",
        "--batched-tokens",
        dest="batched_tokens_options",
        default="auto,2048,8192",
        help="max_num_batched_tokens of aggregated serving, auto: the engine's (default auto,2048,8192)",
    )
    parser.add_argument("--weight-dtypes", default="bf16,fp8,int4", help="weight formats (default bf16,fp8,int4)")
    parser.add_argument("--kv-dtypes", default="auto,fp8", help="KV-cache formats (default auto,fp8)")
    parser.add_argument("--modes", default=",".join(MODES), help=f"serving modes (default {','.join(MODES)})")
    parser.add_argument("--max-gpus", type=int, default=64, help="most GPUs a deployment may use (default 64)")
    parser.add_argument(
        "--inter-node",
        default="infiniband-ndr",
        help=f"link between servers: {', '.join(INTER_NODE_LINKS)} (default infiniband-ndr)",
    )
    add_requirement_arguments(parser)
    parser.add_argument(
        "--objective",
        choices=OBJECTIVES,
        default="cost",
        help="what the best deployment maximizes: cost (the cheapest per hour) or tokens-per-joule (default cost)",
    )
    energy_arguments(parser)
    parser.add_argument("--lang", choices=("en", "zh"), default="en", help="language of the text (default en)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _list(text: str, flag: str, convert=str) -> tuple:
    try:
        items = tuple(convert(part.strip()) for part in text.split(",") if part.strip())
    except ValueError:
        raise UsageError(f"{flag} must be a comma-separated list, got {text!r}") from None
    if not items:
        raise UsageError(f"{flag} must name at least one value")
    return items


def _batched_tokens(text: str) -> int | None:
    """A max_num_batched_tokens option: "auto" for the engine's, else a positive whole number."""
    if text.lower() in ("auto", "default"):
        return None
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def space_from_args(args: argparse.Namespace, catalog) -> SearchSpace:
    try:
        named = _list(args.gpus, "--gpus") if args.gpus else ()
        gpus = tuple(dict.fromkeys(resolve_gpu(g, catalog).id for g in named))  # h100,h100-sxm: one GPU
    except UnknownName as err:
        raise UsageError(f"--gpus: {err}") from None
    weights = _list(args.weight_dtypes, "--weight-dtypes")
    if bad := [w for w in weights if w not in WEIGHT_PRECISIONS]:
        raise UsageError(f"--weight-dtypes: unknown format {bad[0]!r}; one of {', '.join(WEIGHT_PRECISIONS)}")
    tps = _list(args.tp_options, "--tp-options", int)
    pps = _list(args.pp_options, "--pp-options", int)
    dps = _list(args.dp_options, "--dp-options", int)
    if bad := [n for n in tps + pps + dps if n < 1]:
        raise UsageError(f"--tp-options, --pp-options and --dp-options must be 1 or more, got {bad[0]}")
    batched = _list(args.batched_tokens_options, "--batched-tokens-options", _batched_tokens)
    return SearchSpace(
        gpus=gpus,
        tensor_parallel=tps,
        pipeline_parallel=pps,
        data_parallel=dps,
        batched_tokens=batched,
        weight_dtypes=weights,
        kv_dtypes=_list(args.kv_dtypes, "--kv-dtypes"),
        modes=_list(args.modes, "--modes"),
        max_gpus=args.max_gpus,
        inter_node=args.inter_node,
    )


def run_search(args: argparse.Namespace) -> str:
    catalog = load_catalog()
    req = requirement_from_args(args)
    space = space_from_args(args, catalog)
    match = resolve(args.model, catalog, online=True)
    model = match.deployed_model()
    weights = WEIGHT_PRECISIONS[model.native_dtype]
    try:
        kv = kv_precision(space.kv_dtypes[0], weights)
    except ValueError as err:
        raise UsageError(f"--kv-dtypes: {err}") from None
    base = Deployment(
        model=model,
        gpu=catalog.gpu(space.gpus[0]) if space.gpus else catalog.gpus[0],
        weights=weights,
        kv=kv,
        engine=EngineConfig(release=release_from_args(args)),
    )
    candidates = search(catalog, base, req, space)
    data = search_to_dict(candidates, space.modes, args.objective, energy_inputs_from_args(args))
    data["model_match"] = match.as_dict(weights.name)
    if args.json:
        return json.dumps(data, indent=2, ensure_ascii=False)
    return heading(args, match, weights.name) + format_search(data, args.lang)


def _point(p: dict, lang: str) -> str:
    layout = (
        message("search.layout_disaggregated", lang, prefill=p["prefill_instances"], decode=p["decode_instances"])
        if p["mode"] == "disaggregated"
        else message("search.layout_aggregated", lang, replicas=p["replicas"])
    )
    cost = f"${p['cost_per_hour']:,.2f}/h" if p["cost_per_hour"] is not None else message("plan.no_catalog_price", lang)
    per_million = f"${p['cost_per_million_output_tokens']:,.3f}/1M" if p["cost_per_million_output_tokens"] else "-"
    split = f"tp {p['tp']} pp {p['pp']}" + (f" dp {p['dp']} ep {p['ep']}" if p["dp"] > 1 else "")
    chunk = "" if p["batched_tokens_default"] else f", {p['max_num_batched_tokens']} batched tokens"
    energy = f", {p['tokens_per_joule']:.3g} tokens/J" if p.get("tokens_per_joule") else ""
    return (
        f"{p['gpu']} x{p['num_gpus']} ({split}, {layout}, {p['weight_dtype']}/{p['kv_dtype']}{chunk}): "
        f"{cost}, {per_million}, TTFT {duration(p['ttft_ms'] * units.MS)}, TPOT {duration(p['tpot_ms'] * units.MS)}"
        f"{energy}" + ("" if p["meets_slo"] else f" [{message('search.misses_slo', lang)}]")
    )


def format_search(data: dict, lang: str = "en") -> str:
    lines = [
        message(
            "search.summary",
            lang,
            candidates=f"{data['candidates_evaluated']:,}",
            shapes=f"{data['shapes_evaluated']:,}",
            modes=", ".join(data["modes_evaluated"]),
            meeting=f"{data['meeting_slo']:,}",
        ),
        "",
    ]
    if data["best"] is None:
        lines.append(message("search.none_meets", lang))
    else:
        best = "energy.search_best" if data.get("objective") == "tokens-per-joule" else "search.best"
        lines.append(message(best, lang) + " " + _point(data["best"], lang))
    lines += ["", message("search.front_cost", lang)]
    lines += [f"  - {_point(p, lang)}" for p in data["pareto"][:FRONT_SHOWN]]
    if len(data["pareto"]) > FRONT_SHOWN:
        lines.append(f"  ... {len(data['pareto']) - FRONT_SHOWN} more (--json)")
    return "\n".join(lines)
