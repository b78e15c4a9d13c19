"""Read what users paste: a vLLM start-up log, and a `vllm bench serve` / benchmark_serving result.

Only the lines the tool uses are read; anything else is ignored. A text with none of them is an
error that says which lines were looked for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_TEXT_CHARS = 2_000_000
NUMBER = r"([0-9][0-9,]*(?:\.[0-9]+)?)"

STARTUP_PATTERNS = {
    "weights_gib": [
        rf"Model loading took {NUMBER}\s*GiB",
        rf"Loading model weights took {NUMBER}\s*GB",
        rf"weights memory:\s*{NUMBER}\s*GiB",
    ],
    "kv_cache_gib": [rf"Available KV cache memory:\s*{NUMBER}\s*GiB"],
    "kv_tokens": [rf"GPU KV cache size:\s*{NUMBER}\s*tokens"],
    "max_concurrency": [rf"Maximum concurrency for {NUMBER} tokens per request:\s*{NUMBER}\s*x"],
    "gpu_blocks": [rf"# GPU blocks:\s*{NUMBER}"],
    "total_gib": [rf"total_memory={NUMBER}\s*GiB", rf"total_gpu_memory \({NUMBER}\s*GiB\)"],
    "activation_gib": [
        rf"torch peak memory increase:\s*{NUMBER}\s*GiB",
        rf"activation peak memory[^0-9]*{NUMBER}\s*GiB",
    ],
    "non_torch_gib": [
        rf"non-torch forward increase memory:\s*{NUMBER}\s*GiB",
        rf"non_torch_memory[^0-9]*{NUMBER}\s*GiB",
    ],
    "utilization": [rf"gpu_memory_utilization[=:\s]*{NUMBER}"],
    # hybrid models (vLLM 0.11-0.33, HybridAttentionMambaModelConfig / _align_hybrid_block_size)
    "attention_block_size": [rf"Setting attention block size to {NUMBER} tokens"],
    "mamba_padding_pct": [rf"Padding mamba page size by {NUMBER}%"],
}
BENCHMARK_PATTERNS = {
    "completed": [rf"Successful requests:\s*{NUMBER}"],
    "duration_s": [rf"Benchmark duration \(s\):\s*{NUMBER}"],
    "input_tokens": [rf"Total input tokens:\s*{NUMBER}"],
    "output_tokens": [rf"Total generated tokens:\s*{NUMBER}"],
    "request_throughput": [rf"Request throughput \(req/s\):\s*{NUMBER}"],
    "output_tokens_per_s": [rf"Output token throughput \(tok/s\):\s*{NUMBER}"],
    "ttft_ms_mean": [rf"Mean TTFT \(ms\):\s*{NUMBER}"],
    "ttft_ms_median": [rf"Median TTFT \(ms\):\s*{NUMBER}"],
    "tpot_ms_mean": [rf"Mean TPOT \(ms\):\s*{NUMBER}"],
    "tpot_ms_median": [rf"Median TPOT \(ms\):\s*{NUMBER}"],
    "itl_ms_mean": [rf"Mean ITL \(ms\):\s*{NUMBER}"],
    "concurrency": [rf"Maximum request concurrency:\s*{NUMBER}", rf"max[_ ]concurrency[=:\s]*{NUMBER}"],
    "request_rate": [rf"Request rate:\s*{NUMBER}", rf"request[_ ]rate[=:\s]*{NUMBER}"],
}


class LogError(ValueError):
    """A pasted text that holds none of the lines the tool reads."""


@dataclass(frozen=True)
class StartupLog:
    values: dict[str, float]
    """weights_gib, kv_cache_gib, kv_tokens, max_concurrency, max_model_len, ... (those found)."""


@dataclass(frozen=True)
class BenchmarkResult:
    values: dict[str, float]

    @property
    def input_len(self) -> float | None:
        v = self.values
        return v["input_tokens"] / v["completed"] if {"input_tokens", "completed"} <= set(v) else None

    @property
    def output_len(self) -> float | None:
        v = self.values
        return v["output_tokens"] / v["completed"] if {"output_tokens", "completed"} <= set(v) else None


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _scan(text: str, patterns: dict[str, list[str]]) -> dict[str, float]:
    if not isinstance(text, str):
        raise LogError("expected text")
    if len(text) > MAX_TEXT_CHARS:
        raise LogError(f"text is longer than {MAX_TEXT_CHARS} characters")
    found: dict[str, float] = {}
    for key, alternatives in patterns.items():
        for pattern in alternatives:
            matches = re.findall(pattern, text)
            if matches:
                last = matches[-1]  # a log may restart; the last start-up wins
                if isinstance(last, tuple):  # "Maximum concurrency for L tokens ...: X"
                    found["max_model_len"] = _number(last[0])
                    last = last[1]
                found[key] = _number(last)
                break
    return found


def parse_startup_log(text: str) -> StartupLog:
    found = _scan(text, STARTUP_PATTERNS)
    if not {"kv_cache_gib", "kv_tokens", "gpu_blocks", "weights_gib"} & set(found):
        raise LogError(
            "found no vLLM start-up lines: looked for 'Model loading took', 'Available KV cache memory', "
            "'GPU KV cache size' and '# GPU blocks'"
        )
    return StartupLog(values=found)


def parse_benchmark(text: str) -> BenchmarkResult:
    found = _scan(text, BENCHMARK_PATTERNS)
    needed = {"ttft_ms_mean", "ttft_ms_median", "tpot_ms_mean", "tpot_ms_median", "output_tokens_per_s"}
    if not needed & set(found):
        raise LogError(
            "found no benchmark results: looked for 'Mean TTFT (ms)', 'Median TPOT (ms)' and "
            "'Output token throughput (tok/s)' as vLLM's benchmark prints them"
        )
    return BenchmarkResult(values=found)
