"""The measured kernel-rate tables (data/kernels, derived from NVIDIA AIConfigurator by
tools/derive_kernel_rates.py) and their reader core/timing/kernel_rates.py: provenance, fractions of
the catalog's own peaks, spot values against the audit, the tier rules, and no aiconfigurator import."""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import math
import subprocess
import sys
from pathlib import Path

import pytest

from core.spec.catalog import load_catalog
from core.timing import kernel_rates as kr

ROOT = Path(__file__).resolve().parents[1]
TABLES = sorted(kr.KERNELS_DIR.glob("*.toml"))
MEASURED_GPUS = {"a100-80gb", "b200", "b300", "gb200", "h100-sxm", "h200", "l40s", "rtx-pro-6000-server"}


def gpu(gpu_id):
    return load_catalog().gpu(gpu_id)


def test_every_measured_catalog_gpu_has_a_table_named_for_its_catalog_id():
    assert {p.stem for p in TABLES} == MEASURED_GPUS
    assert set(kr.load_tables()) == MEASURED_GPUS


@pytest.mark.parametrize("path", TABLES, ids=lambda p: p.stem)
def test_each_table_carries_its_provenance(path):
    table = kr.read_table(path)
    s = table.source
    assert table.gpu == path.stem
    assert s["package"] == "aiconfigurator-core 0.12.0"
    assert s["backend"] == "vllm" and s["backend_version"] and s["system"]
    assert s["derived"].year >= 2026
    assert s["license"] == "Apache-2.0" and "NVIDIA CORPORATION & AFFILIATES" in s["copyright"]
    assert "changed: summarized to curves" in s["notice"]
    text = path.read_text()
    assert "NVIDIA CORPORATION & AFFILIATES" in text.splitlines()[2]  # the header comment says it too
    notice = (kr.KERNELS_DIR / "NOTICE.md").read_text()
    assert f"| {path.name} | {s['system']} | {s['backend_version']} |" in notice
    assert len(path.read_bytes()) < 6000  # a few KB per GPU


@pytest.mark.parametrize("path", TABLES, ids=lambda p: p.stem)
def test_fractions_are_of_the_catalogs_own_current_peaks(path):
    """Converted from achieved FLOP/s and bytes/s against data/gpus, not AIConfigurator's YAML peaks
    (e.g. its RTX PRO 6000 Server bf16 467.8 TFLOPS and 1,792 GB/s against the catalog's 500 and
    1,597): a catalog edit since the derivation would silently change what every fraction means."""
    table = kr.read_table(path)
    spec = gpu(table.gpu)
    assert table.source["memory_bandwidth"] == pytest.approx(spec.memory_bandwidth, rel=1e-5)
    flops = dict(spec.tensor_flops)
    for unit, peak in table.source["peaks"].items():
        assert peak == pytest.approx(flops[unit], rel=1e-5), unit
    for curve in table.gemm.values():
        assert curve.peak in table.source["peaks"]


@pytest.mark.parametrize("path", TABLES, ids=lambda p: p.stem)
def test_every_fraction_is_in_zero_one_and_only_l2_resident_cells_are_left_out(path):
    table = kr.read_table(path)
    values = [v for c in table.gemm.values() for v in (*c.compute, *c.bandwidth)] + list(table.prefill_compute)
    values += [v for row in table.allreduce_link for v in row]
    assert values and all(0.0 < v <= 1.0 for v in values)
    for curve in table.moe.values():  # left out only where the fewest tokens touch experts that fit in L2
        for series in (curve.compute, curve.bandwidth):
            kept = [v for v in series if not math.isnan(v)]
            assert len(kept) >= 10 and all(0.0 < v <= 1.0 for v in kept)
            assert all(math.isnan(v) for v in series[: len(series) - len(kept)])
    decode = kr.tomllib.loads(path.read_text())["decode_attention"]
    _, kv_heads, head_dim = decode["heads"]
    for b, row in zip(table.decode_batch, table.decode_bandwidth, strict=True):
        for c, v in zip(table.decode_context, row, strict=True):
            footprint = b * c * 2 * kv_heads * head_dim * 2  # K and V, bf16
            l2 = decode["l2_bytes"]
            assert math.isnan(v) == (footprint <= l2), (b, c)
            assert math.isnan(v) or 0.0 < v <= 1.0
    for dtype, curve in table.gemm.items():  # GEMMs fill the tensor cores as M grows, stop being bandwidth-bound
        assert curve.compute[0] < curve.compute[curve.x.index(512)]
        # except block-scaled FP8 on data-centre Blackwell: as measured, its small-M kernel reads at
        # 1-4 % of the bandwidth (B200 0.28 ms at M=1 for 6144 x 4096 against 0.011 ms in bf16)
        if dtype != "fp8_block" or table.source["system"] not in ("b200_sxm", "b300_sxm", "gb200"):
            assert curve.bandwidth[0] > curve.bandwidth[-1]


# The audit's table (2026-12-anchors-and-kernel-data.md 1.4) is one shape (n=6144, k=4096) against
# AIConfigurator's own peaks; the tables are a median over three layers' four projections against the
# catalog's. Within 0.1 absolute: catches a sparse peak, AIC's peak, or the wrong tensor unit (a 2x
# error) while allowing the shape mix. RTX PRO 6000 m=1: the audit's 0.82 of 1,792 GB/s = 0.92 of 1,597.
AUDIT = [
    ("h100-sxm", "bf16", "compute", 2048, 0.81),
    ("h100-sxm", "bf16", "compute", 8192, 0.78),
    ("h100-sxm", "fp8", "compute", 2048, 0.51),
    ("h100-sxm", "bf16", "bandwidth", 1, 0.76),
    ("a100-80gb", "bf16", "compute", 2048, 0.81),
    ("l40s", "bf16", "bandwidth", 1, 0.89),
    ("l40s", "fp8", "compute", 8192, 0.40),
    ("b200", "bf16", "compute", 2048, 0.70),
    ("b200", "fp8", "compute", 8192, 0.45),
    ("rtx-pro-6000-server", "bf16", "bandwidth", 1, 0.92),
]


@pytest.mark.parametrize(("gpu_id", "dtype", "kind", "m", "expected"), AUDIT)
def test_spot_values_match_the_audits_measured_table(gpu_id, dtype, kind, m, expected):
    read = kr.gemm_fraction if kind == "compute" else kr.gemv_bandwidth_fraction
    rate = read(gpu(gpu_id), dtype, m)
    assert rate.tier == kr.MEASURED
    assert rate.value == pytest.approx(expected, abs=0.1)


def test_curves_interpolate_in_log_m_and_hold_flat_beyond_their_ends():
    h100 = gpu("h100-sxm")
    curve = kr.load_tables()["h100-sxm"].gemm["bf16"]
    at = dict(zip(curve.x, curve.compute, strict=True))
    assert kr.gemm_fraction(h100, "bf16", 2048).value == pytest.approx(at[2048], abs=1e-4)
    middle = kr.gemm_fraction(h100, "bf16", math.sqrt(128 * 256)).value  # halfway in log2 m
    assert middle == pytest.approx((at[128] + at[256]) / 2, abs=1e-4)
    assert kr.gemm_fraction(h100, "bf16", 10**6).value == pytest.approx(at[16384], abs=1e-4)
    assert kr.gemm_fraction(h100, "fp16", 2048).value == kr.gemm_fraction(h100, "bf16", 2048).value


def test_decode_attention_reads_the_grid_and_is_generic_next_to_a_cell_left_out():
    table = kr.load_tables()["h100-sxm"]
    h100 = gpu("h100-sxm")
    i, j = table.decode_batch.index(64), table.decode_context.index(4096)
    rate = kr.decode_attention_fraction(h100, 64, 4096)
    assert rate.tier == kr.MEASURED and rate.value == pytest.approx(table.decode_bandwidth[i][j], abs=1e-4)
    assert kr.decode_attention_fraction(h100, 1, 256) == kr.GENERIC_RATE  # 4 MB of KV: inside L2, left out
    prefill = kr.prefill_attention_fraction(h100, 8192)
    assert prefill.tier == kr.MEASURED and 0.3 < prefill.value < 1.0


@pytest.mark.parametrize(
    ("gpu_id", "tier", "source"),
    [
        ("h100-sxm", kr.MEASURED, "h100-sxm"),
        ("h200", kr.MEASURED, "h200"),
        ("gb200", kr.MEASURED, "gb200"),
        ("a100-40gb", kr.SAME_ARCHITECTURE, "a100-80gb"),  # GA100 at 8.0, other HBM: a transfer, not a measurement
        ("a800-80gb", kr.SAME_ARCHITECTURE, "a100-80gb"),
        ("l4", kr.SAME_ARCHITECTURE, "l40s"),  # Ada (8.9)
        ("rtx-4090", kr.SAME_ARCHITECTURE, "l40s"),
        ("rtx-6000-ada", kr.SAME_ARCHITECTURE, "l40s"),
        ("h20", kr.SAME_ARCHITECTURE, "h100-sxm"),  # Hopper (9.0)
        ("h100-pcie", kr.SAME_ARCHITECTURE, "h100-sxm"),
        ("rtx-5090", kr.SAME_ARCHITECTURE, "rtx-pro-6000-server"),  # consumer Blackwell (12.0)
        ("rtx-pro-6000", kr.SAME_ARCHITECTURE, "rtx-pro-6000-server"),
        # A10 is GA102 (8.6), not GA100 (8.0): other SM, GDDR6, 6 MB of L2 against 40 MB, other kernels
        # chosen by vLLM; the audit keeps GA10x on the generic constants until measured.
        ("a10", kr.GENERIC, None),
        ("rtx-3090", kr.GENERIC, None),
        ("t4", kr.GENERIC, None),  # Turing
        ("v100-32gb", kr.GENERIC, None),
        ("mi300x", kr.GENERIC, None),
        ("gaudi-3", kr.GENERIC, None),
    ],
)
def test_tiers_follow_the_compute_capability(gpu_id, tier, source):
    spec = gpu(gpu_id)
    table, found = kr.table_for(spec)
    assert found == tier
    assert (table.gpu if table else None) == source
    rate = kr.gemm_fraction(spec, "bf16", 4096)
    assert rate.tier == tier
    if tier == kr.GENERIC:
        assert rate.value is None and rate.source == ""
    else:
        assert 0 < rate.value <= 1 and "aiconfigurator-core 0.12.0" in rate.source
        assert (" via " in rate.source) == (tier == kr.SAME_ARCHITECTURE)


def test_a_transfer_is_the_sources_fraction_of_the_targets_own_peak():
    """An L4 at M=4096 reaches the L40S's fraction of *its own* 121 TFLOPS, not the L40S's TFLOPS."""
    l4, l40s = gpu("l4"), gpu("l40s")
    assert kr.gemm_fraction(l4, "bf16", 4096).value == kr.gemm_fraction(l40s, "bf16", 4096).value
    assert kr.gemv_bandwidth_fraction(l4, "fp8", 1).value == kr.gemv_bandwidth_fraction(l40s, "fp8", 1).value


def test_a_dtype_or_unit_the_table_or_gpu_lacks_is_generic():
    assert kr.gemm_fraction(gpu("a100-40gb"), "fp8", 2048) == kr.GENERIC_RATE  # no FP8 unit on an A100
    assert kr.gemm_fraction(gpu("l40s"), "nvfp4", 2048) == kr.GENERIC_RATE  # not measured on L40S
    assert kr.gemm_fraction(gpu("h100-sxm"), "int4", 2048) == kr.GENERIC_RATE
    assert kr.gemm_fraction(gpu("b200"), "nvfp4", 2048).tier == kr.MEASURED
    custom = dataclasses.replace(gpu("h100-sxm"), id="my-gpu", compute_capability="")
    assert kr.table_for(custom) == (None, kr.GENERIC)
    hopper = dataclasses.replace(gpu("h100-sxm"), id="my-hopper")
    assert kr.table_for(hopper)[1] == kr.SAME_ARCHITECTURE


def test_moe_and_allreduce_curves_and_their_tiers():
    h100, l4 = gpu("h100-sxm"), gpu("l4")
    moe = kr.load_tables()["h100-sxm"].moe["bf16"]
    assert moe.x[0] == 1 / 16 and moe.x[-1] == 1024  # Qwen3 MoE: 128 experts, 8 per token, 1 .. 16384 tokens
    rate = kr.moe_fraction(h100, "bf16", 64)
    assert rate.tier == kr.MEASURED and rate.value == pytest.approx(moe.compute[moe.x.index(64)], abs=1e-4)
    # decode-sized steps read the touched experts at most at the bandwidth: a grouped GEMM of a few
    # tokens per expert is bandwidth-bound, one of hundreds is not
    assert kr.moe_bandwidth_fraction(h100, "bf16", 1).value > kr.moe_bandwidth_fraction(h100, "bf16", 1024).value
    assert kr.moe_fraction(l4, "bf16", 64).tier == kr.SAME_ARCHITECTURE
    assert kr.moe_fraction(gpu("a100-80gb"), "bf16", 64) == kr.GENERIC_RATE  # no vLLM MoE table for A100
    assert kr.moe_fraction(h100, "mxfp4", 64).tier == kr.MEASURED
    # A100 NVLink at TP8, 64 MiB: nccl-tests' 200-230 GB/s of 300 one way (core.spec.engine's link note)
    assert kr.allreduce_fraction(gpu("a100-80gb"), 8, 2**26).value == pytest.approx(0.7, abs=0.1)
    assert kr.allreduce_fraction(h100, 8, 2**26).tier == kr.MEASURED
    assert kr.allreduce_fraction(gpu("h100-pcie"), 8, 2**26) == kr.GENERIC_RATE  # links differ: never transferred
    assert kr.allreduce_fraction(gpu("gb200"), 8, 2**26) == kr.GENERIC_RATE  # 4 GPUs per node in the database


def test_a_table_without_its_source_is_refused_in_one_line(tmp_path):
    bad = tmp_path / "x.toml"
    bad.write_text('gpu = "x"\n')
    with pytest.raises(ValueError, match=r"^kernel table x.toml: field 'source' is missing$"):
        kr.read_table(bad)


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


OPTIONAL_BACKEND = {"core/timing/aic_backend.py", "core/timing/aic_tables.py"}
"""The optional measured-kernel backend (``--backend aic``, ``pip install ".[aic]"``): the only product modules
that may import aiconfigurator, and only inside the functions that run when it is chosen."""


def _top_level_imports(path: Path) -> set[str]:
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_nothing_the_product_runs_imports_aiconfigurator():
    """The product reads the derived tables; tools/derive_kernel_rates.py and the optional aic backend use the
    pinned extra, the backend lazily (so core imports and runs without it: tests/test_aic_backend.py)."""
    product = [ROOT / "app.py", *(p for d in ("core", "ui", "pages") for p in (ROOT / d).rglob("*.py"))]
    importing = {str(p.relative_to(ROOT)) for p in product if "aiconfigurator_core" in _imports(p)}
    assert importing <= OPTIONAL_BACKEND
    assert not [name for name in OPTIONAL_BACKEND if "aiconfigurator_core" in _top_level_imports(ROOT / name)]
    assert "aiconfigurator_core" in (ROOT / "tools" / "derive_kernel_rates.py").read_text()


@pytest.mark.skipif(importlib.util.find_spec("aiconfigurator_core") is None, reason="the kernels extra is absent")
def test_the_derivation_reproduces_the_committed_tables_byte_for_byte(tmp_path):
    date = kr.read_table(TABLES[0]).source["derived"].isoformat()
    script = ROOT / "tools" / "derive_kernel_rates.py"
    subprocess.run([sys.executable, str(script), "--date", date, "--out", str(tmp_path)], check=True, timeout=600)
    for path in TABLES:
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name
