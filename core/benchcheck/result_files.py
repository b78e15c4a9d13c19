"""A benchmark's result file read into one measured run (issue 31, item 3).

Three formats, told apart by their keys:

- ``vllm bench serve --save-result`` (vllm/benchmarks/serve.py, ``benchmark()``'s ``result`` merged
  into ``main_async``'s ``result_json``; the same keys in benchmarks/benchmark_serving.py since 2024):
  ``median_ttft_ms``, ``p99_ttft_ms``, ``median_tpot_ms``, ``median_itl_ms``, ``output_throughput``,
  ``request_throughput``, ``completed``, ``total_input_tokens``, ``total_output_tokens``,
  ``max_concurrency`` (null without ``--max-concurrency``), ``request_rate`` (a number or "inf").
  The ``p99_*`` keys exist when 99 is among ``--metric-percentiles`` (its default).
- guidellm's report (src/guidellm/benchmark/schemas/report.py ``GenerativeBenchmarksReport``, v0.4 on,
  default file benchmarks.json): ``benchmarks[-1].metrics.<name>.successful`` with ``median``, ``mean``
  and ``percentiles.p99`` for ``time_to_first_token_ms``, ``time_per_output_token_ms``,
  ``inter_token_latency_ms``, ``output_tokens_per_second``, ``requests_per_second``,
  ``request_concurrency``, ``prompt_token_count``, ``output_token_count``; ``metrics.request_totals.
  successful``. The last benchmark of the report is read (a sweep's is its fastest rate).
- aiperf's ``profile_export_aiperf.json`` (docs/reference/json-export-schema.md, schema 1.x): top-level
  metric blocks with ``unit``, ``avg``, ``p50``, ``p99``: ``time_to_first_token``,
  ``inter_token_latency``, ``output_token_throughput``, ``request_throughput``, ``request_count``,
  ``input_sequence_length``, ``output_sequence_length``; the load from ``input_config.loadgen``
  (``concurrency``, ``request_rate``). A time's ``unit`` (ns, us, ms, s) is honoured.

A file that is not one of them, too large, not JSON, or with a value that is not a non-negative number
raises :class:`BenchFileError`, one line (``benchcheck.<code>`` in the message catalog) naming what was
expected. Parsing goes through :func:`core.spec.json_text.parse_json` (no integer of thousands of
digits, no nesting deeper than MAX_DEPTH).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from core.messages import message
from core.spec.json_text import parse_json

MAX_FILE_BYTES = 2_000_000
"""A result without per-request arrays is 1-20 KB; --save-detailed adds every request's text and times."""
MAX_DEPTH = 16
TIME_UNITS = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1e3, "sec": 1e3}
"""[ms] per unit of an aiperf time."""


class BenchFileError(ValueError):
    """A result file that cannot be read; ``text(lang)`` is the catalog's sentence, ``str()`` English."""

    def __init__(self, code: str, **params: Any) -> None:
        self.code, self.params = code, params
        super().__init__(self.text())

    def text(self, lang: str = "en") -> str:
        return message(f"benchcheck.{self.code}", lang, **self.params)


@dataclass(frozen=True, kw_only=True)
class MeasuredRun:
    """One benchmark run as measured [ms, tokens/s, requests/s, tokens]; None where the file has none."""

    tool: str
    ttft_ms: float
    tpot_ms: float
    ttft_p99_ms: float | None
    itl_ms: float | None
    output_tokens_per_s: float | None
    request_rate: float | None
    """Requests per second completed."""
    concurrency: int | None
    """The closed loop's clients (--max-concurrency), None for an open loop."""
    configured_rate: float | None
    """The open loop's arrival rate (--request-rate), None when unbounded."""
    prompts: int
    mean_input_len: float
    mean_output_len: float

    def values(self) -> dict[str, float | None]:
        """The metrics as :class:`core.benchcheck.commands.Predicted` names them."""
        return {
            "ttft_ms": self.ttft_ms,
            "ttft_p99_ms": self.ttft_p99_ms,
            "tpot_ms": self.tpot_ms,
            "itl_ms": self.itl_ms,
            "output_tokens_per_s": self.output_tokens_per_s,
        }


def _number(value: Any, key: str, tool: str, required: bool = True) -> float | None:
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        if value is None:
            raise BenchFileError("missing_key", tool=tool, field=key)
        raise BenchFileError("bad_value", tool=tool, field=key, value=_quoted(value))
    return float(value)


def _quoted(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 24 else text[:24] + "…"


def _path(data: Any, path: str) -> Any:
    """``data`` at a dotted path (``metrics.time_to_first_token_ms.successful.median``); None if absent."""
    for part in path.split("."):
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data


def _vllm(data: dict) -> MeasuredRun:
    tool = "vllm bench serve"
    get = lambda key, required=True: _number(data.get(key), key, tool, required)  # noqa: E731
    completed = get("completed")
    if completed < 1:
        raise BenchFileError("no_requests", tool=tool)
    concurrency = get("max_concurrency", False)
    rate = data.get("request_rate")
    configured = None if rate in (None, "inf") else _number(rate, "request_rate", tool)
    return MeasuredRun(
        tool=tool,
        ttft_ms=get("median_ttft_ms"),
        tpot_ms=get("median_tpot_ms"),
        ttft_p99_ms=get("p99_ttft_ms", False),
        itl_ms=get("median_itl_ms", False),
        output_tokens_per_s=get("output_throughput", False),
        request_rate=get("request_throughput", False),
        concurrency=_clients(concurrency, "max_concurrency", tool),
        configured_rate=configured,
        prompts=int(completed),
        mean_input_len=get("total_input_tokens") / completed,
        mean_output_len=get("total_output_tokens") / completed,
    )


def _clients(value: float | None, key: str, tool: str) -> int | None:
    if value is None:
        return None
    if value != int(value) or not 1 <= value <= 100_000:
        raise BenchFileError("bad_value", tool=tool, field=key, value=_quoted(value))
    return int(value)


def _guidellm(data: dict) -> MeasuredRun:
    tool = "guidellm"
    benchmarks = data["benchmarks"]
    if not benchmarks or not isinstance(benchmarks[-1], dict):
        raise BenchFileError("no_benchmarks")
    bench = benchmarks[-1]

    def get(name: str, stat: str = "median", required: bool = True) -> float | None:
        key = f"metrics.{name}.successful.{stat}"
        return _number(_path(bench, key), key, tool, required)

    completed = _number(_path(bench, "metrics.request_totals.successful"), "request_totals.successful", tool)
    if completed < 1:
        raise BenchFileError("no_requests", tool=tool)
    strategy = _path(bench, "config.strategy")  # a SchedulingStrategy: type_ with streams or rate
    strategy = strategy if isinstance(strategy, dict) else {}
    kind, rate, concurrency = strategy.get("type_"), None, None
    if kind in ("constant", "poisson"):
        rate = strategy.get("rate")
    elif kind == "concurrent":
        concurrency = _number(strategy.get("streams"), "config.strategy.streams", tool)
    elif kind == "synchronous":
        concurrency = 1
    else:  # throughput (all at once) or unknown: the concurrency it measured
        concurrency = max(1, round(get("request_concurrency", "mean")))
    return MeasuredRun(
        tool=tool,
        ttft_ms=get("time_to_first_token_ms"),
        tpot_ms=get("time_per_output_token_ms"),
        ttft_p99_ms=get("time_to_first_token_ms", "percentiles.p99", False),
        itl_ms=get("inter_token_latency_ms", "median", False),
        output_tokens_per_s=get("output_tokens_per_second", "mean", False),
        request_rate=get("requests_per_second", "mean", False),
        concurrency=_clients(concurrency, "config.strategy.streams", tool),
        configured_rate=_number(rate, "config.strategy.rate", tool, False),
        prompts=int(completed),
        mean_input_len=get("prompt_token_count", "mean"),
        mean_output_len=get("output_token_count", "mean"),
    )


def _aiperf(data: dict) -> MeasuredRun:
    tool = "aiperf"

    def get(name: str, stat: str = "p50", required: bool = True, time: bool = False) -> float | None:
        value = _number(_path(data, f"{name}.{stat}"), f"{name}.{stat}", tool, required)
        if value is None or not time:
            return value
        unit = _path(data, f"{name}.unit")
        if unit not in TIME_UNITS:
            raise BenchFileError("bad_value", tool=tool, field=f"{name}.unit", value=_quoted(unit))
        return value * TIME_UNITS[unit]

    completed = get("request_count", "avg")
    if completed < 1:
        raise BenchFileError("no_requests", tool=tool)
    loadgen = _path(data, "input_config.loadgen") or {}
    concurrency = loadgen.get("concurrency") if isinstance(loadgen, dict) else None
    rate = loadgen.get("request_rate") if isinstance(loadgen, dict) else None
    configured = _number(rate, "input_config.loadgen.request_rate", tool, False)
    clients = _number(concurrency, "input_config.loadgen.concurrency", tool, False)
    ttft, itl = get("time_to_first_token", time=True), get("inter_token_latency", required=False, time=True)
    return MeasuredRun(
        tool=tool,
        ttft_ms=ttft,
        tpot_ms=itl if itl is not None else get("inter_token_latency", time=True),
        ttft_p99_ms=get("time_to_first_token", "p99", False, time=True),
        itl_ms=itl,
        output_tokens_per_s=get("output_token_throughput", "avg", False),
        request_rate=get("request_throughput", "avg", False),
        concurrency=_clients(clients, "input_config.loadgen.concurrency", tool) if configured is None else None,
        configured_rate=configured,
        prompts=int(completed),
        mean_input_len=get("input_sequence_length", "avg"),
        mean_output_len=get("output_sequence_length", "avg"),
    )


def read_result(content: str | bytes) -> MeasuredRun:
    """The measured run in a vllm bench serve, guidellm or aiperf result file; BenchFileError otherwise."""
    if len(content) > MAX_FILE_BYTES:
        raise BenchFileError("too_large", size=f"{len(content):,}", limit=f"{MAX_FILE_BYTES:,}")
    if isinstance(content, bytes):
        try:
            content = content.decode("utf-8")
        except UnicodeDecodeError:
            raise BenchFileError("not_text") from None
    if not content.strip():
        raise BenchFileError("empty")
    try:
        data = parse_json(content, what="result file", max_depth=MAX_DEPTH)
    except ValueError as err:
        raise BenchFileError("not_json", detail=str(err).removeprefix("result file: ")) from None
    if not isinstance(data, dict):
        raise BenchFileError("not_ours")
    if "median_ttft_ms" in data or ("completed" in data and "request_throughput" in data):
        return _vllm(data)
    if isinstance(data.get("benchmarks"), list):
        return _guidellm(data)
    if isinstance(data.get("time_to_first_token"), dict) or ("schema_version" in data and "request_count" in data):
        return _aiperf(data)
    raise BenchFileError("not_ours")
