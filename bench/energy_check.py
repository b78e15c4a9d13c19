"""The PowerX check: predicted board power per GPU and energy per output token against InferenceX's
published measurements (held out: nothing in :mod:`core.energy.power` was fitted to them).

Measured (InferenceX PowerX, ``docs/examples/inferencex-api/0.1.0/powerx.csv`` as read in
/work/shared/audits/2026-12-anchors-and-kernel-data.md section 4): DeepSeek-V4-Pro FP4 on 8x B200,
vLLM TP8, 8k prompt / 1k answer, at concurrency 1, 8, 64, 256; mean GPU-board power per GPU and
whole-deployment GPU energy over output tokens.

DeepSeek-V4-Pro is NOT modelled (its attention compresses the KV cache per layer: compress_ratios
0 / 4 / 128 = sliding window, compressed sparse and heavily compressed attention, one 512-wide KV
head, plus hyper-connections), so the check runs on the nearest modelled models as clearly labelled
PROXIES: DeepSeek-V3.2 (MLA + MoE + a top-k sparse-attention indexer) and DeepSeek-V3 (MLA + MoE),
both NVFP4 weights on 8x B200, vLLM TP8.

Run: PYTHONPATH=. .venv/bin/python bench/energy_check.py
"""

from __future__ import annotations

import statistics

from core.energy.power import energy_of
from core.estimate.result import estimate
from core.spec.catalog import load_catalog
from core.spec.deployment import Deployment, Workload
from core.spec.engine import EngineConfig, Parallelism
from core.spec.precision import WEIGHT_PRECISIONS, kv_precision

INPUT, OUTPUT = 8192, 1024
MEASURED = ((1, 389.9, 31.66), (8, 520.1, 7.52), (64, 793.8, 3.61), (256, 955.9, 3.04))
"""(concurrency, W per GPU, J per output token over the 8 GPUs), PowerX."""
PROXIES = ("deepseek-v3.2", "deepseek-v3")
ML_ENERGY_J = 0.12
"""ML.ENERGY v3, Llama 3.1 8B on H100, batch 64, vLLM 0.11.1: 'reduces energy per token by 41 % (0.20 J to
0.12 J)' (https://ml.energy/blog/measurement/energy/llm-inference-energy-a-longitudinal-analysis). A
steady-state decode figure; the post's prompt and answer lengths were not read, so the check is indicative."""


def estimate_for(model_id, gpu, weights, kv, tp, input_len, output_len, batch):
    cat = load_catalog()
    weights = WEIGHT_PRECISIONS[weights]
    dep = Deployment(
        model=cat.model(model_id),
        gpu=cat.gpu(gpu),
        weights=weights,
        kv=kv_precision(kv, weights),
        parallel=Parallelism(tp=tp),
        engine=EngineConfig(max_model_len=input_len + output_len),
    )
    return estimate(dep, Workload(input_len=input_len, output_len=output_len, batch=batch))


def predict(model_id: str, concurrency: int) -> tuple[float, float, int]:
    """(W per GPU, J per output token, requests running at once) for the proxy at ``concurrency``."""
    e = estimate_for(model_id, "b200", "nvfp4", "fp8", 8, INPUT, OUTPUT, concurrency)
    en = energy_of(e)
    return en.power_w, en.j_per_token, e.running_batch


def error(pred: float, meas: float) -> float:
    return (pred - meas) / meas


def check(model_id: str) -> dict:
    rows = []
    for conc, watts, joules in MEASURED:
        p_w, p_j, running = predict(model_id, conc)
        rows.append((conc, running, p_w, watts, error(p_w, watts), p_j, joules, error(p_j, joules)))
    return {
        "rows": rows,
        "median_abs_power": statistics.median(abs(r[4]) for r in rows),
        "median_abs_energy": statistics.median(abs(r[7]) for r in rows),
    }


def main() -> None:
    for model_id in PROXIES:
        result = check(model_id)
        print(f"PROXY {model_id} (nvfp4, KV fp8) on 8x B200, vLLM TP8, 8k/1k, vs PowerX DeepSeek-V4-Pro FP4")
        print(
            "| concurrency | running | W/GPU pred. | W/GPU meas. | error | J/token pred. | J/token meas. | error"
            " | GPU-ms/token pred. | meas. |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|")
        for conc, run, pw, mw, ew, pj, mj, ej in result["rows"]:
            # J/token = 8 GPUs x W x time per output token: the time part, in ms, predicted and implied
            tp, tm = pj / (8 * pw) * 1e3, mj / (8 * mw) * 1e3
            print(
                f"| {conc} | {run} | {pw:.0f} | {mw:.0f} | {ew:+.0%} | {pj:.2f} | {mj:.2f} | {ej:+.0%}"
                f" | {tp:.2f} | {tm:.2f} |"
            )
        power, energy = result["median_abs_power"], result["median_abs_energy"]
        print(f"median |error|: power {power:.0%}, energy per token {energy:.0%}\n")
    print(f"ML.ENERGY (indicative): Llama 3.1 8B bf16, 1x H100 SXM, batch 64, decode only; measured {ML_ENERGY_J} J")
    for input_len, output_len in ((512, 512), (1000, 1000)):
        e = estimate_for("llama-3.1-8b", "h100-sxm", "bf16", "auto", 1, input_len, output_len, 64)
        en = energy_of(e)
        decode_j = en.power_decode_w * float(e.latency.decode.seconds) / e.running_batch
        print(f"  {input_len}/{output_len}: {en.power_decode_w:.0f} W, {decode_j:.3f} J per output token")


if __name__ == "__main__":
    main()
