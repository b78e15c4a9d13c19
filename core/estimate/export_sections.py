"""The Explorer's view of one estimate as sections a document can print: verdict, headline numbers,
memory, KV capacity and concurrency, latency, throughput, closed loop, likely ranges, fit
suggestions, warnings and the engine, each quantity with a stable name, a label in the reader's
language, its value and its unit.

Every number is read from :func:`core.estimate.report.estimate_to_dict` (the JSON the CLI prints),
so a document never shows a figure the JSON does not; the one sum it adds, the memory the scenario
uses per GPU, is rounded like the parts it adds up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.estimate.result import Estimate
from core.levers.registry import memory_part_labels
from core.messages import message
from core.spec import units

Value = bool | int | float | str | None
HOST_PARTS = ("host_weights", "host_kv")
"""Lever parts in host memory: beside the GPU's capacity, not in what it uses."""


@dataclass(frozen=True)
class Quantity:
    """One figure: ``name`` is stable (CSV, tests), ``label`` in the document's language."""

    name: str
    label: str
    value: Value
    unit: str = ""
    text: str | None = None
    """The value as words (yes/no, compute/memory) in the document's language, when not a number."""


@dataclass(frozen=True)
class Section:
    """A heading with its quantities and its sentences, each sentence as (name, text)."""

    name: str
    title: str
    quantities: tuple[Quantity, ...] = ()
    notes: tuple[tuple[str, str], ...] = ()


def _verdict(e: Estimate, data: dict[str, Any], t: Callable[..., str]) -> Section:
    kv, mem = data["kv"], data["memory_per_gpu"]
    common = {
        "batch": f"{data['batch']:,}",
        "kv": f"{mem['kv_cache_gib']:,}",
        "budget": f"{kv['budget_gib_per_gpu']:,}",
        "fit": f"{kv['max_concurrency_at_request_len']:,}",
        "tokens": f"{data['input_len'] + data['output_len']:,}",
    }
    if kv["budget_gib_per_gpu"] <= 0:
        sentence = t("export.verdict_no_budget", budget=common["budget"])
    elif not data["fits"]:
        sentence = t("export.verdict_kv", **common)
    elif not e.engine_starts:
        sentence = t(
            "export.verdict_no_start",
            max_model_len=f"{data['engine']['max_model_len']:,}",
            ratio=kv["max_concurrency_at_max_model_len"],
        )
    else:
        sentence = t("export.verdict_fits", **common)
    quantities = (
        _flag("fits", t("metric.fits"), data["fits"], t),
        _flag("engine_starts", t("export.engine_starts"), e.engine_starts, t),
    )
    return Section("verdict", t("export.section_verdict"), quantities, (("verdict", sentence),))


def _flag(name: str, label: str, value: bool, t: Callable[..., str]) -> Quantity:
    return Quantity(name, label, value, text=t("metric.yes") if value else t("metric.no"))


def _headline(data: dict[str, Any], t: Callable[..., str]) -> Section:
    kv, lat = data["kv"], data["latency"]
    return Section(
        "headline",
        t("export.section_headline"),
        (
            _flag("fits", t("metric.fits"), data["fits"], t),
            Quantity("max_concurrency", t("metric.max_concurrency"), kv["max_concurrency_at_request_len"], "requests"),
            # the page's headline TTFT: the burst's median as V1 admits it (its P99 and last beside it)
            Quantity("ttft_median", t("metric.ttft_burst"), data["burst_ttft"]["median_ms"], "ms"),
            Quantity("ttft_p99", "TTFT P99", data["burst_ttft"]["p99_ms"], "ms"),
            Quantity("ttft", "TTFT", lat["ttft_ms"], "ms"),
            Quantity("tpot", "TPOT", lat["tpot_ms"], "ms"),
            Quantity("throughput", t("metric.throughput"), data["throughput"]["output_tokens_per_s"], "tokens/s"),
            _bound("decode_bound", t("metric.decode_bound"), data["bound"]["decode"], t),
        ),
    )


def _bound(name: str, label: str, value: str, t: Callable[..., str]) -> Quantity:
    return Quantity(name, label, value, text=t(f"bound.{value}"))


def _memory(e: Estimate, data: dict[str, Any], t: Callable[..., str]) -> Section:
    mem = data["memory_per_gpu"]
    gib = lambda name, key, label: Quantity(name, label, mem[key], "GiB")  # noqa: E731
    levers = [p.name for p in memory_part_labels() if p.name not in HOST_PARTS and mem[f"{p.name}_gib"]]
    host = [p.name for p in memory_part_labels() if p.name in HOST_PARTS and mem[f"{p.name}_gib"]]
    used = round((e.memory.non_kv + e.memory.kv_in_use) / units.GiB, 3)
    return Section(
        "memory",
        t("memory.title"),
        (
            gib("capacity", "capacity_gib", t("export.capacity")),
            gib("driver_reserved", "driver_reserved_gib", t("memory.reserved")),
            gib("held_back", "held_back_gib", t("memory.held_back")),
            gib("weights", "weights_gib", t("memory.weights")),
            *(gib(name, f"{name}_gib", t(f"memory.{name}")) for name in levers),
            gib("activations", "activations_gib", t("memory.activations")),
            gib("overhead", "overhead_gib", t("memory.overhead")),
            gib("kv_cache", "kv_cache_gib", t("memory.kv_used")),
            Quantity("total_used", t("export.total_used"), used, "GiB"),
            Quantity("kv_budget", t("export.kv_budget"), data["kv"]["budget_gib_per_gpu"], "GiB"),
            gib("kv_free", "free_gib", t("memory.kv_free")),
            *(gib(name, f"{name}_gib", t(f"export.{name}")) for name in host),
        ),
    )


def _kv(e: Estimate, data: dict[str, Any], t: Callable[..., str]) -> Section:
    kv, engine = data["kv"], data["engine"]
    tokens = f"{data['input_len'] + data['output_len']:,}"
    state = (
        (Quantity("state_bytes_per_request", t("export.state_per_request"), kv["state_bytes_per_request"], "B"),)
        if e.deployment.model.is_hybrid
        else ()
    )
    return Section(
        "kv",
        t("export.section_kv"),
        (
            Quantity("bytes_per_token", t("export.kv_per_token"), kv["bytes_per_token"], "B"),
            *state,
            Quantity("bytes_per_request", t("export.kv_per_request", tokens=tokens), kv["bytes_per_request"], "B"),
            Quantity("block_size", t("export.block_size"), kv["block_size"], "tokens"),
            Quantity("capacity_tokens", t("export.capacity_tokens"), kv["capacity_tokens"], "tokens"),
            Quantity(
                "max_concurrency_at_request_len",
                t("export.concurrency_request", tokens=tokens),
                kv["max_concurrency_at_request_len"],
                "requests",
            ),
            Quantity(
                "max_concurrency_at_max_model_len",
                t("export.concurrency_max_len", tokens=f"{engine['max_model_len']:,}"),
                kv["max_concurrency_at_max_model_len"],
                "x",
            ),
            Quantity(
                "max_concurrency_contiguous",
                t("export.concurrency_contiguous"),
                kv["max_concurrency_contiguous"],
                "requests",
            ),
            Quantity("running_batch", t("export.running"), data["running_batch"], "requests"),
            Quantity("max_num_seqs", "max_num_seqs", engine["max_num_seqs"], "requests"),
        ),
    )


def _timing(data: dict[str, Any], t: Callable[..., str]) -> tuple[Section, Section]:
    lat, tput, bound = data["latency"], data["throughput"], data["bound"]
    latency = Section(
        "latency",
        t("export.section_latency", batch=f"{data['batch']:,}"),
        (
            Quantity("ttft", "TTFT", lat["ttft_ms"], "ms"),
            Quantity("tpot", "TPOT", lat["tpot_ms"], "ms"),
            Quantity("e2e", t("export.e2e"), lat["e2e_ms"], "ms"),
            _bound("prefill_bound", t("export.prefill_bound"), bound["prefill"], t),
            _bound("decode_bound", t("metric.decode_bound"), bound["decode"], t),
        ),
    )
    throughput = Section(
        "throughput",
        t("metric.throughput"),
        (
            Quantity("output_tokens_per_s", t("export.output_rate"), tput["output_tokens_per_s"], "tokens/s"),
            Quantity("total_tokens_per_s", t("export.total_rate"), tput["total_tokens_per_s"], "tokens/s"),
            Quantity("decode_tokens_per_s", t("export.decode_rate"), tput["decode_tokens_per_s"], "tokens/s"),
        ),
    )
    return latency, throughput


def _closed_loop(data: dict[str, Any], t: Callable[..., str]) -> Section:
    loop = data["closed_loop"]
    title = t("export.section_closed_loop", clients=f"{loop['clients']:,}")
    if not loop["stable"]:
        return Section("closed_loop", title, notes=(("unstable", t("export.closed_loop_unstable")),))
    return Section(
        "closed_loop",
        title,
        (
            Quantity("clients", t("export.clients"), loop["clients"]),
            Quantity("running", t("export.running"), loop["running"], "requests"),
            Quantity("ttft", "TTFT", loop["ttft_ms"], "ms"),
            Quantity("tpot", "TPOT", loop["tpot_ms"], "ms"),
            Quantity("e2e", t("export.e2e"), loop["e2e_ms"], "ms"),
            Quantity("output_tokens_per_s", t("export.output_rate"), loop["output_tokens_per_s"], "tokens/s"),
        ),
        (("note", t("export.closed_loop_note", clients=loop["clients"])),),
    )


def _ranges(ranges: dict[str, Any], t: Callable[..., str]) -> Section:
    metrics = (
        ("ttft_ms", t("metric.ttft_burst"), "ms"),
        ("tpot_ms", "TPOT", "ms"),
        ("output_tokens_per_s", t("export.output_rate"), "tokens/s"),
    )
    spans = {key: f"{ranges[key]['low']:,} – {ranges[key]['high']:,} {unit}" for key, _, unit in metrics}
    note = t(
        "likely.bands_tier",
        tier=t(f"likely.tier_{ranges['tier'].replace(' ', '_')}"),
        gpu_class=t(f"likely.class_{ranges['gpu_class']}"),
        ttft=spans["ttft_ms"],
        tpot=spans["tpot_ms"],
        rate=spans["output_tokens_per_s"],
    )
    quantities = tuple(
        Quantity(f"{key}_{end}", t(f"export.range_{end}", metric=label), ranges[key][end], unit)
        for key, label, unit in metrics
        for end in ("low", "high")
    )
    return Section("ranges", t("export.section_ranges"), quantities, (("bands", note),))


def _suggestions(e: Estimate, suggestions: list[dict[str, Any]], t: Callable[..., str]) -> Section:
    title = t("export.section_suggestions")
    if e.fits and e.engine_starts:
        return Section("suggestions", title, notes=(("none_needed", t("export.no_change_needed")),))
    if not suggestions:
        return Section("suggestions", title, notes=(("none_found", t("advice.none")),))
    notes = []
    for s in suggestions:
        outcome = t(
            "advice.result",
            concurrency=f"{s['max_concurrency_at_request_len']:,}",
            tpot=f"{s['tpot_ms']:,} ms",
            rate=f"{s['output_tokens_per_s']:,} tokens/s",
        )
        notes.append((s["code"], f"{s['change']}: {outcome}"))
    return Section("suggestions", title, notes=tuple(notes))


def _engine(data: dict[str, Any], t: Callable[..., str]) -> Section:
    engine = data["engine"]
    backend = (Quantity("attention_backend", t("export.attention_backend"), engine["attention_backend"]),)
    return Section(
        "engine",
        t("export.section_engine"),
        (
            Quantity("engine", t("report.engine"), engine["name"]),
            Quantity("version", t("export.version"), engine["version"]),
            Quantity("release", t("export.release"), engine["release"]),
            *(backend if engine["attention_backend"] else ()),
            Quantity("gpu_memory_utilization", t("report.memory_fraction"), engine["gpu_memory_utilization"]),
            Quantity("max_model_len", "max_model_len", engine["max_model_len"], "tokens"),
            Quantity("max_num_batched_tokens", "max_num_batched_tokens", engine["max_num_batched_tokens"], "tokens"),
            Quantity("max_num_seqs", "max_num_seqs", engine["max_num_seqs"], "requests"),
        ),
        (("note", t("export.engine_note", release=engine["release"])),),
    )


def export_sections(
    e: Estimate,
    data: dict[str, Any],
    ranges: dict[str, Any] | None,
    suggestions: list[dict[str, Any]],
    lang: str = "en",
) -> tuple[Section, ...]:
    """The Explorer's sections in page order for ``e``, whose JSON is ``data`` (:func:`estimate_to_dict`),
    with its likely ranges and fit suggestions as :mod:`core.estimate.export` gathers them."""
    t = lambda key, **kw: message(key, lang, **kw)  # noqa: E731
    warnings = tuple((w.code, w.text(lang)) for w in e.warnings) or (("none", t("export.no_warnings")),)
    return (
        _verdict(e, data, t),
        _headline(data, t),
        _memory(e, data, t),
        _kv(e, data, t),
        *_timing(data, t),
        _closed_loop(data, t),
        *((_ranges(ranges, t),) if ranges else ()),
        _suggestions(e, suggestions, t),
        Section("warnings", t("export.section_warnings"), notes=warnings),
        _engine(data, t),
    )
