"""Measured kernel rates: what fraction of a GPU's own peak a GEMM, a decode GEMV or an attention
kernel of a given shape reaches, and from which tier the answer comes.

The tables (``data/kernels/<gpu id>.toml``) are derived from NVIDIA AIConfigurator's measured
performance database by ``tools/derive_kernel_rates.py`` (provenance in each file and in
``data/kernels/NOTICE.md``); this module only reads them and never imports aiconfigurator.

Every rate is a fraction of this project's catalog figures for the GPU asked about (dense tensor
peak of the dtype's unit, or memory bandwidth), so it multiplies that GPU's own peak:

- tier "measured": the GPU has a table of its own;
- tier "same architecture": a GPU of the same CUDA compute capability has one
  (:data:`TRANSFER_SOURCE`: Ampere data-centre GA100 8.0 from A100 SXM, Ada 8.9 from L40S, Hopper
  9.0 from H100 SXM, Blackwell 10.0 from B200, Blackwell Ultra 10.3 from B300, consumer and
  workstation Blackwell 12.0 from RTX PRO 6000 Server); the achieved fraction of the source's peak is
  taken as the fraction of the target's own peak at the same shape;
- tier "generic": no table applies (another SM generation such as GA10x 8.6, Turing, Volta, AMD,
  Gaudi, a dtype the table lacks or a tensor unit the GPU lacks); ``value`` is None and the
  caller keeps its constant.

All-reduce rates depend on the GPUs' links rather than their SMs (an H100 PCIe has no NVLink), so
they are read only on the GPU measured ("measured" or "generic", never a transfer).

Curves are interpolated linearly in log2 of the shape and held flat beyond their ends.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.spec import DATA_DIR
from core.spec.gpu import GpuSpec

KERNELS_DIR = DATA_DIR / "kernels"
MEASURED, SAME_ARCHITECTURE, GENERIC = "measured", "same architecture", "generic"
TRANSFER_SOURCE: dict[str, str] = {
    "8.0": "a100-80gb",
    "8.9": "l40s",
    "9.0": "h100-sxm",
    "10.0": "b200",
    "10.3": "b300",
    "12.0": "rtx-pro-6000-server",
}
"""CUDA compute capability -> the catalog GPU whose table a GPU of that capability borrows."""
DTYPE_TABLE = {
    "bf16": "bf16",
    "fp16": "bf16",
    "fp8": "fp8",
    "fp8_block": "fp8_block",
    "nvfp4": "nvfp4",
    "mxfp4": "mxfp4",
}
"""Project weight dtype -> the curve it reads (fp16 runs at the bf16 rate on the same units; MXFP4 has
a MoE curve only, gpt-oss's weight-only kernel, whose compute divides by the bf16 peak)."""


@dataclass(frozen=True)
class Rate:
    """A kernel's achieved fraction of the GPU's own peak, the tier it comes from, and its source."""

    value: float | None
    """Fraction of the catalog peak (compute or bandwidth) in (0, 1]; None for the generic tier."""
    tier: str
    """'measured', 'same architecture' or 'generic'."""
    source: str = ""
    """Where the curve comes from ("aiconfigurator-core 0.12.0 h100_sxm/vllm 0.24.0 via h100-sxm")."""


GENERIC_RATE = Rate(None, GENERIC)


@dataclass(frozen=True)
class Curve:
    """Compute and bandwidth fractions against one shape axis (GEMM: M tokens; MoE: tokens per expert)."""

    x: tuple[float, ...]
    compute: tuple[float, ...]
    bandwidth: tuple[float, ...]
    peak: str
    """The catalog tensor unit the compute fractions divide by ('bf16', 'fp8', 'fp4')."""


@dataclass(frozen=True)
class KernelTable:
    """One GPU's measured curves (one ``data/kernels/<gpu>.toml``)."""

    gpu: str
    source: dict
    gemm: dict[str, Curve]
    moe: dict[str, Curve] = dataclasses.field(default_factory=dict)
    prefill_s: tuple[float, ...] = ()
    prefill_compute: tuple[float, ...] = ()
    decode_batch: tuple[float, ...] = ()
    decode_context: tuple[float, ...] = ()
    decode_bandwidth: tuple[tuple[float, ...], ...] = ()
    allreduce_tp: tuple[int, ...] = ()
    allreduce_bytes: tuple[float, ...] = ()
    allreduce_link: tuple[tuple[float, ...], ...] = ()

    @property
    def label(self) -> str:
        s = self.source
        return f"{s['package']} {s['system']}/{s['backend']} {s['backend_version']}"


def read_table(path: Path) -> KernelTable:
    """One table file; a missing section or field raises ValueError naming the file and the field."""
    with path.open("rb") as fh:
        raw = tomllib.load(fh)
    try:
        gpu, source = raw["gpu"], raw["source"]
        gemm = {
            d: Curve(tuple(c["m"]), tuple(c["compute"]), tuple(c["bandwidth"]), c["peak"])
            for d, c in raw["gemm"].items()
        }
        moe = {
            d: Curve(tuple(c["tokens_per_expert"]), tuple(c["compute"]), tuple(c["bandwidth"]), c["peak"])
            for d, c in raw.get("moe", {}).items()
        }
        prefill = raw.get("prefill_attention", {})
        decode = raw.get("decode_attention", {})
        allreduce = raw.get("allreduce", {})
        return KernelTable(
            gpu=gpu,
            source=source,
            gemm=gemm,
            moe=moe,
            prefill_s=tuple(prefill.get("s", ())),
            prefill_compute=tuple(prefill.get("compute", ())),
            decode_batch=tuple(decode.get("batch", ())),
            decode_context=tuple(decode.get("context", ())),
            decode_bandwidth=tuple(tuple(row) for row in decode.get("bandwidth", ())),
            allreduce_tp=tuple(allreduce.get("tp", ())),
            allreduce_bytes=tuple(allreduce.get("bytes", ())),
            allreduce_link=tuple(tuple(row) for row in allreduce.get("link", ())),
        )
    except KeyError as err:
        raise ValueError(f"kernel table {path.name}: field {err.args[0]!r} is missing") from None


@functools.cache
def load_tables(directory: Path = KERNELS_DIR) -> dict[str, KernelTable]:
    """Every kernel table under ``directory``, by catalog GPU id (read once per directory)."""
    tables = [read_table(p) for p in sorted(directory.glob("*.toml"))]
    return {t.gpu: t for t in tables}


def table_for(gpu: GpuSpec, directory: Path = KERNELS_DIR) -> tuple[KernelTable | None, str]:
    """The table a GPU reads and its tier: its own, its compute capability's source, or none."""
    tables = load_tables(directory)
    if gpu.id in tables:
        return tables[gpu.id], MEASURED
    source = TRANSFER_SOURCE.get(gpu.compute_capability) if gpu.vendor == "nvidia" else None
    if source in tables:
        return tables[source], SAME_ARCHITECTURE
    return None, GENERIC


def _interp(x: float, xs: tuple[float, ...], ys: tuple[float, ...]) -> float:
    """``ys`` at ``x``, linear in log2 x between the points, flat beyond the ends."""
    return float(np.interp(math.log2(max(x, 1e-9)), np.log2(xs), ys))


def _rate(gpu: GpuSpec, table: KernelTable, tier: str, value: float) -> Rate:
    if not 0.0 < value <= 1.0 or math.isnan(value):
        return GENERIC_RATE
    via = "" if tier == MEASURED else f" via {table.gpu}"
    return Rate(round(value, 4), tier, table.label + via)


def _curve(gpu: GpuSpec, dtype: str, directory: Path, kind: str = "gemm") -> tuple:
    """(table, tier, curve) of ``kind`` ('gemm' or 'moe') for ``dtype`` on ``gpu``, curve None when generic."""
    table, tier = table_for(gpu, directory)
    name = DTYPE_TABLE.get(dtype.lower())
    curve = getattr(table, kind).get(name) if table is not None and name else None
    if curve is None or curve.peak not in dict(gpu.tensor_flops):
        return None, GENERIC, None
    return table, tier, curve


def gemm_fraction(gpu: GpuSpec, dtype: str, m: float, directory: Path = KERNELS_DIR) -> Rate:
    """Achieved FLOP/s of a layer's projections over ``m`` tokens, as a fraction of the GPU's dense
    peak for ``dtype``'s tensor unit (the curve's shapes: tools/derive_kernel_rates.py SHAPE_SETS)."""
    table, tier, curve = _curve(gpu, dtype, directory)
    if curve is None:
        return GENERIC_RATE
    return _rate(gpu, table, tier, _interp(m, curve.x, curve.compute))


def gemv_bandwidth_fraction(gpu: GpuSpec, dtype: str, m: float = 1, directory: Path = KERNELS_DIR) -> Rate:
    """Achieved bytes/s (weights, activations in and out) of the same projections over ``m``
    tokens, as a fraction of the GPU's memory bandwidth: the decode rate where ``m`` is the batch."""
    table, tier, curve = _curve(gpu, dtype, directory)
    if curve is None:
        return GENERIC_RATE
    return _rate(gpu, table, tier, _interp(m, curve.x, curve.bandwidth))


def moe_fraction(gpu: GpuSpec, dtype: str, tokens_per_expert: float, directory: Path = KERNELS_DIR) -> Rate:
    """Achieved FLOP/s of vLLM's fused MoE (balanced routing) at ``tokens_per_expert`` (tokens x k /
    experts), as a fraction of the dense peak of the curve's tensor unit."""
    table, tier, curve = _curve(gpu, dtype, directory, "moe")
    if curve is None:
        return GENERIC_RATE
    return _rate(gpu, table, tier, _interp(tokens_per_expert, curve.x, curve.compute))


def moe_bandwidth_fraction(gpu: GpuSpec, dtype: str, tokens_per_expert: float, directory: Path = KERNELS_DIR) -> Rate:
    """Achieved bytes/s of the same kernel on the experts the tokens touch (uniform routing, as
    :func:`core.timing.work.experts_touched_fraction` counts them), over the memory bandwidth."""
    table, tier, curve = _curve(gpu, dtype, directory, "moe")
    if curve is None:
        return GENERIC_RATE
    return _rate(gpu, table, tier, _interp(tokens_per_expert, curve.x, curve.bandwidth))


def allreduce_fraction(gpu: GpuSpec, tp: int, message_bytes: float, directory: Path = KERNELS_DIR) -> Rate:
    """Bus bandwidth (2 (tp - 1) / tp x bytes / time) of vLLM's custom all-reduce over ``tp`` GPUs as a
    fraction of the GPU's one-direction link bandwidth: measured GPUs and measured TP sizes only."""
    table = load_tables(directory).get(gpu.id)
    if table is None or tp not in table.allreduce_tp:
        return GENERIC_RATE
    row = table.allreduce_link[table.allreduce_tp.index(tp)]
    return _rate(gpu, table, MEASURED, _interp(message_bytes, table.allreduce_bytes, row))


def prefill_attention_fraction(gpu: GpuSpec, seq_len: float, directory: Path = KERNELS_DIR) -> Rate:
    """Achieved FLOP/s of causal prefill attention over one prompt of ``seq_len`` tokens (FLOPs as
    :func:`core.timing.work.attention_flops` counts them), as a fraction of the GPU's bf16 peak."""
    table, tier = table_for(gpu, directory)
    if table is None or not table.prefill_s:
        return GENERIC_RATE
    return _rate(gpu, table, tier, _interp(seq_len, table.prefill_s, table.prefill_compute))


def decode_attention_fraction(gpu: GpuSpec, batch: float, context: float, directory: Path = KERNELS_DIR) -> Rate:
    """Achieved KV bytes/s of one decode step's attention over ``batch`` sequences of ``context``
    cached tokens, as a fraction of the GPU's memory bandwidth: bilinear in (log2 batch, log2
    context); generic where a corner was left out (a KV footprint that fit in the L2 cache)."""
    table, tier = table_for(gpu, directory)
    if table is None or not table.decode_batch:
        return GENERIC_RATE
    grid = np.array(table.decode_bandwidth, dtype=float)
    lb, lc = np.log2(table.decode_batch), np.log2(table.decode_context)
    x = float(np.clip(math.log2(max(batch, 1e-9)), lb[0], lb[-1]))
    y = float(np.clip(math.log2(max(context, 1e-9)), lc[0], lc[-1]))
    i = int(np.clip(np.searchsorted(lb, x, side="right") - 1, 0, len(lb) - 2)) if len(lb) > 1 else 0
    j = int(np.clip(np.searchsorted(lc, y, side="right") - 1, 0, len(lc) - 2)) if len(lc) > 1 else 0
    i2, j2 = min(i + 1, len(lb) - 1), min(j + 1, len(lc) - 1)
    tx = (x - lb[i]) / (lb[i2] - lb[i]) if i2 != i else 0.0
    ty = (y - lc[j]) / (lc[j2] - lc[j]) if j2 != j else 0.0
    weights = {(i, j): (1 - tx) * (1 - ty), (i2, j): tx * (1 - ty), (i, j2): (1 - tx) * ty, (i2, j2): tx * ty}
    cells = [(w, grid[c]) for c, w in weights.items() if w > 0]
    if any(math.isnan(v) for _, v in cells):
        return GENERIC_RATE
    return _rate(gpu, table, tier, sum(w * v for w, v in cells))
