"""The speed budget: every speed target of the project, re-measured by one command.

    .venv/bin/python bench/speed_budget.py            (about 4 minutes; prints a Markdown table)

Measures, on this machine: the core sweep, each page's server-side rerun (AppTest), the simulator
at 10,000 requests (one core), first page load and one slider update in a real browser (Chromium
via Playwright against `streamlit run`), and the workshop (10 and 30 simulated students against one
server process, and 30 against three). Each figure stands next to its target; docs/benchmarks.md
records a run. Timing is never asserted in tests.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_rerun import PAGES, p95, time_page  # noqa: E402
from bench_sweep import deployment, timed  # noqa: E402
from workshop_load import run_workshop  # noqa: E402
from workshop_servers import HOST, free_port, start_server  # noqa: E402

from core.estimate.sweep import sweep  # noqa: E402
from core.serving.simulate import simulate  # noqa: E402
from core.serving.traffic import Lengths, Traffic  # noqa: E402
from core.spec.engine import EngineConfig  # noqa: E402

Row = tuple[str, str, str, bool]  # what, figure, target, met


def core_sweep() -> list[Row]:
    dep = deployment("llama-3.1-8b", "h100-sxm", 1)
    batches, prompts = np.arange(1, 1025), np.geomspace(64, 65536, 64).round()
    median, _ = timed(lambda: sweep(dep, batches, prompts, 256))
    return [("core sweep, 1024 batches x 64 prompt lengths", f"{median * 1e3:.1f} ms", "< 20 ms", median < 0.020)]


def page_reruns() -> list[Row]:
    rows = []
    for page in PAGES:
        fresh, _ = time_page(page, "en")
        median = statistics.median(fresh)
        name = Path(page).stem.removesuffix("_page")
        target = 0.150 if name == "explorer" else 0.5
        rows.append(
            (
                f"{name} page rerun after an input change (median, P95)",
                f"{median * 1e3:.0f} ms, {p95(fresh) * 1e3:.0f} ms",
                f"< {target * 1e3:.0f} ms",
                median < target,
            )
        )
    return rows


def simulator() -> list[Row]:
    rows = []
    for gpu, traffic, shape in (
        ("a10", Traffic(mode="rate", rate_per_s=1.0), "A10, 1 req/s (the slowest case)"),
        ("h100-sxm", Traffic(mode="rate", rate_per_s=20.0), "H100, 20 req/s"),
    ):
        dep = deployment("llama-3.1-8b", gpu, 1)
        dep = dataclasses.replace(dep, engine=EngineConfig(max_model_len=4096))
        start = time.perf_counter()
        simulate(dep, traffic, 10_000, Lengths(mean=1000), Lengths(mean=200), seed=0)
        wall = time.perf_counter() - start
        rows.append((f"simulator, 10,000 requests, {shape}", f"{wall:.2f} s", "< 1 s", wall < 1.0))
    return rows


def browser() -> list[Row]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        return [("browser: first load, slider update", "not measured (no Chromium)", "", False)]
    from playwright.sync_api import expect, sync_playwright

    port = free_port()
    server = start_server(port)
    url = f"http://{HOST}:{port}"
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=["--headless", "--no-sandbox", "--disable-gpu"])
            warm = browser.new_page()  # the server's first session pays its start-up once
            warm.goto(url)
            warm.get_by_test_id("stMetricValue").first.wait_for(timeout=60_000)
            warm.close()
            loads, updates = [], []
            for _ in range(5):
                context = browser.new_context(viewport={"width": 1400, "height": 1000})
                context.route("**/*", lambda r: r.continue_() if r.request.url.startswith(url) else r.abort())
                page = context.new_page()
                start = time.perf_counter()
                page.goto(url)
                throughput = page.get_by_test_id("stMetric").filter(has_text="Throughput")
                throughput.get_by_test_id("stMetricValue").wait_for(timeout=60_000)
                loads.append(time.perf_counter() - start)
                before = throughput.get_by_test_id("stMetricValue").inner_text()
                slider = page.get_by_role("slider", name="Concurrent requests (batch)")
                slider.focus()
                start = time.perf_counter()
                slider.press("ArrowRight")
                expect(throughput.get_by_test_id("stMetricValue")).not_to_have_text(before, timeout=30_000)
                updates.append(time.perf_counter() - start)
                context.close()
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=20)
    load, update = statistics.median(loads), statistics.median(updates)
    return [
        ("browser: first page load to the first metric (median of 5)", f"{load:.2f} s", "< 5 s", load < 5),
        (
            "browser: one slider step to the updated metric (median of 5)",
            f"{update * 1e3:.0f} ms",
            "< 500 ms",
            update < 0.5,
        ),
    ]


def workshop(seconds: float) -> list[Row]:
    rows = []
    for students, servers in ((10, 1), (30, 1), (30, 3)):
        result = run_workshop(students, seconds, servers=servers)
        lat = result["latency_ms"]
        clean = not result["errors"] and not result["wrong_values"]
        rows.append(
            (
                f"workshop, {students} students on {servers} server process{'es' if servers > 1 else ''}: "
                "update latency P95 (P50), errors",
                f"{lat['p95']:.0f} ms ({lat['p50']:.0f} ms), {len(result['errors']) + len(result['wrong_values'])}",
                "< 500 ms, 0",
                lat["p95"] < 500 and clean,
            )
        )
        rows.append(
            (
                f"workshop, {students} students on {servers}: server memory growth",
                f"{result['server_rss_mib']['growth']:.0f} MiB",
                "< 200 MiB",
                result["server_rss_mib"]["growth"] < 200,
            )
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workshop-seconds", type=float, default=60.0)
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    rows = core_sweep() + page_reruns() + simulator() + browser() + workshop(args.workshop_seconds)
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs; {time.strftime('%Y-%m-%d')}\n")
    print("| what | measured | target | met |")
    print("|---|---|---|---|")
    for what, figure, target, met in rows:
        print(f"| {what} | {figure} | {target} | {'yes' if met else '**no**'} |")


if __name__ == "__main__":
    main()
