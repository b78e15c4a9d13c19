"""Benchmark: simulator speed, 10,000 requests on one core (target: under 1 s), per traffic shape.

Run: OMP_NUM_THREADS=1 taskset -c 0 .venv/bin/python bench/bench_simulate.py
"""

from __future__ import annotations

import statistics
import time

from core.serving.simulate import simulate
from core.serving.traffic import Lengths, Traffic
from core.spec.catalog import load_catalog
from core.spec.deployment import Deployment
from core.spec.engine import EngineConfig
from core.spec.precision import kv_precision, weight_precision

REQUESTS = 10_000
REPEATS = 3
CASES = [
    ("a10", Traffic(mode="rate", rate_per_s=1.0), "fixed"),
    ("a10", Traffic(mode="rate", rate_per_s=1.0), "lognormal"),
    ("a10", Traffic(mode="rate", rate_per_s=3.0), "fixed"),  # overloaded: queue and preemptions
    ("h100-sxm", Traffic(mode="rate", rate_per_s=20.0), "fixed"),
    ("h100-sxm", Traffic(mode="rate", rate_per_s=20.0), "lognormal"),
    ("h100-sxm", Traffic(mode="concurrency", concurrency=64), "fixed"),
    ("h100-sxm", Traffic(mode="users", users=200, think_time_s=10.0), "lognormal"),
]


def main() -> None:
    catalog = load_catalog()
    weights = weight_precision("bf16")
    print(
        f"Llama-3.1-8B bf16, max_model_len 4096, 1000-token prompts and 200-token answers (mean), "
        f"{REQUESTS:,} requests, median and best of {REPEATS} runs\n"
    )
    print("| GPU | traffic | lengths | engine steps | simulated [s] | wall, median [s] | wall, best [s] |")
    print("|---|---|---|---|---|---|---|")
    for gpu, traffic, distribution in CASES:
        dep = Deployment(
            model=catalog.model("llama-3.1-8b"),
            gpu=catalog.gpu(gpu),
            weights=weights,
            kv=kv_precision("auto", weights),
            engine=EngineConfig(max_model_len=4096),
        )
        prompts = Lengths(mean=1000, distribution=distribution, spread=0.5)
        answers = Lengths(mean=200, distribution=distribution, spread=0.5)
        times = []
        for _ in range(REPEATS):
            start = time.perf_counter()
            result = simulate(dep, traffic, REQUESTS, prompts, answers, seed=0)
            times.append(time.perf_counter() - start)
        shape = {
            "rate": f"{traffic.rate_per_s:g} req/s",
            "concurrency": f"{traffic.concurrency} clients",
            "users": f"{traffic.users} users, {traffic.think_time_s:g} s think",
        }[traffic.mode]
        print(
            f"| {gpu} | {shape} | {distribution} | {result.steps:,} | {result.duration_s:,.0f} | "
            f"{statistics.median(times):.2f} | {min(times):.2f} |"
        )


if __name__ == "__main__":
    main()
