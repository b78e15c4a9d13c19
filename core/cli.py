"""Command-line interface: ``python -m core list ...`` and ``python -m core estimate ...``.

Human-readable by default, one JSON object with ``--json``. Bad arguments exit with status 2 and a
one-line message on stderr; a configuration that does not fit is an answer (``fits: false``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from core.catalog import CatalogError, load_catalog, resolve_model
from core.deployment import Deployment, Workload
from core.engine import EngineConfig, Parallelism
from core.estimate import estimate
from core.precision import KV_PRECISIONS, WEIGHT_PRECISIONS, kv_precision, weight_precision
from core.report import estimate_to_dict, format_estimate, gpu_to_dict, model_to_dict

EXIT_USAGE = 2


class UsageError(Exception):
    """A bad argument: reported in one line, exit status 2."""


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
    est.add_argument("--model", required=True, help="catalog id, Hugging Face id or path to config.json")
    est.add_argument("--gpu", required=True, help="catalog GPU id (see `list gpus`)")
    est.add_argument("--num-gpus", type=int, help="GPUs of the replica (default tp x pp)")
    est.add_argument("--tp", type=int, help="tensor-parallel degree (default num-gpus / pp)")
    est.add_argument("--pp", type=int, default=1, help="pipeline-parallel degree (default 1)")
    est.add_argument("--weight-dtype", help=f"one of {', '.join(WEIGHT_PRECISIONS)} (default: checkpoint's)")
    est.add_argument("--kv-dtype", default="auto", help=f"auto or one of {', '.join(KV_PRECISIONS)}")
    est.add_argument("--input-len", type=int, default=1024, help="prompt tokens per request (default 1024)")
    est.add_argument("--output-len", type=int, default=256, help="answer tokens per request (default 256)")
    est.add_argument("--batch", type=int, default=1, help="concurrent requests (default 1)")
    est.add_argument("--gpu-memory-utilization", type=float, default=0.9)
    est.add_argument("--max-model-len", type=int, help="default: the model's maximum context")
    est.add_argument("--max-num-batched-tokens", type=int, help="default: vLLM's for the GPU class")
    est.add_argument("--max-num-seqs", type=int, help="default: vLLM's for the GPU class")
    est.add_argument("--block-size", type=int, default=16)
    est.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def _parallelism(args: argparse.Namespace) -> Parallelism:
    pp = args.pp
    tp = args.tp
    if tp is None:
        num = args.num_gpus or pp
        if num % pp:
            raise UsageError(f"--num-gpus ({num}) must be a multiple of --pp ({pp})")
        tp = num // pp
    if args.num_gpus is not None and args.num_gpus != tp * pp:
        raise UsageError(f"--num-gpus ({args.num_gpus}) must equal --tp x --pp ({tp} x {pp})")
    return Parallelism(tp=tp, pp=pp)


def _estimate(args: argparse.Namespace) -> str:
    catalog = load_catalog()
    model = resolve_model(args.model, catalog)
    try:
        gpu = catalog.gpu(args.gpu)
    except KeyError:
        raise UsageError(f"unknown GPU {args.gpu!r}; known: {', '.join(g.id for g in catalog.gpus)}") from None
    weights = weight_precision(args.weight_dtype or model.native_dtype)
    deployment = Deployment(
        model=model,
        gpu=gpu,
        weights=weights,
        kv=kv_precision(args.kv_dtype, weights),
        parallel=_parallelism(args),
        engine=EngineConfig(
            gpu_memory_utilization=args.gpu_memory_utilization,
            max_model_len=args.max_model_len,
            max_num_batched_tokens=args.max_num_batched_tokens,
            max_num_seqs=args.max_num_seqs,
            block_size=args.block_size,
        ),
    )
    workload = Workload(input_len=args.input_len, output_len=args.output_len, batch=args.batch)
    result = estimate(deployment, workload)
    return json.dumps(estimate_to_dict(result), indent=2) if args.json else format_estimate(result)


def _list(args: argparse.Namespace) -> str:
    catalog = load_catalog()
    if args.what == "models":
        rows = [model_to_dict(m) for m in catalog.models]
        if args.json:
            return json.dumps(rows, indent=2)
        return "\n".join(
            f"{r['id']:30} {r['attention']:4} {r['params_total_b']:8.2f}B total {r['params_active_b']:7.2f}B active"
            f"  ctx {r['max_context']:>7}  {r['hf_id']}"
            for r in rows
        )
    rows = [gpu_to_dict(g) for g in catalog.gpus]
    if args.json:
        return json.dumps(rows, indent=2)
    return "\n".join(
        f"{r['id']:16} {r['memory_gib']:7.1f} GiB {r['memory_bandwidth_gb_s']:7.0f} GB/s "
        f"{r['tensor_tflops_dense'].get('bf16', r['tensor_tflops_dense'].get('fp16')):7.1f} TFLOPS 16-bit  "
        f"{r['interconnect']:6}  {r['name']}"
        for r in rows
    )


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        output = _list(args) if args.command == "list" else _estimate(args)
    except (UsageError, CatalogError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_USAGE
    print(output)
    return 0
