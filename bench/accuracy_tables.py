"""Print docs/accuracy.md's tables from the stored validation report (data/validation/report.json).

The report is written by ``python -m core validate --write`` (every row predicted in sample and held
out by source); this script only formats it, so the tables in docs/accuracy.md are reproducible.

Run: .venv/bin/python bench/accuracy_tables.py
"""

from __future__ import annotations

import collections

from core.spec.catalog import load_catalog
from core.validation.report import load_report

TARGETS = {
    "kv_tokens": ("KV capacity in tokens", 0.05),
    "weights_gib": ("weights", 0.01),
    "tpot_ms": ("TPOT", 0.10),
    "ttft_ms": ("TTFT", 0.20),
    "output_tokens_per_s": ("output tokens/s", 0.12),
    "kv_cache_gib": ("KV budget (GiB)", None),
    "max_concurrency": ("engine's max concurrency", None),
}


def pct(value: float) -> str:
    return f"{100 * value:.1f} %"


def main() -> None:
    report = load_report()
    summary = report["summary"]
    rows = report["rows"]
    scored = [r for r in rows if r["problem"] is None and r["skipped"] is None]
    print(f"{len(rows)} rows from {report['sources']} sources; {len(scored)} predicted\n")
    engines = collections.Counter(r["engine"] for r in rows)
    print("engines:", dict(engines))
    catalog = load_catalog()
    gpus = collections.Counter(r["gpu"] for r in rows)
    print(f"{len(gpus)} GPU types; classes:", dict(collections.Counter(catalog.gpu(g).memory_type for g in gpus)))
    print()
    print(
        "| metric | target (median) | rows | held out: median | P90 | median of source medians (sources) "
        "| in sample: median | met |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for metric, (name, target) in TARGETS.items():
        held = summary["held_out"].get(metric)
        if not held:
            continue
        source = summary["held_out_by_source"][metric]
        inside = summary["in_sample"][metric]
        met = "" if target is None else ("yes" if held["median_ape"] <= target else "no")
        print(
            f"| {name} | {'' if target is None else '≤ ' + pct(target)} | {held['rows']} | {pct(held['median_ape'])} "
            f"| {pct(held['p90_ape'])} | {pct(source['median_ape'])} ({source['sources']}) "
            f"| {pct(inside['median_ape'])} | {met} |"
        )
    for scope, title in (("held_out_by_engine", "engine"), ("held_out_by_class", "GPU class")):
        print(f"\n| metric / {title} | rows | median | P90 |\n|---|---|---|---|")
        for key, stats in summary[scope].items():
            print(f"| {key} | {stats['rows']} | {pct(stats['median_ape'])} | {pct(stats['p90_ape'])} |")
    fit = report["fit"]
    print("\nfitted on every source:", fit["on_all_sources"])
    folds = fit["by_held_out_source"].values()
    chosen = collections.Counter((cls, tuple(sorted(v.items()))) for per in folds for cls, v in per.items())
    print("choices across folds:")
    for (cls, values), count in chosen.most_common():
        print(f"  {cls}: {dict(values)} in {count} folds")
    print("\nexcluded / out of scope:")
    for reason, count in collections.Counter(r["skipped"] for r in rows if r["skipped"]).most_common():
        print(f"  {count} x {reason}")


if __name__ == "__main__":
    main()
