"""Command-line arguments shared by ``estimate`` and ``check``: the deployment and its engine."""

from __future__ import annotations

import argparse

from core.catalog import Catalog, resolve_model
from core.deployment import Deployment
from core.engine import EngineConfig, Parallelism
from core.precision import KV_PRECISIONS, WEIGHT_PRECISIONS, kv_precision, weight_precision


class UsageError(Exception):
    """A bad argument: reported in one line, exit status 2."""


def deployment_arguments(parser: argparse.ArgumentParser, max_model_len_default: str) -> None:
    parser.add_argument("--model", required=True, help="catalog id, Hugging Face id or path to config.json")
    parser.add_argument("--gpu", required=True, help="catalog GPU id (see `list gpus`)")
    parser.add_argument("--num-gpus", type=int, help="GPUs of the replica (default tp x pp)")
    parser.add_argument("--tp", type=int, help="tensor-parallel degree (default num-gpus / pp)")
    parser.add_argument("--pp", type=int, default=1, help="pipeline-parallel degree (default 1)")
    parser.add_argument("--weight-dtype", help=f"one of {', '.join(WEIGHT_PRECISIONS)} (default: checkpoint's)")
    parser.add_argument("--kv-dtype", default="auto", help=f"auto or one of {', '.join(KV_PRECISIONS)}")
    parser.add_argument("--gpu-memory-utilization", type=float, default=0.9)
    parser.add_argument("--max-model-len", type=int, help=f"default: {max_model_len_default}")
    parser.add_argument("--max-num-batched-tokens", type=int, help="default: vLLM's for the GPU class")
    parser.add_argument("--max-num-seqs", type=int, help="default: vLLM's for the GPU class")
    parser.add_argument("--block-size", type=int, default=16)


def parallelism_from_args(args: argparse.Namespace) -> Parallelism:
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


def deployment_from_args(args: argparse.Namespace, catalog: Catalog, max_model_len: int | None) -> Deployment:
    model = resolve_model(args.model, catalog)
    try:
        gpu = catalog.gpu(args.gpu)
    except KeyError:
        raise UsageError(f"unknown GPU {args.gpu!r}; known: {', '.join(g.id for g in catalog.gpus)}") from None
    weights = weight_precision(args.weight_dtype or model.native_dtype)
    return Deployment(
        model=model,
        gpu=gpu,
        weights=weights,
        kv=kv_precision(args.kv_dtype, weights),
        parallel=parallelism_from_args(args),
        engine=EngineConfig(
            gpu_memory_utilization=args.gpu_memory_utilization,
            max_model_len=max_model_len,
            max_num_batched_tokens=args.max_num_batched_tokens,
            max_num_seqs=args.max_num_seqs,
            block_size=args.block_size,
        ),
    )
