"""Derive measured kernel rates from NVIDIA AIConfigurator's database into data/kernels/<gpu>.toml.

Run in a scratch environment that has the pinned extra (never the project's own .venv):

    python3 -m venv /tmp/aicvenv && /tmp/aicvenv/bin/pip install ".[kernels]"
    /tmp/aicvenv/bin/python tools/derive_kernel_rates.py --date 2026-12-20

Every number comes from aiconfigurator-core's engine API (EngineHandle.for_database, build_ops_json,
evaluate_ops_json) on the vLLM tables of each system's queryable ("current") version, and is written
as a fraction of this project's own catalog peak (data/gpus/<id>.toml), never of AIConfigurator's.
Curves (M, sequence length and batch x context on powers of two):

- gemm.<dtype>: a transformer layer's four projections after the TP split, for each of SHAPE_SETS;
  per set the layer's rate is sum of FLOPs (bytes) over sum of kernel times; the curve is the median
  over the sets. compute = FLOP/s over the catalog's dense peak of the dtype's tensor unit,
  bandwidth = bytes/s (weights + activations in + bf16 out) over the catalog's memory bandwidth.
- prefill_attention: causal FlashAttention of one prompt, 32 query / 8 KV heads of 128 (bf16),
  FLOPs counted as core.timing.work counts them, over the catalog's bf16 peak.
- decode_attention: one decode step's attention, same heads, bf16 KV; KV bytes read over the
  catalog's memory bandwidth, per (batch, context).
- moe.<dtype>: vLLM's fused MoE (gated, balanced routing, no TP/EP split) of MOE_SETS against
  tokens per expert (tokens x k / E); compute = 6 x hidden x inter x routes over the peak, bandwidth =
  the experts the tokens touch (E (1 - (1 - k/E)^tokens), core.timing.work's rule) x their bytes over
  the memory bandwidth; median over the sets of one dtype.
- allreduce: vLLM's custom all-reduce of tokens x 4096 bf16 values per TP size, as bus bandwidth
  (2 (tp - 1) / tp x bytes / time, nccl-tests' convention) over the catalog's one-direction link.

Only answers the engine tags 'silicon' (measured rows, interpolated between them) or 'mixed' with no
empirical fallback fired are kept; a point that is not is left out and named in the file.
Same inputs (package version, catalog, --date) give the same bytes.
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import math
import statistics
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "aiconfigurator-core"
PACKAGE_VERSION = "0.12.0"
BACKEND = "vllm"
SYSTEMS = {  # AIConfigurator system -> catalog GPU id (data/gpus/<id>.toml)
    "h100_sxm": "h100-sxm",
    "h200_sxm": "h200",
    "b200_sxm": "b200",
    "b300_sxm": "b300",
    "gb200": "gb200",
    "a100_sxm": "a100-80gb",
    "l40s": "l40s",
    "rtx_pro_6000_server": "rtx-pro-6000-server",
}
# project weight dtype -> (AIConfigurator GEMM quant mode, catalog tensor unit, weight bytes, activation bytes)
DTYPES = {
    "bf16": ("bfloat16", "bf16", 2.0, 2.0),
    "fp8": ("fp8", "fp8", 1.0, 1.0),
    "fp8_block": ("fp8_block", "fp8", 1.0, 1.0),
    "nvfp4": ("nvfp4", "fp4", 9 / 16, 9 / 16),
}
OUT_BYTES = 2.0  # GEMM outputs are bf16
# (n, k) of qkv, o, gate_up, down after the TP split
SHAPE_SETS = {
    "Llama-3.1-8B TP1": ((6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336)),
    "Qwen3-32B TP2": ((5120, 5120), (5120, 4096), (25600, 5120), (5120, 12800)),
    "Llama-3.1-70B TP4": ((2560, 8192), (8192, 2048), (14336, 8192), (8192, 7168)),
}
GEMM_M = tuple(2**i for i in range(15))  # 1 .. 16384 tokens
HEADS, KV_HEADS, HEAD_DIM = 32, 8, 128
PREFILL_S = tuple(2**i for i in range(7, 16))  # 128 .. 32768
MOE_TOKENS = tuple(2**i for i in range(15))  # 1 .. 16384 tokens in the step
# project dtype -> (AIConfigurator MoE quant mode, catalog unit, weight bytes, sets): (hidden, inter, k, E)
QWEN3_MOE = {"Qwen3-30B-A3B": (2048, 768, 8, 128), "Qwen3-235B-A22B": (4096, 1536, 8, 128)}
MOE_DTYPES = {
    "bf16": ("bfloat16", "bf16", 2.0, QWEN3_MOE),
    "fp8": ("fp8", "fp8", 1.0, QWEN3_MOE),
    "fp8_block": ("fp8_block", "fp8", 1.0, QWEN3_MOE),
    "nvfp4": ("nvfp4", "fp4", 9 / 16, QWEN3_MOE),
    "mxfp4": ("w4a16_mxfp4", "bf16", 0.5, {"gpt-oss-120b": (2880, 2880, 4, 128)}),  # weight-only: bf16 math
}
ALLREDUCE_HIDDEN = 4096
ALLREDUCE_TOKENS = (1, 16, 128, 1024, 8192)
ALLREDUCE_TP = (2, 4, 8)
DECODE_BATCH = (1, 4, 16, 64, 256)
DECODE_CONTEXT = (256, 1024, 4096, 16384)
KEPT_SOURCES = ("silicon", "mixed")
MB = 1e6
# L2 cache per system [bytes] (NVIDIA whitepapers: GA100 40 MB, GH100 50 MB, AD102 96 MB, GB202 128 MB;
# data-centre Blackwell taken as 128 MB, an upper bound). The attention benchmark runs one layer again
# and again, so a KV footprint (or a MoE step's touched experts) that fits in L2 is read from the cache,
# which a model's decode step (every layer's KV and weights in turn) never does: such cells read above
# DRAM speed (L40S decode attention 0.97 and MoE 1.66 of the catalog bandwidth, RTX PRO 6000 decode
# attention 1.10) and are left out (nan).
L2_BYTES = {"a100_sxm": 40 * MB, "h100_sxm": 50 * MB, "h200_sxm": 50 * MB, "l40s": 96 * MB}
L2_DEFAULT = 128 * MB


def catalog_gpu(gpu_id: str) -> dict:
    with (ROOT / "data" / "gpus" / f"{gpu_id}.toml").open("rb") as fh:
        return tomllib.load(fh)


class Probe:
    """One system's database behind the engine API."""

    def __init__(self, system: str) -> None:
        from aiconfigurator_core.sdk import common, perf_database
        from aiconfigurator_core.sdk import operations as ops
        from aiconfigurator_core.sdk.engine import EngineHandle, build_ops_json

        self.common, self.ops, self.build = common, ops, build_ops_json
        self.version = perf_database.get_latest_database_version(system, BACKEND)
        database = perf_database.get_database(system, BACKEND, self.version)
        self.handle = EngineHandle.for_database(database)
        self.gpus_per_node = int(database.system_spec["node"]["num_gpus_per_node"])
        self.dropped: collections.Counter[str] = collections.Counter()

    def seconds(self, op, family: str, **where) -> float | None:
        """The op's latency [s], or None (counted in ``dropped`` by family and reason) when the
        engine has no measured answer."""
        try:
            (_, ms, _, source), *_ = self.handle.evaluate_ops_json(self.build([op]), **where)
        except Exception as err:  # the engine raises its own error types for missing data or units
            self.dropped[f"{family}: {type(err).__name__}"] += 1
            return None
        tier = self.handle.last_provenance()
        if source not in KEPT_SOURCES or tier is not None:
            self.dropped[f"{family}: source {source}, fallback {tier}"] += 1
            return None
        return ms / 1e3

    def gemm(self, quant: str, n: int, k: int, m: int) -> float | None:
        op = self.ops.GEMM("g", 1, n, k, self.common.GEMMQuantMode[quant])
        return self.seconds(op, f"gemm {quant}", is_context=True, batch_size=1, s=1, x=m)

    def prefill_attention(self, s: int) -> float | None:
        bf16 = self.common.KVCacheQuantMode.bfloat16
        op = self.ops.ContextAttention(
            "a", 1, HEADS, KV_HEADS, bf16, self.common.FMHAQuantMode.bfloat16, head_size=HEAD_DIM
        )
        return self.seconds(op, "prefill attention", is_context=True, batch_size=1, s=s)

    def moe(self, quant: str, shape: tuple, tokens: int) -> float | None:
        hidden, inter, k, experts = shape
        mode = self.common.MoEQuantMode[quant]
        op = self.ops.MoE("m", 1, hidden, inter, k, experts, 1, 1, mode, "balanced", 1, is_context=True)
        return self.seconds(op, f"moe {quant}", is_context=True, batch_size=1, s=1, x=tokens)

    def allreduce(self, tp: int, tokens: int) -> float | None:
        op = self.ops.CustomAllReduce("ar", 1, ALLREDUCE_HIDDEN, tp)
        return self.seconds(op, f"allreduce tp{tp}", is_context=True, batch_size=1, s=1, x=tokens)

    def decode_attention(self, batch: int, context: int) -> float | None:
        op = self.ops.GenerationAttention(
            "a", 1, HEADS, KV_HEADS, self.common.KVCacheQuantMode.bfloat16, head_size=HEAD_DIM
        )
        return self.seconds(op, "decode attention", is_context=False, batch_size=batch, s=context)


def gemm_curves(probe: Probe, dtype: str, peak: float, bandwidth: float) -> dict | None:
    quant, _, w_bytes, a_bytes = DTYPES[dtype]
    m_kept, compute, moved = [], [], []
    for m in GEMM_M:
        per_set = []
        for shapes in SHAPE_SETS.values():
            times = [probe.gemm(quant, n, k, m) for n, k in shapes]
            if None in times:
                break
            flops = sum(2.0 * m * n * k for n, k in shapes)
            nbytes = sum(n * k * w_bytes + m * k * a_bytes + m * n * OUT_BYTES for n, k in shapes)
            per_set.append((flops / sum(times), nbytes / sum(times)))
        if len(per_set) == len(SHAPE_SETS):
            m_kept.append(m)
            compute.append(statistics.median(f for f, _ in per_set) / peak)
            moved.append(statistics.median(b for _, b in per_set) / bandwidth)
    if not m_kept:
        return None
    return {"m": m_kept, "compute": compute, "bandwidth": moved}


def moe_curves(probe: Probe, dtype: str, peak: float, bandwidth: float, l2: float) -> dict | None:
    """The MoE curves; a point where a set's touched experts fit in L2 is left out (nan), as in decode attention."""
    quant, _, w_bytes, sets = MOE_DTYPES[dtype]
    per_expert, compute, moved = [], [], []
    for x in MOE_TOKENS:
        rates = []
        for hidden, inter, k, experts in sets.values():
            t = probe.moe(quant, (hidden, inter, k, experts), x)
            if t is None:
                break
            touched = experts * (1 - (1 - k / experts) ** x) * 3 * hidden * inter * w_bytes
            rates.append((6.0 * hidden * inter * k * x / t, touched / t, x * k / experts, touched > l2))
        if len(rates) == len(sets) and len({r[2] for r in rates}) == 1:
            per_expert.append(rates[0][2])
            cached = not all(r[3] for r in rates)
            compute.append(math.nan if cached else statistics.median(r[0] for r in rates) / peak)
            moved.append(math.nan if cached else statistics.median(r[1] for r in rates) / bandwidth)
    if not per_expert:
        return None
    return {"tokens_per_expert": per_expert, "compute": compute, "bandwidth": moved}


def allreduce_curves(probe: Probe, link: float) -> dict | None:
    """Bus bandwidth over the one-direction link per TP size (rows) and message (columns)."""
    rows = {}
    for tp in (tp for tp in ALLREDUCE_TP if tp <= probe.gpus_per_node):  # beyond a node: another fabric
        times = [probe.allreduce(tp, x) for x in ALLREDUCE_TOKENS]
        if None not in times and link > 0:
            ring = 2 * (tp - 1) / tp
            nbytes = [x * ALLREDUCE_HIDDEN * 2.0 for x in ALLREDUCE_TOKENS]
            rows[tp] = [ring * b / t / link for b, t in zip(nbytes, times, strict=True)]
    if not rows:
        return None
    return {
        "tp": list(rows),
        "bytes": [x * ALLREDUCE_HIDDEN * 2 for x in ALLREDUCE_TOKENS],
        "link": list(rows.values()),
    }


def causal_flops(s: int) -> float:
    """Score and value FLOPs of one prompt of s tokens in one layer (core.timing.work.attention_flops)."""
    return 2.0 * HEADS * (2 * HEAD_DIM) * s * (s + 1) / 2


def derive(system: str, gpu_id: str, date: str) -> tuple[str, list[str]]:
    gpu = catalog_gpu(gpu_id)
    peaks = {unit: tflops * 1e12 for unit, tflops in gpu["tensor_tflops_dense"].items()}
    bandwidth = gpu["memory_bandwidth_gb_s"] * 1e9
    probe = Probe(system)
    gemm = {}
    for dtype, (_, unit, _, _) in DTYPES.items():
        if unit in peaks and (curves := gemm_curves(probe, dtype, peaks[unit], bandwidth)):
            gemm[dtype] = curves
    prefill = {"s": [], "compute": []}
    for s in PREFILL_S:
        if (t := probe.prefill_attention(s)) is not None:
            prefill["s"].append(s)
            prefill["compute"].append(causal_flops(s) / t / peaks["bf16"])
    l2 = L2_BYTES.get(system, L2_DEFAULT)
    moe = {}
    for dtype, (_, unit, _, _) in MOE_DTYPES.items():
        if unit in peaks and (curves := moe_curves(probe, dtype, peaks[unit], bandwidth, l2)):
            moe[dtype] = curves
    link = gpu.get("interconnect", {}).get("bandwidth_gb_s_bidirectional", 0) * 1e9 / 2
    allreduce = allreduce_curves(probe, link)
    decode = {"batch": [], "context": list(DECODE_CONTEXT), "bandwidth": [], "l2": l2}
    for b in DECODE_BATCH:
        row = [probe.decode_attention(b, c) for c in DECODE_CONTEXT]
        if None not in row:
            kv = [b * c * 2 * KV_HEADS * HEAD_DIM * 2.0 for c in DECODE_CONTEXT]
            decode["batch"].append(b)
            decode["bandwidth"].append(
                [nbytes / t / bandwidth if nbytes > l2 else math.nan for nbytes, t in zip(kv, row, strict=True)]
            )
    text = render(system, gpu_id, date, probe, peaks, bandwidth, gemm, prefill, decode)
    text += render_more(gpu, moe, allreduce)
    return text, probe.dropped


def fmt(values, digits: int = 3) -> str:
    """A TOML array: fractions to ``digits`` significant digits (nan for a cell left out), counts as integers."""
    cells = (("nan" if math.isnan(v) else f"{v:.{digits}g}") if isinstance(v, float) else str(v) for v in values)
    return "[" + ", ".join(cells) + "]"


def render(system, gpu_id, date, probe, peaks, bandwidth, gemm, prefill, decode) -> str:
    units = sorted({DTYPES[d][1] for d in gemm} | {"bf16"})
    lines = [
        f"# Measured kernel rates of {gpu_id}, written by tools/derive_kernel_rates.py; do not edit by hand.",
        f"# Derived from {PACKAGE} {PACKAGE_VERSION} (systems/data/{system}/*/{BACKEND}/{probe.version}),",
        "# Copyright (c) 2025-2026 NVIDIA CORPORATION & AFFILIATES, Apache-2.0; changed: summarized to curves",
        "# (fractions of this project's catalog peaks). See data/kernels/NOTICE.md.",
        f'gpu = "{gpu_id}"',
        "",
        "[source]",
        f'package = "{PACKAGE} {PACKAGE_VERSION}"',
        f'system = "{system}"',
        f'backend = "{BACKEND}"',
        f'backend_version = "{probe.version}"',
        f"derived = {date}",
        'license = "Apache-2.0"',
        'copyright = "Copyright (c) 2025-2026 NVIDIA CORPORATION & AFFILIATES"',
        f'notice = "derived from {PACKAGE} {PACKAGE_VERSION} measured performance database, '
        'changed: summarized to curves"',
        f"memory_bandwidth = {bandwidth:.6g}",
        "peaks = { " + ", ".join(f"{u} = {peaks[u]:.6g}" for u in units) + " }",
        "left_out = [" + ", ".join(f'"{d} ({n} queries)"' for d, n in sorted(probe.dropped.items())) + "]",
        "",
    ]
    for dtype, curves in gemm.items():
        lines += [
            f"[gemm.{dtype}]",
            f'quant_mode = "{DTYPES[dtype][0]}"',
            f'peak = "{DTYPES[dtype][1]}"',
            "shapes = [" + ", ".join(f'"{name}"' for name in SHAPE_SETS) + "]",
            f"m = {fmt(curves['m'])}",
            f"compute = {fmt(curves['compute'])}",
            f"bandwidth = {fmt(curves['bandwidth'])}",
            "",
        ]
    if prefill["s"]:
        lines += [
            "[prefill_attention]",
            f"heads = {fmt([HEADS, KV_HEADS, HEAD_DIM])}",
            f"s = {fmt(prefill['s'])}",
            f"compute = {fmt(prefill['compute'])}",
            "",
        ]
    if decode["batch"]:
        rows = ", ".join(fmt(r) for r in decode["bandwidth"])
        lines += [
            "[decode_attention]",
            f"heads = {fmt([HEADS, KV_HEADS, HEAD_DIM])}",
            f"batch = {fmt(decode['batch'])}",
            f"context = {fmt(decode['context'])}",
            f"l2_bytes = {decode['l2']:.6g}",
            f"bandwidth = [{rows}]",
            "",
        ]
    return "\n".join(lines)


def render_more(gpu: dict, moe: dict, allreduce: dict | None) -> str:
    lines = []
    for dtype, curves in moe.items():
        quant, unit, _, sets = MOE_DTYPES[dtype]
        lines += [
            f"[moe.{dtype}]",
            f'quant_mode = "{quant}"',
            f'peak = "{unit}"',
            "shapes = [" + ", ".join(f'"{name}"' for name in sets) + "]",
            'routing = "balanced"',
            f"tokens_per_expert = {fmt(curves['tokens_per_expert'], digits=6)}",
            f"compute = {fmt(curves['compute'])}",
            f"bandwidth = {fmt(curves['bandwidth'])}",
            "",
        ]
    if allreduce:
        kind = gpu.get("interconnect", {}).get("kind", "")
        rows = ", ".join(fmt(r) for r in allreduce["link"])
        lines += [
            "[allreduce]",
            f'interconnect = "{kind}"',
            f"tp = {fmt(allreduce['tp'])}",
            f"bytes = {fmt(allreduce['bytes'])}",
            f"link = [{rows}]",
            "",
        ]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--date", default=dt.date.today().isoformat(), help="the derivation date written (YYYY-MM-DD)")
    parser.add_argument("--out", type=Path, default=ROOT / "data" / "kernels")
    args = parser.parse_args(argv)
    dt.date.fromisoformat(args.date)
    from importlib.metadata import version

    if version(PACKAGE) != PACKAGE_VERSION:
        print(f"error: {PACKAGE} {version(PACKAGE)} is installed; the tables pin {PACKAGE_VERSION}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    for system, gpu_id in SYSTEMS.items():
        text, dropped = derive(system, gpu_id, args.date)
        (args.out / f"{gpu_id}.toml").write_text(text, encoding="utf-8")
        print(f"{gpu_id}: {len(text)} bytes, left out: {dict(dropped) or 'nothing'}", file=sys.stderr)
    print(f"derived {len(SYSTEMS)} GPUs in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
