"""In-sample speed error of the aic backend against the roofline, on the validation rows it covers.

Every speed row (not a start-up log) that :func:`core.timing.aic_backend.coverage` accepts with
``backend="aic"`` is predicted twice with :func:`core.validation.dataset.compare_all` and the shipped
constants: once as it is (roofline) and once with the step times from AIConfigurator. Printed per
metric: rows, median |error|, P90 |error| and median signed error (bias); with ``--json PATH`` the
per-row errors too. Rows the backend does not cover are counted by reason.

Needs aiconfigurator-core (``pip install ".[aic]"`` in an environment of its own):

    PYTHONPATH=. /tmp/aicvenv/bin/python bench/aic_backend_errors.py [--json out.json]
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import time

import numpy as np

from core.spec.catalog import load_catalog
from core.timing import aic_backend
from core.validation import dataset

METRICS = ("ttft_ms", "ttft_p99_ms", "tpot_ms", "output_tokens_per_s")
PLAIN_DEPLOYMENT = dataset.deployment_for


def with_aic(row, catalog, efficiency=None):
    """The row's deployment with the aic backend."""
    dep = PLAIN_DEPLOYMENT(row, catalog, efficiency)
    return dataclasses.replace(dep, engine=dataclasses.replace(dep.engine, backend="aic"))


def covered_rows(rows, catalog) -> tuple[list, collections.Counter]:
    """The speed rows the backend covers, and why the others are left out (counts)."""
    kept, why = [], collections.Counter()
    for row in rows:
        if row.get("kind") == "startup_log" or row.get("excluded"):
            continue
        try:
            problem = aic_backend.coverage(with_aic(row, catalog))
        except (KeyError, ValueError) as err:
            problem = f"no deployment: {err}"
        if problem is None:
            kept.append(row)
        else:
            why[problem.split(" (")[0][:90]] += 1
    return kept, why


def errors(comparisons) -> dict[str, dict[str, float]]:
    """Per row id, the signed relative error of each speed metric it has."""
    return {
        c.row.id: {m: e for m, e in c.errors.items() if m in METRICS}
        for c in comparisons
        if c.predicted and not c.error and not c.skipped
    }


def table(by_backend: dict[str, dict[str, dict[str, float]]], groups: dict[str, str]) -> list[str]:
    """Rows, median |error|, P90 |error| and bias per metric, group (all, dense, MoE) and backend, on the
    rows both backends answered."""
    both = set.intersection(*(set(per_row) for per_row in by_backend.values()))
    lines = [f"{'metric':22} {'rows':6} {'backend':9} {'n':>4} {'median':>8} {'P90':>8} {'bias':>8}"]
    for metric in METRICS:
        for group in ("all", "dense", "moe"):
            ids = sorted(r for r in both if group in ("all", groups[r]))
            for name, per_row in by_backend.items():
                values = np.array([per_row[r][metric] for r in ids if metric in per_row[r]])
                if values.size:
                    lines.append(
                        f"{metric:22} {group:6} {name:9} {values.size:4d} {np.median(abs(values)):8.1%} "
                        f"{np.percentile(abs(values), 90):8.1%} {np.median(values):+8.1%}"
                    )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the per-row errors of both backends here")
    args = parser.parse_args()
    start = time.perf_counter()
    catalog = load_catalog()
    rows, why = covered_rows(dataset.load_rows(), catalog)
    print(f"{len(rows)} speed rows covered by aic {aic_backend.PIN}; left out: {sum(why.values())}")
    for reason, count in why.most_common():
        print(f"  {count:4d}  {reason}")
    by_backend = {"roofline": errors(dataset.compare_all(rows))}
    dataset.deployment_for = with_aic  # compare_all builds every row's deployment through it
    try:
        aic = dataset.compare_all(rows)
    finally:
        dataset.deployment_for = PLAIN_DEPLOYMENT
    by_backend["aic"] = errors(aic)
    for c in aic:
        if c.error:
            print(f"  aic error on {c.row.id}: {c.error}")
    groups = {row.id: "moe" if catalog.model(row.get("model")).moe else "dense" for row in rows}
    print("\n".join(table(by_backend, groups)))
    print(f"({time.perf_counter() - start:.0f} s)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(by_backend, fh, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
