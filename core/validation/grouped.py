"""Leave-one-source-out validation: how the model does on a source it has never seen.

Rows are grouped by source document (``source_group``: one harness at one release, or one issue
thread). The speed constants that are fitted (:data:`FITTED`, per GPU memory class) are chosen on
every group but one, and the held-out group is predicted with them; repeated for every group, the
held-out predictions measure generalization rather than memory of a document. Memory terms are not
fitted (they are the engines' own accounting), so their held-out prediction is the default one.

The fit: for each class, the grid point (:func:`grid_points`) with the lowest median absolute
percentage error over the TTFT (median and P99), TPOT and output-throughput rows of that class in
the training groups (all classes' rows when the class has fewer than :data:`MIN_CLASS_ROWS`), plus a
small pull toward each constant's physical starting value (:func:`pull`). Seven named constants per
class, fourteen in all, each a coefficient on a physical term (compute and bandwidth rates, the
MoE kernels' share and fixed cost per layer, the API server per streamed token and per chat request,
vLLM V0's host work per sequence); none per row, document, model or GPU. Predictions at
every grid point are computed once (:func:`grid_predictions`, each row only at the combinations of
the constants that can change it); each fold is then an argmin over that table.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np

from core.spec.catalog import load_catalog
from core.spec.efficiency import CLASS_EFFICIENCY, Efficiency, class_efficiency
from core.spec.release import engine_id, parse_release
from core.validation.dataset import SPEED_METRICS, Comparison, Row, compare_all, load_rows

FITTED: dict[str, tuple[float, ...]] = {
    "compute": (0.5, 0.7),
    "bandwidth": (0.6, 0.75),
    "frontend_per_token_s": (0.0, 60e-6),
    "expert": (0.35, 0.6, 1.0),
    "moe_layer_overhead_s": (0.0, 50e-6),
    "chat_ingest_s": (0.0, 8e-3),
    "v0_per_sequence_s": (20e-6, 100e-6, 250e-6),
}
"""The efficiency fields fitted inside the folds and the values tried: fractions of datasheet
peaks, the API server's work per streamed token [s], the MoE kernels' share of the dense GEMMs'
rates, the fixed cost of a MoE layer per step [s], the API server's serial event-loop work per chat
request where the release renders templates on the loop [s], and vLLM V0's host work per scheduled
sequence [s]. The request overhead stays at its sourced 20 ms: fitted too (20 or 45 ms, on the 284
rows of an earlier pass) it made the held-out errors worse (TTFT 53.3 -> 56.2 %, tokens/s 24.9 ->
26.0 %), fitting the documents rather than the mechanism."""


def _relevant(field: str, row: Row) -> bool:
    """Whether ``field`` can change the prediction of ``row`` (a row is evaluated once per
    combination of the fields that matter to it, not once per grid point)."""
    if field == "expert":
        return load_catalog().model(row.get("model")).moe is not None
    if field == "frontend_per_token_s":
        return row.get("front_end") != "offline"
    if field == "moe_layer_overhead_s":
        return load_catalog().model(row.get("model")).moe is not None
    if field == "chat_ingest_s":
        release = parse_release(row.get("engine"), row.get("engine_version"))
        endpoint = row.get("endpoint") or "chat"
        return row.get("front_end") != "offline" and endpoint == "chat" and release.renders_chat_on_loop
    if field == "v0_per_sequence_s":
        return (
            not parse_release(row.get("engine"), row.get("engine_version")).vllm_v1
            and engine_id(row.get("engine")) == "vllm"
        )
    return True


MIN_CLASS_ROWS = 8
CLASSES = tuple(CLASS_EFFICIENCY)


def grid_points() -> list[dict[str, float]]:
    """Every combination of the :data:`FITTED` values, as field -> value."""
    names = list(FITTED)
    return [dict(zip(names, values, strict=True)) for values in itertools.product(*FITTED.values())]


def efficiencies_fitted(by_class: dict[str, dict[str, float]]) -> dict:
    """Each class's efficiency with its own fitted values (HeldOut.fitted_on_all)."""
    return {cls: dataclasses.replace(class_efficiency(cls), **values) for cls, values in by_class.items()}


def _efficiencies(point: dict[str, float]) -> dict:
    """Each class's efficiency with the point's values; the host cost per sequence is left to each
    row's release (vLLM V0 rows take v0_per_sequence_s)."""
    return {cls: dataclasses.replace(class_efficiency(cls), **point) for cls in CLASSES}


def _predict_at(args) -> list[dict[str, float]]:
    rows, point = args
    return [c.predicted for c in compare_all(rows, _efficiencies(point))]


def _projection(point: dict[str, float], row: Row) -> tuple:
    """The grid point as far as ``row`` is concerned: the fields that do not matter to it at their first value."""
    return tuple(value if _relevant(f, row) else FITTED[f][0] for f, value in point.items())


def grid_predictions(rows: list[Row], points: list[dict[str, float]], workers: int | None = None) -> list[list]:
    """predictions[point][row]: each speed row predicted with each grid point's efficiencies, every
    row evaluated once per distinct combination of the fields relevant to it."""
    names = list(points[0]) if points else []
    needed: dict[tuple, list[int]] = {}
    for i, row in enumerate(rows):
        for key in {_projection(point, row) for point in points}:
            needed.setdefault(key, []).append(i)
    jobs = [([rows[i] for i in members], dict(zip(names, key, strict=True))) for key, members in needed.items()]
    workers = workers or min(len(jobs), os.cpu_count() or 1)
    if workers <= 1:
        results = [_predict_at(job) for job in jobs]
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(_predict_at, jobs))
    at = {
        (key, i): predicted
        for (key, members), out in zip(needed.items(), results, strict=True)
        for i, predicted in zip(members, out, strict=True)
    }
    return [[at[(_projection(point, row), i)] for i, row in enumerate(rows)] for point in points]


@dataclass(frozen=True)
class HeldOut:
    """The leave-one-source-out result: one comparison per row, and what each fold chose."""

    comparisons: list[Comparison]
    """Every row predicted by constants fitted without its source group."""
    chosen: dict[str, dict[str, dict[str, float]]]
    """group -> class -> the fitted constants used for that group's rows."""
    fitted_on_all: dict[str, dict[str, float]]
    """class -> the constants chosen on every group (what the defaults should be)."""


def _error_table(rows, predictions, metrics):
    """abs error [point, k] and the row index of each (row, metric) pair k."""
    pairs = [(i, m, measured) for i, row in enumerate(rows) for m, measured in metrics(row).items()]
    table = np.full((len(predictions), len(pairs)), np.nan)
    for p, predicted in enumerate(predictions):
        for k, (i, m, measured) in enumerate(pairs):
            value = predicted[i].get(m)
            if value is not None:
                table[p, k] = abs(value / measured - 1)
    return table, np.array([i for i, _, _ in pairs], dtype=int)


PHYSICAL: dict[str, float] = {name: getattr(Efficiency(), name) for name in FITTED}
"""Each fitted field's starting value, the dataclass default with its source (docs/model.md, "Default
assumptions"): the point the fit is pulled toward."""
PULL = 0.002
"""Median APE a field's move from its starting value to the far end of its grid must buy (0.2
percentage points), so a fit that gains nothing keeps the physical value rather than a grid edge."""


def pull(point: dict[str, float]) -> float:
    """The regularization of a grid point: PULL x the summed distances of its fields from their
    starting values, each as a share of its grid's span."""
    total = 0.0
    for name, value in point.items():
        values = FITTED[name]
        span = max(values) - min(values)
        total += abs(value - PHYSICAL[name]) / span if span else 0.0
    return PULL * total


def _best(table, mask, penalty=None):
    if not mask.any():
        return None
    scores = np.nanmedian(table[:, mask], axis=1)
    if penalty is not None:
        scores = scores + penalty
    return int(np.nanargmin(scores))


def leave_one_source_out(rows=None, workers: int | None = None) -> HeldOut:
    """Every row predicted with constants fitted on the other source groups (module docstring)."""
    catalog = load_catalog()
    rows = list(rows if rows is not None else load_rows())
    defaults = {id(c.row): c for c in compare_all(rows)}
    base = [defaults[id(r)] for r in rows]
    speed_rows = [c.row for c in base if c.predicted and any(m in c.measured for m in SPEED_METRICS)]
    points = grid_points()
    predictions = grid_predictions(speed_rows, points, workers)

    def speed_measured(row):
        return {m: v for m, v in defaults[id(row)].measured.items() if m in SPEED_METRICS}

    table, owner = _error_table(speed_rows, predictions, speed_measured)
    penalty = np.array([pull(point) for point in points])
    groups = np.array([r.group for r in speed_rows])[owner]
    classes = np.array([catalog.gpu(r.get("gpu")).memory_type for r in speed_rows])[owner]

    def fit(train_mask):
        out = {}
        for cls in CLASSES:
            mask = train_mask & (classes == cls)
            if mask.sum() < MIN_CLASS_ROWS:
                mask = train_mask
            out[cls] = _best(table, mask, penalty)
        return out

    everything = fit(np.ones(len(owner), dtype=bool))
    chosen: dict[str, dict[str, dict[str, float]]] = {}
    index_of = {id(r): i for i, r in enumerate(speed_rows)}
    held: list[Comparison] = []
    fold_cache: dict[str, dict] = {}
    for c in base:
        row = c.row
        if id(row) not in index_of:
            held.append(c)
            continue
        if row.group not in fold_cache:
            fold_cache[row.group] = fit(groups != row.group)
            chosen[row.group] = {cls: points[p] for cls, p in fold_cache[row.group].items() if p is not None}
        cls = catalog.gpu(row.get("gpu")).memory_type
        p = fold_cache[row.group].get(cls)
        predicted = predictions[p][index_of[id(row)]] if p is not None else c.predicted
        held.append(dataclasses.replace(c, predicted=predicted))
    return HeldOut(
        comparisons=held,
        chosen=chosen,
        fitted_on_all={cls: points[p] for cls, p in everything.items() if p is not None},
    )
