"""Best-deployment search speed: candidates evaluated per second on one core (issue 16's target:
at least 5,000 candidates in under 2 s). The default space: tp 1-8, pp 1-2, dp 1-8 on MoE models,
three weight and two KV formats, max_num_batched_tokens as the engine's, 2,048 and 8,192.

Run: .venv/bin/python bench/bench_search.py   (taskset -c 0 to pin one core)
"""

from __future__ import annotations

import dataclasses
import time

from core.planning.pareto import cost_front, throughput_front
from core.planning.requirement import Requirement
from core.planning.search import SearchSpace, search
from core.spec.catalog import load_catalog
from core.spec.deployment import Deployment
from core.spec.precision import WEIGHT_PRECISIONS, kv_precision

CASES = {
    "Llama-3.1-70B, 200 chat users, whole catalog": ("llama-3.1-70b", None),
    "Llama-3.1-8B, 200 chat users, whole catalog": ("llama-3.1-8b", None),
    "Qwen3-30B-A3B, 200 chat users, H100/H200/B200/L40S": ("qwen3-30b-a3b", ("h100-sxm", "h200", "b200", "l40s")),
    "DeepSeek-V3, 200 chat users, whole catalog": ("deepseek-v3", None),
    "Qwen3-235B-A22B, 200 chat users, whole catalog": ("qwen3-235b-a22b", None),
}
LOAD = Requirement(
    load="users", users=200, think_time_s=30, prompt_len=1500, answer_len=300, ttft_slo_s=1.0, tpot_slo_s=0.05
)


def main() -> None:
    catalog = load_catalog()
    print("| case | candidates | shapes | meet SLOs | front points | time (best of 3) | candidates/s |")
    print("|---|---|---|---|---|---|---|")
    for name, (model_id, gpus) in CASES.items():
        model = catalog.model(model_id)
        weights = WEIGHT_PRECISIONS[model.native_dtype]
        base = Deployment(model=model, gpu=catalog.gpus[0], weights=weights, kv=kv_precision("auto", weights))
        space = dataclasses.replace(SearchSpace(), gpus=gpus or ())
        times = []
        for _ in range(3):
            start = time.perf_counter()
            found = search(catalog, base, LOAD, space)
            fronts = len(cost_front(found)) + len(throughput_front(found))
            times.append(time.perf_counter() - start)
        t = min(times)
        print(
            f"| {name} | {len(found):,} | {len(found.shapes):,} | {int(found.meets_slo.sum()):,} | {fronts} "
            f"| {t:.2f} s | {len(found) / t:,.0f} |"
        )


if __name__ == "__main__":
    main()
