"""Read what users paste: a vLLM start-up log, and a `vllm bench serve` / benchmark_serving result.

Only the lines the tool uses are read; anything else is ignored. A text with none of them is an
error that says which lines were looked for.

The text comes from anyone on a shared server, and a regular expression holds the interpreter lock
while it runs, so every pattern runs in time linear in the text (issue 29, item 1): each starts with
a fixed name (looked for with ``in`` first), stays on its line, and has no gap or number that can
backtrack (bounded, possessive repeats). 2,000,000 characters of any shape take milliseconds
(bench/adversarial_paste.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from core.messages import message

MAX_TEXT_CHARS = 2_000_000
"""The most a paste may hold (the page's boxes take as many): a whole server log with its requests
fits; a start-up log is about 10-100 KB, a benchmark result 1-2 KB."""
MAX_VALUE = 1e15
"""No line read holds more (GiB, tokens, blocks, ms, requests); a larger number is no measurement."""
NUMBER = r"([0-9][0-9,]*+(?:\.[0-9]++)?+)"  # possessive: a long run of digits is read once, never re-tried
BLANK = r"[ \t]{0,80}+"  # blanks on the same line (the benchmark pads its names to a column)
WORDS = r"[^0-9\n]{0,40}+"  # a few words between a name and its number, on the same line
SIGN = r"[=: \t]{0,8}+"  # "=", ": " or " " between a setting and its value

# Each line the parser reads: the name it starts with, as printed (also what a message calls it), and
# what follows it up to the number(s).
STARTUP_LINES = {
    "weights_gib": [
        ("Model loading took ", rf"{NUMBER}{BLANK}GiB"),
        ("Loading model weights took ", rf"{NUMBER}{BLANK}GB"),
        ("weights memory:", rf"{BLANK}{NUMBER}{BLANK}GiB"),
    ],
    "kv_cache_gib": [("Available KV cache memory:", rf"{BLANK}{NUMBER}{BLANK}GiB")],
    "kv_tokens": [("GPU KV cache size:", rf"{BLANK}{NUMBER}{BLANK}tokens")],
    "max_concurrency": [("Maximum concurrency for ", rf"{NUMBER} tokens per request:{BLANK}{NUMBER}{BLANK}x")],
    "gpu_blocks": [("# GPU blocks:", rf"{BLANK}{NUMBER}")],
    "total_gib": [("total_memory=", rf"{NUMBER}{BLANK}GiB"), ("total_gpu_memory (", rf"{NUMBER}{BLANK}GiB\)")],
    "activation_gib": [
        ("torch peak memory increase:", rf"{BLANK}{NUMBER}{BLANK}GiB"),
        ("activation peak memory", rf"{WORDS}{NUMBER}{BLANK}GiB"),
    ],
    "non_torch_gib": [
        ("non-torch forward increase memory:", rf"{BLANK}{NUMBER}{BLANK}GiB"),
        ("non_torch_memory", rf"{WORDS}{NUMBER}{BLANK}GiB"),
    ],
    "utilization": [("gpu_memory_utilization", rf"{SIGN}{NUMBER}")],
    # hybrid models (vLLM 0.11-0.33, HybridAttentionMambaModelConfig / _align_hybrid_block_size)
    "attention_block_size": [("Setting attention block size to ", rf"{NUMBER} tokens")],
    "mamba_padding_pct": [("Padding mamba page size by ", rf"{NUMBER}%")],
}
BENCHMARK_LINES = {
    "completed": [("Successful requests:", rf"{BLANK}{NUMBER}")],
    "duration_s": [("Benchmark duration (s):", rf"{BLANK}{NUMBER}")],
    "input_tokens": [("Total input tokens:", rf"{BLANK}{NUMBER}")],
    "output_tokens": [("Total generated tokens:", rf"{BLANK}{NUMBER}")],
    "request_throughput": [("Request throughput (req/s):", rf"{BLANK}{NUMBER}")],
    "output_tokens_per_s": [("Output token throughput (tok/s):", rf"{BLANK}{NUMBER}")],
    "ttft_ms_mean": [("Mean TTFT (ms):", rf"{BLANK}{NUMBER}")],
    "ttft_ms_median": [("Median TTFT (ms):", rf"{BLANK}{NUMBER}")],
    "tpot_ms_mean": [("Mean TPOT (ms):", rf"{BLANK}{NUMBER}")],
    "tpot_ms_median": [("Median TPOT (ms):", rf"{BLANK}{NUMBER}")],
    "itl_ms_mean": [("Mean ITL (ms):", rf"{BLANK}{NUMBER}")],
    "concurrency": [
        ("Maximum request concurrency:", rf"{BLANK}{NUMBER}"),
        ("max_concurrency", rf"{SIGN}{NUMBER}"),
        ("max concurrency", rf"{SIGN}{NUMBER}"),
    ],
    "request_rate": [
        ("Request rate:", rf"{BLANK}{NUMBER}"),
        ("request_rate", rf"{SIGN}{NUMBER}"),
        ("request rate", rf"{SIGN}{NUMBER}"),
    ],
}
LINE_NAMES = {key: lines[0][0].rstrip(" :(") for key, lines in (STARTUP_LINES | BENCHMARK_LINES).items()}
"""What a message calls each value: the name of the first line it is read from."""


class LogError(ValueError):
    """A pasted text (or what it holds) the tool cannot use; the message, in the catalog under
    ``calib.<code>``, says which line and why, and ``hints`` ((code, params), ...) add a sentence
    each (``text(lang)``; ``str()`` is the English)."""

    def __init__(self, code: str, hints: tuple[tuple[str, dict[str, str]], ...] = (), **params: Any) -> None:
        self.code, self.hints, self.params = code, hints, params
        super().__init__(self.text())

    def text(self, lang: str = "en") -> str:
        extra = "".join(" " + message(f"calib.{hint}", lang, **fields) for hint, fields in self.hints)
        return message(f"calib.{self.code}", lang, **self.params) + extra


@dataclass(frozen=True)
class StartupLog:
    values: dict[str, float]
    """weights_gib, kv_cache_gib, kv_tokens, max_concurrency, max_model_len, ... (those found)."""


@dataclass(frozen=True)
class BenchmarkResult:
    values: dict[str, float]

    @property
    def input_len(self) -> float | None:
        return self._per_request("input_tokens")

    @property
    def output_len(self) -> float | None:
        return self._per_request("output_tokens")

    def _per_request(self, total: str) -> float | None:
        """Tokens per completed request; None without the lines (or with no request completed)."""
        v = self.values
        return v[total] / v["completed"] if total in v and v.get("completed", 0) > 0 else None


def _compiled(lines: dict[str, list[tuple[str, str]]]) -> dict[str, list[tuple[str, re.Pattern]]]:
    return {key: [(name, re.compile(re.escape(name) + rest)) for name, rest in found] for key, found in lines.items()}


STARTUP_PATTERNS = _compiled(STARTUP_LINES)
BENCHMARK_PATTERNS = _compiled(BENCHMARK_LINES)


def _number(text: str, name: str) -> float:
    value = float(text.replace(",", ""))
    if not value <= MAX_VALUE:  # hundreds of digits: no measurement, and arithmetic on it overflows
        raise LogError("number_too_large", line=name.rstrip(" :("), digits=len(text))
    return value


def _scan(text: str, patterns: dict[str, list[tuple[str, re.Pattern]]]) -> dict[str, float]:
    if not isinstance(text, str):
        raise LogError("not_text")
    if len(text) > MAX_TEXT_CHARS:
        raise LogError("too_long", limit=f"{MAX_TEXT_CHARS:,}", length=f"{len(text):,}")
    found: dict[str, float] = {}
    for key, alternatives in patterns.items():
        for name, pattern in alternatives:
            if name not in text:  # a fast search: most lines are absent from most pastes
                continue
            matches = pattern.findall(text)
            if matches:
                last = matches[-1]  # a log may restart; the last start-up wins
                if isinstance(last, tuple):  # "Maximum concurrency for L tokens ...: X"
                    found["max_model_len"] = _number(last[0], name)
                    last = last[1]
                found[key] = _number(last, name)
                break
    return found


def parse_startup_log(text: str) -> StartupLog:
    found = _scan(text, STARTUP_PATTERNS)
    if not {"kv_cache_gib", "kv_tokens", "gpu_blocks", "weights_gib"} & set(found):
        raise LogError("no_startup_lines")
    return StartupLog(values=found)


def parse_benchmark(text: str) -> BenchmarkResult:
    found = _scan(text, BENCHMARK_PATTERNS)
    needed = {"ttft_ms_mean", "ttft_ms_median", "tpot_ms_mean", "tpot_ms_median", "output_tokens_per_s"}
    if not needed & set(found):
        raise LogError("no_benchmark_lines")
    return BenchmarkResult(values=found)
