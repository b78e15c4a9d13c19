"""Memory-only validation in about a second: the start-up rows of data/validation predicted as
``python -m core validate`` predicts them (memory terms are not fitted, so held out by source and in
sample are the same), and the CUDA-graph experiment of issue 30 (graphs fitted leave-one-source-out).

Run: .venv/bin/python bench/memory_validation.py [--rows] [--graphs]

--graphs fits CUDA-graph memory = a + b x layers per GPU x capture sizes / 1000 (vLLM 0.33's default
capture list: 1, 2, 4, 8-248 by 8, 256-max by 16, max = min(2 x max_num_seqs, 512, max_num_batched_tokens))
on the logs that print "Graph capturing finished ... took X GiB", each source's rows predicted with
a fit made without that source, and reports the KV error of the rows whose release charges graphs
(vLLM >= 0.20) before (the flat 0.9 GiB) and after.
"""

from __future__ import annotations

import dataclasses
import sys

import numpy as np

from core.estimate.result import estimate
from core.spec import units
from core.spec.catalog import load_catalog
from core.spec.deployment import Workload
from core.spec.release import parse_release
from core.validation.dataset import compare_all, deployment_for, load_rows, measured, source_summary, summary

MEMORY = ("kv_tokens", "kv_cache_gib", "weights_gib", "max_concurrency")


def startup_rows():
    return [r for r in load_rows() if r.get("kind") == "startup_log"]


def report(comparisons) -> None:
    rows, sources = summary(comparisons), source_summary(comparisons)
    for m in MEMORY:
        if m in rows:
            r, s = rows[m], sources[m]
            print(
                f"{m:16s} rows {r['rows']:3d}  median {100 * r['median_ape']:5.2f} %  P90 {100 * r['p90_ape']:5.2f} %"
                f"  median of source medians {100 * s['median_ape']:5.2f} % ({s['sources']} sources)"
            )


def capture_sizes(dep) -> int:
    tokens, seqs = dep.batch_limits
    top = min(2 * seqs, 512, tokens)
    sizes = [i for i in (1, 2, 4) if i <= top] + list(range(8, min(top + 1, 256), 8)) + list(range(256, top + 1, 16))
    return len(set(sizes) | ({seqs} if seqs <= top else set()))


def graph_features(row, catalog) -> np.ndarray:
    dep = deployment_for(row, catalog)
    return np.array([1.0, dep.model.num_layers / dep.parallel.pp * capture_sizes(dep) / 1000])


def graphs_held_out(comparisons) -> None:
    catalog = load_catalog()
    logged = [r for r in startup_rows() if r.get("cuda_graph_gib")]
    x = np.array([graph_features(r, catalog) for r in logged])
    y = np.array([float(r.get("cuda_graph_gib")) for r in logged])
    groups = np.array([r.group for r in logged])
    after = []
    for c in comparisons:
        row, errors = c.row, dict(c.errors)
        release = parse_release(row.get("engine"), row.get("engine_version")) if c.predicted else None
        if errors and release is not None and release.charges_cuda_graphs:
            keep = groups != row.group
            coef, *_ = np.linalg.lstsq(x[keep], y[keep], rcond=None)
            graphs = float(graph_features(row, catalog) @ coef)
            dep = deployment_for(row, catalog)
            dep = dataclasses.replace(dep, engine=dataclasses.replace(dep.engine, cuda_graph_bytes=graphs * units.GiB))
            result = estimate(dep, Workload(input_len=1, output_len=1))
            values = measured(row)
            predicted = {"kv_cache_gib": result.memory.kv_budget / units.GiB, "kv_tokens": result.kv.capacity_tokens}
            new = {k: predicted[k] / values[k] - 1 for k in predicted if k in values and k in errors}
            shown = " ".join(f"{k} {100 * errors[k]:+5.1f} % -> {100 * v:+5.1f} %" for k, v in new.items())
            print(f"  {row.id[:48]:48s} graphs {graphs:4.2f} GiB held out: {shown}")
            errors.update({k: v for k, v in new.items() if k in errors})
        after.append(
            dataclasses.replace(c, predicted={**c.predicted, **{k: c.measured[k] * (1 + v) for k, v in errors.items()}})
        )
    print("after (graphs fitted leave-one-source-out):")
    report(after)


def main(argv: list[str]) -> None:
    comparisons = compare_all(startup_rows())
    report(comparisons)
    if "--rows" in argv:
        for c in comparisons:
            if "kv_cache_gib" in c.errors:
                e = c.errors
                print(
                    f"  {c.row.id[:55]:55s} {c.row.get('engine_version')[:10]:10s} KV {100 * e['kv_cache_gib']:+6.1f} %"
                )
    if "--graphs" in argv:
        graphs_held_out(comparisons)


if __name__ == "__main__":
    main(sys.argv[1:])
