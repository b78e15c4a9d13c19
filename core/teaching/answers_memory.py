"""Answers of the memory exercises: KV per token and GQA, the concurrency ceiling three ways, and
what quantizing the weights or the KV cache frees. Every number comes from core for the exercise's
scenario (:func:`core.estimate.result.estimate` and the formulas of :mod:`core.memory`)."""

from __future__ import annotations

import dataclasses

from core.estimate.result import estimate
from core.memory.kv import attention_layers_per_gpu, kv_heads_per_gpu, mha_equivalent
from core.spec.catalog import Catalog
from core.spec.precision import weight_precision
from core.spec.support import kv_for
from core.teaching.exercises import AUTO, Exercise
from core.teaching.text import Answer, Table, count, duration, gib, rate, ratio, text


def kv_gqa(ex: Exercise, catalog: Catalog) -> Answer:
    """KV per token = 2 x layers x KV heads x head_dim x bytes; the MHA equivalent keeps one KV head
    per query head; the concurrency either allows in the same KV budget."""
    dep, work = ex.scenario.build(catalog)
    model = dep.model
    if model.mla is not None or model.is_hybrid:
        raise ValueError(f"{ex.id}: the formula is for standard attention; {model.name} is not")
    result = estimate(dep, work)
    kv = result.kv
    mha = estimate(dataclasses.replace(dep, model=mha_equivalent(model)), work).kv
    layers = attention_layers_per_gpu(model, dep.parallel.pp)
    heads = kv_heads_per_gpu(model, dep.parallel.tp)
    size = f"{dep.kv.bytes_per_element:g}"
    values = {
        "layers": layers,
        "kv_heads": heads,
        "heads": model.num_heads,
        "head_dim": model.head_dim,
        "bytes_per_element": dep.kv.bytes_per_element,
        "kv_bytes_per_token": kv.bytes_per_token,
        "kv_bytes_per_request": kv.bytes_per_request,
        "mha_bytes_per_token": mha.bytes_per_token,
        "mha_bytes_per_request": mha.bytes_per_request,
        "ratio": mha.bytes_per_token / kv.bytes_per_token,
        "kv_budget": result.memory.kv_space,
        "max_concurrency": kv.max_concurrency_at_request_len,
        "mha_max_concurrency": mha.max_concurrency_at_request_len,
    }
    steps = (
        text(
            "workshop.kv_gqa_formula",
            layers=layers,
            kv_heads=heads,
            head_dim=model.head_dim,
            bytes=size,
            per_token=count(kv.bytes_per_token),
            kib=f"{kv.bytes_per_token / 1024:,.0f}",
        ),
        text(
            "workshop.kv_gqa_request",
            tokens=count(work.request_len),
            per_token=count(kv.bytes_per_token),
            per_request=gib(kv.bytes_per_request, 3),
        ),
        text(
            "workshop.kv_gqa_mha",
            heads=model.num_heads,
            layers=layers,
            head_dim=model.head_dim,
            bytes=size,
            per_token=count(mha.bytes_per_token),
            per_request=gib(mha.bytes_per_request, 3),
            ratio=ratio(values["ratio"]),
            model=model.name,
            group=model.num_heads // model.num_kv_heads,
        ),
        text(
            "workshop.kv_gqa_concurrency",
            budget=gib(result.memory.kv_space),
            gpu=dep.gpu.name,
            tokens=count(work.request_len),
            paged=count(kv.max_concurrency_at_request_len),
            mha=count(mha.max_concurrency_at_request_len),
        ),
    )
    return Answer(ex.id, steps, values)


def ceiling(ex: Exercise, catalog: Catalog) -> Answer:
    """The ceiling three ways (:mod:`core.memory.capacity`): paged at the request's length, vLLM's
    logged figure at max_model_len, and contiguous reservation of max_model_len per request."""
    dep, work = ex.scenario.build(catalog)
    result = estimate(dep, work)
    mem, kv = result.memory, result.kv
    contiguous_bytes = kv.bytes_per_max_len_request  # max_model_len is whole blocks here
    values = {
        "usable": mem.usable,
        "memory_fraction": dep.memory_fraction,
        "weights": mem.weights,
        "activations": mem.activations,
        "overhead": mem.overhead,
        "kv_budget": mem.kv_budget,
        "kv_bytes_per_request": kv.bytes_per_request,
        "paged": kv.max_concurrency_at_request_len,
        "capacity_tokens": kv.capacity_tokens,
        "max_model_len": dep.max_model_len,
        "vllm": kv.max_concurrency_at_max_model_len,
        "contiguous_bytes_per_request": contiguous_bytes,
        "contiguous": kv.max_concurrency_contiguous,
    }
    steps = (
        text(
            "workshop.ceiling_budget",
            usable=gib(mem.usable),
            fraction=f"{dep.memory_fraction:.2f}",
            weights=gib(mem.weights),
            activations=gib(mem.activations),
            overhead=gib(mem.overhead),
            budget=gib(mem.kv_budget),
        ),
        text(
            "workshop.ceiling_paged",
            budget=gib(mem.kv_budget),
            tokens=count(work.request_len),
            per_request=gib(kv.bytes_per_request, 3),
            paged=count(kv.max_concurrency_at_request_len),
        ),
        text(
            "workshop.ceiling_vllm",
            capacity=count(kv.capacity_tokens),
            max_model_len=count(dep.max_model_len),
            vllm=f"{kv.max_concurrency_at_max_model_len:,.2f}",
        ),
        text(
            "workshop.ceiling_contiguous",
            budget=gib(mem.kv_budget),
            max_model_len=count(dep.max_model_len),
            per_request=gib(contiguous_bytes, 3),
            contiguous=count(kv.max_concurrency_contiguous),
        ),
        text(
            "workshop.ceiling_lesson",
            tokens=count(work.request_len),
            max_model_len=count(dep.max_model_len),
            paged=count(kv.max_concurrency_at_request_len),
            contiguous=count(kv.max_concurrency_contiguous),
            ratio=ratio(kv.max_concurrency_at_request_len / max(kv.max_concurrency_contiguous, 1)),
        ),
    )
    if kv.max_concurrency_contiguous < work.batch <= kv.max_concurrency_at_request_len:
        steps += (
            text(
                "workshop.ceiling_batch",
                batch=work.batch,
                paged=count(kv.max_concurrency_at_request_len),
                contiguous=count(kv.max_concurrency_contiguous),
            ),
        )
    return Answer(ex.id, steps, values)


def quantization(ex: Exercise, catalog: Catalog) -> Answer:
    """Each (weights, KV) format pair of the exercise on the same GPU and workload: weights per GPU,
    KV budget, KV per request, the ceiling, TPOT and throughput."""
    dep, work = ex.scenario.build(catalog)
    rows, results = [], []
    for weights_name, kv_name in ex.settings["variants"]:
        weights = weight_precision(dep.model.native_dtype if weights_name == AUTO else weights_name)
        variant = dataclasses.replace(dep, weights=weights, kv=kv_for(kv_name, weights, dep.gpu))
        r = estimate(variant, work)
        results.append(r)
        rows.append(
            (
                text("workshop.quantization_variant", weights=weights.label, kv=variant.kv.label),
                gib(r.memory.weights),
                gib(r.memory.kv_budget),
                gib(r.kv.bytes_per_request, 3),
                count(r.kv.max_concurrency_at_request_len),
                duration(r.latency.tpot_s),
                rate(r.throughput.output_tokens_per_s),
            )
        )
    columns = tuple(
        text(f"workshop.col_{name}")
        for name in ("format", "weights", "kv_budget", "kv_request", "concurrency", "tpot", "throughput")
    )
    base, *others = results
    values = {
        "variants": [
            {
                "weights": r.deployment.weights.name,
                "kv": r.deployment.kv.name,
                "weights_bytes": r.memory.weights,
                "kv_budget": r.memory.kv_budget,
                "kv_bytes_per_request": r.kv.bytes_per_request,
                "max_concurrency": r.kv.max_concurrency_at_request_len,
                "tpot_s": r.latency.tpot_s,
                "output_tokens_per_s": r.throughput.output_tokens_per_s,
            }
            for r in results
        ]
    }
    steps: list = [Table(columns, tuple(rows))]
    same_kv = [r for r in others if r.deployment.kv == base.deployment.kv]
    if same_kv:  # weights quantized, KV as it was: the smallest weights
        light = min(same_kv, key=lambda r: r.memory.weights)
        steps.append(
            text(
                "workshop.quantization_weights",
                format=light.deployment.weights.label,
                freed=gib(base.memory.weights - light.memory.weights),
                before=gib(base.memory.kv_budget),
                after=gib(light.memory.kv_budget),
                concurrency_before=count(base.kv.max_concurrency_at_request_len),
                concurrency_after=count(light.kv.max_concurrency_at_request_len),
                tpot_before=duration(base.latency.tpot_s),
                tpot_after=duration(light.latency.tpot_s),
                batch=work.batch,
            )
        )
    same_weights = [r for r in others if r.deployment.weights == base.deployment.weights]
    if same_weights:  # KV quantized, weights as they were
        small = min(same_weights, key=lambda r: r.kv.bytes_per_token)
        steps.append(
            text(
                "workshop.quantization_kv",
                format=small.deployment.kv.label,
                per_token_before=count(base.kv.bytes_per_token),
                per_token_after=count(small.kv.bytes_per_token),
                concurrency_before=count(base.kv.max_concurrency_at_request_len),
                concurrency_after=count(small.kv.max_concurrency_at_request_len),
                tpot_before=duration(base.latency.tpot_s),
                tpot_after=duration(small.latency.tpot_s),
            )
        )
    best = max(results, key=lambda r: r.kv.max_concurrency_at_request_len)
    steps.append(
        text(
            "workshop.quantization_lesson",
            weights=best.deployment.weights.label,
            kv=best.deployment.kv.label,
            concurrency=count(best.kv.max_concurrency_at_request_len),
            ratio=ratio(best.kv.max_concurrency_at_request_len / max(base.kv.max_concurrency_at_request_len, 1)),
        )
    )
    return Answer(ex.id, tuple(steps), values)
