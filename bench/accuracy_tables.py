"""Print docs/accuracy.md's tables from the stored validation report (data/validation/report.json).

The report is written by ``python -m core validate --write`` (every row predicted in sample and held
out by source); this script only formats it, so the tables in docs/accuracy.md are reproducible.

Run: .venv/bin/python bench/accuracy_tables.py
"""

from __future__ import annotations

import collections
import re
import statistics

from core.spec.catalog import load_catalog
from core.spec.release import engine_id, parse_release
from core.validation.dataset import load_rows
from core.validation.report import load_report

TARGETS = {
    "kv_tokens": ("KV capacity in tokens", 0.05),
    "weights_gib": ("weights", 0.01),
    "tpot_ms": ("TPOT", 0.10),
    "ttft_ms": ("TTFT", 0.20),
    "ttft_p99_ms": ("TTFT P99", None),
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
    for scope, title in (
        ("held_out_by_engine", "engine"),
        ("held_out_by_class", "GPU class"),
        ("held_out_by_traffic", "traffic"),
        ("held_out_by_architecture", "architecture"),
    ):
        print(f"\n| metric / {title} | rows | median | P90 |\n|---|---|---|---|")
        for key, stats in summary.get(scope, {}).items():
            print(f"| {key} | {stats['rows']} | {pct(stats['median_ape'])} | {pct(stats['p90_ape'])} |")
    fit = report["fit"]
    print("\nfitted on every source:", fit["on_all_sources"])
    folds = fit["by_held_out_source"].values()
    chosen = collections.Counter((cls, tuple(sorted(v.items()))) for per in folds for cls, v in per.items())
    print("choices across folds:")
    for (cls, values), count in chosen.most_common():
        print(f"  {cls}: {dict(values)} in {count} folds")
    print_fit_verdicts(rows)
    print_bias_by_group(rows, catalog)
    print_burst_concurrency(rows)
    print("\nexcluded / out of scope:")
    for reason, count in collections.Counter(r["skipped"] for r in rows if r["skipped"]).most_common():
        print(f"  {count} x {reason}")


SPEED = ("ttft_ms", "tpot_ms", "output_tokens_per_s")

FAILED_START = re.compile(r"-fail(ed)?$")
"""Start-up rows whose engine did not start carry ``-fail`` or ``-failed`` at the end of their id
(their caveats say why); every other start-up log is of an engine that started."""


def print_fit_verdicts(report_rows) -> None:
    """The fit verdict against the engine's: the tool says a setup fits when its KV budget is
    positive and holds one request of max_model_len (vLLM's start-up check, max concurrency >= 1)."""
    right, wrong = 0, []
    for r in report_rows:
        if r["kind"] != "startup_log" or r["problem"] is not None or r["skipped"] is not None:
            continue
        predicted = r["predicted"]
        fits = predicted.get("kv_cache_gib", 0) > 0 and predicted.get("max_concurrency", 0) >= 1
        started = not FAILED_START.search(r["id"])
        if fits == started:
            right += 1
        else:
            wrong.append(f"{r['id']} ({'started' if started else 'did not start'}; predicted {predicted})")
    print(f"\nfit verdict: right on {right} of {right + len(wrong)} start-up rows")
    for line in wrong:
        print(f"  wrong: {line}")


def row_tags(row, catalog) -> list[str]:
    """The groups a validation row belongs to in the bias table (model kind, layout, engine, traffic)."""
    model = catalog.model(row.get("model"))
    gpus = int(row.number("num_gpus") or 1)
    engine = engine_id(row.get("engine"))
    tags = ["all", "moe" if model.moe else "dense", "tp1" if gpus == 1 else "tp>1"]
    if model.moe and model.mla:
        tags.append("moe+mla")
    tags.append(catalog.gpu(row.get("gpu")).vendor.lower())
    if engine == "vllm":
        release = parse_release(row.get("engine"), row.get("engine_version"))
        tags.append("vllm V1" if release.vllm_v1 else "vllm V0")
    else:
        tags.append(engine)
    tags.append(f"traffic:{row.get('traffic') or 'unstated'}")
    tags.append(f"lengths:{row.get('lengths') or 'fixed'}")
    return tags


def print_bias_by_group(report_rows, catalog) -> None:
    """Held-out error and bias (median of predicted / measured - 1) per group of rows."""
    source = {row.id: row for row in load_rows()}
    cells: dict[str, dict[str, list[float]]] = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in report_rows:
        if r["problem"] is not None or r["skipped"] is not None:
            continue
        errors = {m: e for m, e in (r.get("held_out_error") or {}).items() if m in SPEED}
        for tag in row_tags(source[r["id"]], catalog):
            for metric, error in errors.items():
                cells[tag][metric].append(error)
    print("\n| group | TTFT rows / median / bias | TPOT rows / median / bias | tokens/s rows / median / bias |")
    print("|---|---|---|---|")
    order = sorted(cells, key=lambda t: (t != "all", -sum(len(v) for v in cells[t].values())))
    for tag in order:
        parts = []
        for metric in SPEED:
            values = cells[tag].get(metric, [])
            if not values:
                parts.append("-")
                continue
            median = statistics.median(abs(v) for v in values)
            bias = statistics.median(values)
            parts.append(f"{len(values)} / {100 * median:.0f} % / {100 * bias:+.0f} %")
        print(f"| {tag} | " + " | ".join(parts) + " |")


def print_burst_concurrency(report_rows) -> None:
    """Requests sent all at once: is the TTFT miss how many requests the engine runs together? The
    mean number running is output tokens/s x the mean gap between a request's tokens (Little's law,
    with the median TPOT standing in for the mean); its held-out bias against the TTFT bias."""
    source = {row.id: row for row in load_rows()}
    pairs = []
    for r in report_rows:
        if r["problem"] is not None or r["skipped"] is not None or source[r["id"]].get("traffic") != "all_at_once":
            continue
        measured, predicted = r["measured"], r.get("held_out") or {}
        if all(m in measured and m in predicted for m in SPEED):
            running = predicted["output_tokens_per_s"] * predicted["tpot_ms"]
            running /= measured["output_tokens_per_s"] * measured["tpot_ms"]
            pairs.append((running - 1, predicted["ttft_ms"] / measured["ttft_ms"] - 1))
    if len(pairs) < 3:
        return
    running_bias, ttft_bias = zip(*pairs, strict=True)
    print(
        f"\nall at once, {len(pairs)} rows with all three speeds: running requests (tokens/s x TPOT) bias "
        f"{100 * statistics.median(running_bias):+.0f} %, TTFT bias {100 * statistics.median(ttft_bias):+.0f} %, "
        f"correlation {statistics.correlation(running_bias, ttft_bias):+.2f}"
    )


if __name__ == "__main__":
    main()
