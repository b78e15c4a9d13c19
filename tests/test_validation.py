"""The validation set: every row is usable and predicted; reported errors and bands are current."""

from __future__ import annotations

import json

import pytest

from core.spec.catalog import load_catalog
from core.spec.deployment import Workload
from core.validation.dataset import Comparison, Row, compare_all, load_rows, measured, source_summary, summary
from core.validation.report import build_report, held_out_comparisons, load_report
from core.validation.sensitivity import sensitivity
from core.validation.uncertainty import ERRORS_PATH, band, errors_table

ROWS = load_rows()
REQUIRED = ("id", "kind", "source_url", "gpu", "model")


@pytest.fixture(scope="module")
def comparisons():
    return compare_all()


def test_the_set_is_large_and_broad():
    assert len(ROWS) >= 60
    catalog = load_catalog()
    assert len({r.get("gpu") for r in ROWS}) >= 8
    kinds = {catalog.model(r.get("model")).attention_kind for r in ROWS}
    assert {"GQA", "MLA"} <= {str(k) for k in kinds}
    assert any(catalog.model(r.get("model")).is_moe for r in ROWS)
    assert any(catalog.model(r.get("model")).num_sliding_layers for r in ROWS)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id)
def test_every_row_is_sourced_and_uses_catalog_ids(row):
    catalog = load_catalog()
    assert all(row.get(k) for k in REQUIRED)
    assert row.get("source_url").startswith("http")
    catalog.model(row.get("model"))
    catalog.gpu(row.get("gpu"))
    assert measured(row), "a row must carry at least one measured figure"


def test_ids_are_unique():
    ids = [r.id for r in ROWS]
    assert len(ids) == len(set(ids))


def test_validate_runs_over_the_whole_set(comparisons):
    problems = [(c.row.id, c.error) for c in comparisons if c.error]
    assert not problems
    # rows outside the model's scope say why, and they are the minority
    skipped = [c for c in comparisons if c.skipped]
    assert all(c.skipped for c in skipped) and len(skipped) < len(comparisons) / 2
    report = build_report(comparisons, None)
    assert report["summary"]["in_sample"] and len(report["rows"]) == len(ROWS)
    assert "held_out" not in report["summary"]


def test_every_row_names_its_source_group():
    assert all(r.get("source_group") for r in ROWS)
    # a group is one document: its rows share a host (a harness at one release, or one thread)
    hosts: dict[str, set[str]] = {}
    for r in ROWS:
        hosts.setdefault(r.group, set()).add(r.get("source_url").split("/")[2])
    assert all(len(h) == 1 for h in hosts.values())


def test_stored_report_is_current(comparisons):
    """The report's default predictions are today's: a model change must be followed by
    `python -m core validate --write` (which also redoes the leave-one-source-out fit)."""
    report = load_report()
    stored = {r["id"]: r for r in report["rows"]}
    assert stored.keys() == {c.row.id for c in comparisons}
    for c in comparisons:
        assert stored[c.row.id]["predicted"] == pytest.approx(c.predicted, rel=1e-3, abs=1e-3), c.row.id
        assert stored[c.row.id]["source_group"] == c.row.group
    assert report["summary"]["held_out"] and report["fit"]["on_all_sources"]
    held = {c.row.id for c in held_out_comparisons(report)}
    assert held == {c.row.id for c in comparisons}  # memory rows carry their (unfitted) prediction too


def test_error_bands_file_is_current():
    stored = json.loads(ERRORS_PATH.read_text())
    fresh = errors_table(held_out_comparisons(load_report()))
    assert stored.keys() == fresh.keys()
    for metric, scopes in fresh.items():
        for scope, stats in scopes.items():
            assert stored[metric][scope]["rows"] == stats["rows"]
            assert stored[metric][scope]["p90_ape"] == pytest.approx(stats["p90_ape"], abs=1e-3)


def test_summary_by_hand():
    row = Row(fields={"id": "x", "gpu": "a10"})
    cases = [Comparison(row, {"tpot_ms": p}, {"tpot_ms": 100.0}) for p in (90.0, 110.0, 130.0)]
    stats = summary(cases)["tpot_ms"]
    assert stats["rows"] == 3 and stats["median_ape"] == pytest.approx(0.10)


def test_source_summary_counts_each_source_once():
    a = Row(fields={"id": "a", "gpu": "a10", "source_group": "one"})
    b = Row(fields={"id": "b", "gpu": "a10", "source_group": "two"})
    # source "one": errors 10 %, 10 %, 10 % (median 10 %); source "two": 50 % -> median of (10, 50) = 30 %
    cases = [Comparison(a, {"tpot_ms": 110.0}, {"tpot_ms": 100.0})] * 3 + [
        Comparison(b, {"tpot_ms": 150.0}, {"tpot_ms": 100.0})
    ]
    assert summary(cases)["tpot_ms"]["median_ape"] == pytest.approx(0.10)
    stats = source_summary(cases)["tpot_ms"]
    assert stats["sources"] == 2 and stats["median_ape"] == pytest.approx(0.30)


def test_band_widens_the_estimate_by_the_p90_error():
    result = band(100.0, "tpot_ms", "hbm")
    assert result is not None and result.low < 100.0 < result.high
    assert result.high == pytest.approx(100.0 * (1 + result.p90_error))


def test_sensitivity_signs(deploy):
    dep = deploy(gpu="a10", max_model_len=8192)
    work = Workload(input_len=2048, output_len=512, batch=16)
    swings = {s.factor: s for s in sensitivity(dep, work, "tpot")}
    assert swings["bandwidth_efficiency"].high < 0 < swings["bandwidth_efficiency"].low  # faster memory, lower TPOT
    assert swings["batch"].high > 0
    ceiling = {s.factor: s for s in sensitivity(dep, work, "max_concurrency")}
    assert ceiling["input_len"].high < 0 and ceiling["batch"].width == 0
