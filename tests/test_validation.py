"""The validation set: every row is usable and predicted; reported errors and bands are current."""

from __future__ import annotations

import json
from pathlib import Path

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


def test_band_divides_and_multiplies_the_estimate_by_the_p90_factor():
    result = band(100.0, "tpot_ms", "hbm")
    assert result is not None and 0 < result.low < 100.0 < result.high
    assert result.high == pytest.approx(100.0 * result.factor) and result.low == pytest.approx(100.0 / result.factor)


def test_sensitivity_signs(deploy):
    dep = deploy(gpu="a10", max_model_len=8192)
    # 16 requests of 768 tokens, and twice as many, both fit the A10's KV cache (39 do), so doubling
    # the batch doubles the running batch (beyond the cache it would only add waiting)
    work = Workload(input_len=512, output_len=256, batch=16)
    swings = {s.factor: s for s in sensitivity(dep, work, "tpot")}
    assert swings["bandwidth_efficiency"].high < 0 < swings["bandwidth_efficiency"].low  # faster memory, lower TPOT
    assert swings["batch"].high > 0
    ceiling = {s.factor: s for s in sensitivity(dep, work, "max_concurrency")}
    assert ceiling["input_len"].high < 0 and ceiling["batch"].width == 0


def test_leave_one_source_out_never_fits_a_source_on_itself(monkeypatch):
    """Each held-out row is predicted at the grid point that is best on the OTHER sources' rows."""
    import numpy as np

    from core.validation import grouped
    from core.validation.dataset import SPEED_METRICS

    singles = [r for r in ROWS if r.get("kind") == "single_stream" and r.get("engine") in ("vllm", "sglang")]
    by_group: dict[str, list[Row]] = {}
    for r in singles:
        by_group.setdefault(r.group, []).append(r)
    rows = [r for g in sorted(by_group)[:4] for r in by_group[g][:3]]
    monkeypatch.setattr(grouped, "FITTED", {"bandwidth": (0.45, 0.9)})
    monkeypatch.setattr(grouped, "MIN_CLASS_ROWS", 10**6)  # one fit over all classes, as recomputed below
    held = grouped.leave_one_source_out(rows, workers=1)
    points = grouped.grid_points()
    at = [compare_all(rows, grouped._efficiencies(p)) for p in points]
    for c in held.comparisons:
        if not c.predicted:
            continue
        others = [(i, r) for i, r in enumerate(rows) if r.group != c.row.group]
        scores = [
            np.median([abs(e) for i, _ in others for k, e in at[p][i].errors.items() if k in SPEED_METRICS])
            + grouped.pull(points[p])
            for p in range(len(points))
        ]
        best = int(np.argmin(scores))
        mine = next(i for i, r in enumerate(rows) if r.id == c.row.id)
        assert c.predicted == at[best][mine].predicted, c.row.id
    assert len({tuple(sorted(v.items())) for d in held.chosen.values() for v in d.values()}) >= 1


def test_the_defaults_are_the_constants_fitted_on_every_source():
    """CLASS_EFFICIENCY holds what the leave-one-source-out rule picks on all sources (report.json)."""
    from core.spec.efficiency import CLASS_EFFICIENCY

    fitted = load_report()["fit"]["on_all_sources"]
    for cls, values in fitted.items():
        for field, value in values.items():
            assert getattr(CLASS_EFFICIENCY[cls], field) == pytest.approx(value), (cls, field)


def test_an_in_process_benchmark_has_no_api_server_costs():
    from core.validation.dataset import deployment_for

    catalog = load_catalog()
    fields = {"id": "x", "engine": "vllm", "engine_version": "0.19.0", "gpu": "h100-sxm", "model": "llama-3.1-8b"}
    served = deployment_for(Row(fields=fields), catalog)
    offline = deployment_for(Row(fields={**fields, "front_end": "offline"}), catalog)
    assert served.efficiency.request_overhead_s > 0 and offline.efficiency.request_overhead_s == 0
    assert offline.efficiency.frontend_per_token_s == 0


def test_rows_that_look_impossible_are_excluded_with_their_reason(comparisons):
    excluded = [c for c in comparisons if c.row.get("excluded")]
    assert excluded and all(c.skipped.startswith("excluded: ") and not c.predicted for c in excluded)


def test_the_accuracy_doc_states_the_stored_reports_headline():
    # docs/accuracy.md's results table must be the report's (bench/accuracy_tables.py prints it):
    # a refit that moves the held-out medians without the doc being regenerated fails here
    doc = (Path(__file__).parents[1] / "docs" / "accuracy.md").read_text(encoding="utf-8")
    held = load_report()["summary"]["held_out"]
    for metric, name in (("kv_tokens", "KV capacity in tokens"), ("tpot_ms", "TPOT"), ("ttft_ms", "TTFT")):
        stats = held[metric]
        cells = f"| {stats['rows']} | {100 * stats['median_ape']:.1f} % | {100 * stats['p90_ape']:.1f} % |"
        assert f"| {name} |" in doc and cells in doc, (name, cells)
