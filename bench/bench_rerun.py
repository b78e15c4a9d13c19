"""Benchmark: server-side rerun time of each page when a slider moves (target Explorer < 150 ms).

Runs the app in Streamlit's AppTest (the same script runner the server uses, in-process, without
the websocket) and times reruns after the batch and prompt-length sliders move (on the Plan page,
the number of users); the first pass meets new values (sweeps and plans are computed), the second
pass repeats them (they come from the cache). Prints a Markdown table for docs/benchmarks.md.

Run: .venv/bin/python bench/bench_rerun.py
"""

from __future__ import annotations

import platform
import statistics
import time
from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")
PAGES = [
    "pages/explorer_page.py",
    "pages/plan_page.py",
    "pages/loadtest_page.py",
    "pages/learn_page.py",
    "pages/compare_page.py",
    "pages/catalog_page.py",
]
BATCHES = [2, 5, 9, 13, 17, 24, 31, 40, 52, 64, 80, 99, 128, 160, 200, 256, 333, 420, 512, 640]
LEVERS = {"spec": "draft", "prefix": "1024", "lora_n": "4", "attn": "eager", "offload_w": "1.0"}
"""Every what-if lever on at once: the Explorer's Optimizations panel re-estimates once per lever."""
PROMPTS = [64, 128, 256, 512, 1024, 1536, 3072, 4096, 6144, 2048]  # each changes the cached sweep


def time_page(page: str, lang: str, query: dict[str, str] | None = None) -> tuple[list[float], list[float]]:
    st.cache_data.clear()
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["lang"] = lang
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    at.switch_page(page).run()
    if page.endswith("compare_page.py"):
        at.button(key="save_scenario").click().run()
    passes = []
    for _ in range(2):
        samples = []
        for i, batch in enumerate(BATCHES):
            if page.endswith("plan_page.py"):  # the plan reads its own inputs
                at.number_input(key="plan_users").set_value(batch)
            elif page.endswith("loadtest_page.py"):  # a new rate: a new 1,000-request simulation
                at.number_input(key="lt_rate").set_value(batch / 100)
            else:
                at.number_input(key="batch").set_value(batch)  # the box the sidebar's batch slider drives
                at.number_input(key="input_len").set_value(PROMPTS[i % len(PROMPTS)])
            start = time.perf_counter()
            at.run()
            samples.append(time.perf_counter() - start)
            assert not at.exception, at.exception
        passes.append(samples)
    return passes[0], passes[1]


def p95(samples: list[float]) -> float:
    return sorted(samples)[int(0.95 * (len(samples) - 1))]


def main() -> None:
    print(f"Python {platform.python_version()}, streamlit {st.__version__}; {len(BATCHES)} reruns per pass\n")
    print("| page | lang | new scenario median [ms] | P95 [ms] | cached median [ms] |")
    print("|---|---|---|---|---|")
    for page in PAGES:
        # AppTest re-serializes a selectbox or segmented control through its format_func outside the
        # session, in English, so pages with translated option labels are driven in English only
        for lang in ("en",) if page.endswith(("plan_page.py", "loadtest_page.py")) else ("en", "zh"):
            fresh, cached = time_page(page, lang)
            name = Path(page).stem.removesuffix("_page")
            print(
                f"| {name} | {lang} | {statistics.median(fresh) * 1e3:.0f} | {p95(fresh) * 1e3:.0f} | "
                f"{statistics.median(cached) * 1e3:.0f} |"
            )
    fresh, cached = time_page("pages/explorer_page.py", "en", LEVERS)
    print(
        f"| explorer, every lever on | en | {statistics.median(fresh) * 1e3:.0f} | {p95(fresh) * 1e3:.0f} | "
        f"{statistics.median(cached) * 1e3:.0f} |"
    )


if __name__ == "__main__":
    main()
