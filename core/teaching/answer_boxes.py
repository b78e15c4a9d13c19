"""The answer boxes of each Workshop exercise: what the question asks for, the expected value taken
from the exercise's :class:`~core.teaching.text.Answer` (its ``values``, SI units; none written here),
a tolerance with its reason, and the slips that box can show (checked in :mod:`answer_check`).

A slip is a wrong answer the expected value explains once transformed: GB read as GiB (x 1.073741824
either way), K and V counted once (x 0.5 on a memory figure, x 2 on a count it divides), a per-GPU
figure and the whole engine's (x or / the GPU count), tokens and requests (x or / the tokens of one
request), ms and s (x or / 1000), and figures an exercise itself invites (MHA's KV for GQA's, the
naive capacity plan). Each box lists only the slips that can produce its value.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from core.spec import units
from core.teaching.answers import answer
from core.teaching.exercises import exercise, load_exercises
from core.teaching.text import count, duration, gib, rate

GB_PER_GIB = units.GiB / units.GB  # 1.073741824


@dataclass(frozen=True)
class Tolerance:
    """|typed - expected| <= max(relative x |expected|, absolute) [absolute in SI]; ``reason``: the
    message key saying why this much."""

    relative: float
    absolute: float
    reason: str

    def allows(self, typed: float, target: float, scale: float = 1.0) -> bool:
        """Whether ``typed`` is ``target`` within the tolerance; ``scale`` stretches the absolute part
        for a slip's value (``target`` / expected)."""
        return abs(typed - target) <= max(self.relative * abs(target), self.absolute * max(abs(scale), 1.0))


@dataclass(frozen=True)
class Slip:
    """A likely mistake: its message key (``answer_check.slip_<key>``) and fields, and the value it leads to [SI]."""

    key: str
    value: float
    fields: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Box:
    """One answer box: ``label`` a message key; ``unit`` as the student types it; ``dimension`` and
    ``scale`` (SI per unit) read what is typed; ``expected`` [SI]; ``shown`` the expected value as the
    exercise's answer prints it."""

    exercise_id: str
    name: str
    label: str
    unit: str
    dimension: str
    scale: float
    expected: float
    tolerance: Tolerance
    slips: tuple[Slip, ...]
    shown: str

    @property
    def slip_keys(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.key for s in self.slips))


# Tolerances, each with its reason (messages answer_check.tol_*):
MEMORY = Tolerance(0.02, 0.0, "answer_check.tol_memory")  # GiB printed with 2-3 decimals; 2 % < GB/GiB's 7.4 %
BYTES = Tolerance(0.01, 0.0, "answer_check.tol_bytes")  # an exact product; 1 % lets "128 KiB" or rounding through
COUNT = Tolerance(0.0, 1.0, "answer_check.tol_count")  # a ceiling is a division rounded down: rounding it is off by 1
RATIO = Tolerance(0.01, 0.0, "answer_check.tol_ratio")  # vLLM's line prints two decimals
TIME = Tolerance(0.02, 0.0, "answer_check.tol_time")  # pages print three figures; 2 % takes a rounded read-off
RATE = Tolerance(0.02, 0.0, "answer_check.tol_rate")  # whole tokens/s or two decimals of requests/s, read off
KNEE = Tolerance(0.05, 0.0, "answer_check.tol_knee")  # found by stepping the batch slider or reading the chart


def _both(key: str, expected: float, factor: float, **fields: object) -> tuple[Slip, ...]:
    """The slip both ways (x and / ``factor``); none where the factor changes nothing (one GPU)."""
    if abs(factor - 1) < 1e-9:
        return ()
    params = tuple((k, str(v)) for k, v in fields.items())
    return Slip(key, expected * factor, params), Slip(key, expected / factor, params)


def gb_gib(expected: float) -> tuple[Slip, ...]:
    return _both("gb_gib", expected, GB_PER_GIB)


def per_gpu(expected: float, gpus: int) -> tuple[Slip, ...]:
    return _both("per_gpu", expected, gpus, gpus=gpus)


def ms_s(expected: float) -> tuple[Slip, ...]:
    return _both("ms_s", expected, 1000.0)


def tokens_requests(value: float, tokens: int) -> tuple[Slip, ...]:
    """Tokens and requests mixed up: ``value`` is what that gives (the count x the tokens of a request
    on a count of requests; the rate / them on a rate of tokens)."""
    return (Slip("tokens_requests", value, (("tokens", count(tokens)),)),)


def kv_once(value: float) -> tuple[Slip, ...]:
    """K and V counted once: ``value`` is what that gives (half the memory, twice the requests)."""
    return (Slip("kv_once", value),)


UNITS = {
    "GiB": ("bytes", units.GiB, MEMORY, gib),
    "bytes": ("bytes", 1.0, BYTES, count),
    "requests": ("requests", 1.0, COUNT, count),
    "ms": ("seconds", units.MS, TIME, duration),
    "tok/s": ("tokens_per_s", 1.0, RATE, rate),
    "requests/s": ("requests_per_s", 1.0, RATE, lambda value: f"{value:.2f}"),
}
"""A box's unit -> (dimension, SI per unit, tolerance, how the answer prints the value)."""


def _box(ex_id: str, name: str, unit: str, value: float, slips=(), tolerance=None, shown=None) -> Box:
    """A box; a GiB figure can be GB read as GiB and a time ms read as s wherever it is."""
    dimension, scale, default, form = UNITS[unit]
    slips = (*(gb_gib(value) if unit == "GiB" else ms_s(value) if unit == "ms" else ()), *slips)
    label = f"answer_check.box_{ex_id}_{name}"
    return Box(ex_id, name, label, unit, dimension, scale, value, tolerance or default, slips, shown or form(value))


def _kv_gqa(ex, v) -> tuple[Box, ...]:
    tokens, mha = ex.scenario.input_len + ex.scenario.output_len, v["mha_bytes_per_token"] / v["kv_bytes_per_token"]
    token, request, fit = v["kv_bytes_per_token"], v["kv_bytes_per_request"], v["max_concurrency"]
    return (
        _box(ex.id, "kv_per_token", "bytes", token, (*kv_once(token / 2), Slip("mha", token * mha))),
        _box(ex.id, "kv_per_request", "GiB", request, (*kv_once(request / 2), Slip("mha", request * mha)), None,
             gib(request, 3)),
        _box(ex.id, "max_concurrency", "requests", fit,
             (*kv_once(2 * fit), Slip("mha", v["mha_max_concurrency"]), *tokens_requests(fit * tokens, tokens))),
    )  # fmt: skip


def _ceiling(ex, v) -> tuple[Box, ...]:
    tokens, paged = ex.scenario.input_len + ex.scenario.output_len, v["paged"]
    vllm_slips = tokens_requests(v["capacity_tokens"], v["max_model_len"])  # the log's token count typed
    return (
        _box(ex.id, "paged", "requests", paged, (*kv_once(2 * paged), *tokens_requests(paged * tokens, tokens))),
        _box(ex.id, "vllm", "requests", v["vllm"], vllm_slips, RATIO, f"{v['vllm']:,.2f}"),
        _box(ex.id, "contiguous", "requests", v["contiguous"], kv_once(2 * v["contiguous"])),
    )


def _knee(ex, v) -> tuple[Box, ...]:
    tpot, tput, _ = v["points"][v["knee"]]
    tokens, answer_len = ex.scenario.input_len + ex.scenario.output_len, ex.scenario.output_len
    return (
        _box(ex.id, "knee", "requests", v["knee"], tokens_requests(v["knee"] * tokens, tokens), KNEE),
        _box(ex.id, "tpot_knee", "ms", tpot),
        _box(ex.id, "throughput_knee", "tok/s", tput, tokens_requests(tput / answer_len, answer_len)),
    )


def _quantization(ex, v) -> tuple[Box, ...]:
    base, *others = v["variants"]
    int4 = next(r for r in others if r["weights"] == "int4" and r["kv"] == base["kv"])
    fp8 = next(r for r in others if r["weights"] == base["weights"] and r["kv"] == "fp8")
    return (
        _box(ex.id, "freed_int4", "GiB", base["weights_bytes"] - int4["weights_bytes"]),
        _box(ex.id, "concurrency_int4", "requests", int4["max_concurrency"]),
        _box(ex.id, "concurrency_kv_fp8", "requests", fp8["max_concurrency"], kv_once(2 * fp8["max_concurrency"])),
        _box(ex.id, "tpot_int4", "ms", int4["tpot_s"]),
    )


def _tensor_parallel(ex, v) -> tuple[Box, ...]:
    gpus = max(ex.settings["tp"])
    top, tokens, answer_len = v[gpus], ex.scenario.input_len + ex.scenario.output_len, ex.scenario.output_len
    fit, per_gpu_rate = top["max_concurrency"], top["output_tokens_per_s"] / gpus
    return (
        _box(ex.id, "weights_per_gpu", "GiB", top["weights"], per_gpu(top["weights"], gpus)),
        _box(ex.id, "kv_budget_per_gpu", "GiB", top["kv_budget"], per_gpu(top["kv_budget"], gpus)),
        _box(ex.id, "max_concurrency", "requests", fit, (*per_gpu(fit, gpus), *tokens_requests(fit * tokens, tokens))),
        _box(ex.id, "tpot", "ms", top["tpot_s"]),
        _box(ex.id, "throughput_per_gpu", "tok/s", per_gpu_rate,
             (*per_gpu(per_gpu_rate, gpus), *tokens_requests(per_gpu_rate / answer_len, answer_len))),
    )  # fmt: skip


def _pitfall(ex, v) -> tuple[Box, ...]:
    tokens, answer_len, fit = ex.scenario.input_len + ex.scenario.output_len, ex.scenario.output_len, v["ceiling"]
    static = v["static_rate"]
    return (
        _box(ex.id, "ceiling", "requests", fit, (*kv_once(2 * fit), *tokens_requests(fit * tokens, tokens))),
        _box(ex.id, "static_rate", "requests/s", static,
             (Slip("single_request", v["naive_rate"]), *tokens_requests(static * answer_len, answer_len))),
        _box(ex.id, "tail_ceiling", "requests", v["tail_ceiling"], kv_once(2 * v["tail_ceiling"])),
    )  # fmt: skip


def _tuning(ex, v) -> tuple[Box, ...]:
    tokens, fit = ex.scenario.input_len + ex.scenario.output_len, v["max_concurrency"]
    fp8 = next(c for code, c, _ in v["fixes"] if code == "suggest_kv_fp8")
    return (
        _box(ex.id, "max_concurrency", "requests", fit, (*kv_once(2 * fit), *tokens_requests(fit * tokens, tokens))),
        _box(ex.id, "tpot", "ms", v["tpot_s"]),
        _box(ex.id, "concurrency_kv_fp8", "requests", fp8, kv_once(2 * fp8)),
    )


BUILDERS = {
    "kv_gqa": _kv_gqa,
    "ceiling": _ceiling,
    "knee": _knee,
    "quantization": _quantization,
    "tensor_parallel": _tensor_parallel,
    "pitfall": _pitfall,
    "tuning": _tuning,
}


@functools.cache
def boxes(exercise_id: str) -> tuple[Box, ...]:
    """The answer boxes of an exercise, in the order its question asks."""
    try:
        ex = exercise(exercise_id)
    except KeyError:
        names = ", ".join(e.id for e in load_exercises())
        raise ValueError(f"exercise {exercise_id!r}: expected one of {names}") from None
    return BUILDERS[ex.id](ex, answer(ex).values)


def box(exercise_id: str, name: str) -> Box:
    """One box by its exercise and name; ValueError naming the boxes there are."""
    found = {b.name: b for b in boxes(exercise_id)}
    if name not in found:
        raise ValueError(f"answer box {name!r} of exercise {exercise_id!r}: expected one of {', '.join(found)}")
    return found[name]


def all_boxes() -> tuple[Box, ...]:
    return tuple(b for ex in load_exercises() for b in boxes(ex.id))
