"""Benchmark: time a 1024-batch x 64-prompt-length sweep (target: under 20 ms on one core).

Run: python bench/bench_sweep.py   (prints a Markdown table for docs/benchmarks.md)
"""

from __future__ import annotations

import os
import platform
import statistics
import time

import numpy as np

from core.estimate.result import estimate
from core.estimate.sweep import sweep
from core.spec.catalog import load_catalog
from core.spec.deployment import Deployment, Workload
from core.spec.engine import Parallelism
from core.spec.precision import kv_precision, weight_precision

CASES = [
    ("llama-3.1-8b", "h100-sxm", 1),  # dense GQA
    ("qwen3-30b-a3b", "h100-sxm", 1),  # MoE
    ("gemma-2-27b", "a100-80gb", 1),  # sliding-window layers
    ("deepseek-v3", "h200", 8),  # MLA + MoE, tensor parallel
]
REPEATS = 200


def deployment(model_id: str, gpu_id: str, tp: int) -> Deployment:
    catalog = load_catalog()
    model = catalog.model(model_id)
    weights = weight_precision(model.native_dtype)
    return Deployment(
        model=model,
        gpu=catalog.gpu(gpu_id),
        weights=weights,
        kv=kv_precision("auto", weights),
        parallel=Parallelism(tp=tp),
    )


def timed(fn) -> tuple[float, float]:
    fn()  # warm
    samples = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), max(samples)


def main() -> None:
    batches = np.arange(1, 1025)
    prompt_lens = np.geomspace(64, 65536, 64).round()
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, numpy {np.__version__}; {REPEATS} repeats, single thread\n"
    )
    print("| model | GPU | tp | sweep 1024 x 64 median [ms] | max [ms] | one estimate median [ms] |")
    print("|---|---|---|---|---|---|")
    for model_id, gpu_id, tp in CASES:
        dep = deployment(model_id, gpu_id, tp)
        grid, grid_max = timed(lambda dep=dep: sweep(dep, batches, prompt_lens, 256))
        single, _ = timed(lambda dep=dep: estimate(dep, Workload(input_len=2048, output_len=256, batch=32)))
        print(f"| {model_id} | {gpu_id} | {tp} | {grid * 1e3:.2f} | {grid_max * 1e3:.2f} | {single * 1e3:.3f} |")


if __name__ == "__main__":
    main()
