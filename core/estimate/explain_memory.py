"""Each memory number of an estimate explained: its formula, this scenario's values in it, and where
the rule comes from (:class:`Explanation`).

The values substituted are the ones the estimate used (read from the same functions and the same
result), so the formula evaluates to the number the dashboard shows; tests check that it does.
Formulas are LaTeX, language-free; the UI adds the words (data/messages.toml, ``[explain]``).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.memory.accounting import CUDA_CONTEXT_BYTES, SGLANG_CONTEXT_BYTES, measured_margin
from core.memory.activations import (
    FP32_BYTES,
    GATED_FFN_ACTIVATIONS,
    HIDDEN_ACTIVATIONS,
    SAMPLER_LOGIT_COPIES,
)
from core.memory.kv import attention_layers_per_gpu, kv_bytes_per_token, kv_heads_per_gpu
from core.memory.weights import parameter_counts, weight_bytes
from core.spec import units
from core.spec.precision import ACTIVATION_PRECISION


@dataclass(frozen=True)
class Explanation:
    """How one number is computed. ``formula`` in symbols and ``values`` with this scenario's
    numbers are LaTeX; ``value`` is the number itself in SI units (``unit``: "B", "s", "tok/s",
    "requests" or "" for a verdict); ``source`` names the module and the document section that
    state the rule."""

    key: str
    formula: str
    values: str
    value: float
    unit: str
    source: str


def gib(x: float) -> str:
    return f"{x / units.GiB:,.2f}".replace(",", "{,}")


def num(x: float, digits: int = 4) -> str:
    """A number for LaTeX: thousands separated, ``digits`` significant figures."""
    text = f"{x:,.0f}" if abs(x) >= 10 ** (digits - 1) else f"{x:.{digits}g}"
    return text.replace(",", "{,}")


def weights(result) -> Explanation:
    """Weights on the most loaded GPU = P x b̄ x s: parameters, mean bytes per parameter of this
    format (16-bit embeddings, norms and scales included), the share one GPU holds."""
    dep = result.deployment
    params = parameter_counts(dep.model).total
    total = weight_bytes(dep.model, dep.weights).total
    per_param = total / params
    share = result.memory.weights / total
    return Explanation(
        "weights",
        r"W = P \times \bar b \times s",
        rf"W = {num(params / 1e9)} \times 10^{{9}}\,\text{{params}} \times {per_param:.3f}\,\text{{B}}"
        rf" \times {share:.4g} = {num(result.memory.weights / 1e9)}\ \text{{GB}}"
        rf" = {gib(result.memory.weights)}\ \text{{GiB}}",
        result.memory.weights,
        "B",
        "core/memory/weights.py; docs/model.md, Memory per GPU",
    )


def activations(result) -> Explanation:
    """vLLM's start-up profile peak: T x 2 B x (3 F + 4 H) + 2 x min(S, T) x V x 4 B."""
    dep = result.deployment
    model, tokens, seqs = dep.model, result.max_num_batched_tokens, result.max_num_seqs
    if model.moe:
        ffn = model.moe.experts_per_token * model.moe.expert_ffn_size
        ffn += model.moe.num_shared_experts * model.moe.shared_ffn_size
    else:
        ffn = model.ffn_size
    b = ACTIVATION_PRECISION.bytes_per_element
    return Explanation(
        "activations",
        rf"A = T \times {b:g} \times ({GATED_FFN_ACTIVATIONS} F + {HIDDEN_ACTIVATIONS} H)"
        rf" + {SAMPLER_LOGIT_COPIES} \min(S, T) \times V \times {FP32_BYTES}",
        rf"A = {num(tokens)} \times {b:g} \times ({GATED_FFN_ACTIVATIONS} \times {num(ffn)}"
        rf" + {HIDDEN_ACTIVATIONS} \times {num(model.hidden_size)}) + {SAMPLER_LOGIT_COPIES}"
        rf" \times {num(min(seqs, tokens))} \times {num(model.vocab_size)} \times {FP32_BYTES}"
        rf" = {gib(result.memory.activations)}\ \text{{GiB}}",
        result.memory.activations,
        "B",
        "core/memory/activations.py; docs/model.md, Memory per GPU",
    )


def overhead(result) -> Explanation:
    dep = result.deployment
    graphs = dep.engine.graph_charge_bytes
    rest = result.memory.overhead - graphs
    return Explanation(
        "overhead",
        r"O = O_{non\text{-}torch} + O_{graphs}",
        rf"O = {gib(rest)} + {gib(graphs)} = {gib(result.memory.overhead)}\ \text{{GiB}}",
        result.memory.overhead,
        "B",
        "core/memory/overhead.py; docs/model.md, Memory per GPU",
    )


def kv_per_token(result) -> Explanation:
    """KV bytes per token on one GPU: 2 x L x H_kv x d x b, or MLA's latent and rope part."""
    dep, kv = result.deployment, result.kv
    model, b = dep.model, dep.kv.bytes_per_element
    layers = attention_layers_per_gpu(model, dep.parallel.pp)  # a hybrid's linear layers keep no KV
    if model.mla is None:
        heads = kv_heads_per_gpu(model, dep.parallel.tp)
        formula = r"\text{KV/token} = 2 \times L \times H_{kv} \times d_{head} \times b"
        values = rf"2 \times {layers} \times {heads} \times {model.head_dim} \times {b:g}"
    else:
        index = model.indexer.cache_bytes_per_token if model.indexer else 0  # DeepSeek sparse attention's keys
        formula = r"\text{KV/token}_{MLA} = L \times [(r_{kv} + d_{rope}) \times b" + (
            r" + b_{index}]" if index else "]"
        )
        rank, rope = model.mla.kv_lora_rank, model.mla.qk_rope_head_dim
        values = rf"{layers} \times [({rank} + {rope}) \times {b:g}" + (rf" + {index}]" if index else "]")
        if model.indexer is not None and dep.kv.name == "fp8":  # vLLM's fp8_ds_mla layout (core/memory/kv.py)
            formula = (
                r"\text{KV/token}_{MLA} = L \times [r_{kv} + 4 \lceil r_{kv} / 128 \rceil + 2 d_{rope} + b_{index}]"
            )
            values = rf"{layers} \times [{rank} + 4 \times {-(-rank // 128)} + 2 \times {rope} + {index}]"
    extra = kv.bytes_per_token - kv_bytes_per_token(model, dep.kv, dep.parallel)  # a proposer's KV beside it
    if extra > 0:
        formula += r" + \text{KV/token}_{draft}"
        values += rf" + {num(extra)}"
    return Explanation(
        "kv_per_token",
        formula,
        rf"\text{{KV/token}} = {values} = {num(kv.bytes_per_token)}\ \text{{B}}",
        kv.bytes_per_token,
        "B",
        "core/memory/kv.py; docs/model.md, Memory per GPU",
    )


def kv_budget(result) -> Explanation:
    """Each engine's KV budget (core/memory/accounting.py) with this scenario's values."""
    dep, mem = result.deployment, result.memory
    u, f = mem.usable, dep.memory_fraction
    static = mem.weights + sum(p.bytes for p in mem.parts if p.kind == "gpu_static")
    peak = mem.activations + sum(p.bytes for p in mem.parts if p.kind == "gpu_peak")
    symbols, numbers = {
        "vllm": (
            r"M \cdot u - W - A - O",
            rf"{gib(u)} \times {f:.3g} - {gib(static)} - {gib(peak)} - {gib(mem.overhead)}",
        ),
        "sglang": (r"u \cdot (M - C) - W", rf"{f:.3g} \times ({gib(u)} - {gib(SGLANG_CONTEXT_BYTES)}) - {gib(static)}"),
        "trtllm": (
            r"u \cdot (M - W - A - O)",
            rf"{f:.3g} \times ({gib(u)} - {gib(static)} - {gib(peak)} - {gib(mem.overhead)})",
        ),
    }[dep.engine.release.engine]
    if mem.sizing == "vllm_measured":  # vLLM >= 0.34 on CUDA and ROCm: sized from measured memory
        margin = measured_margin(peak, dep.gpu.vendor)
        symbols = r"M - \max(M (1 - u),\ C + \max(m_0, 0.75 A)) - W - A - O"
        numbers = (
            rf"{gib(u)} - \max({gib(u * (1 - f))},\ {gib(CUDA_CONTEXT_BYTES)} + {gib(margin)})"
            rf" - {gib(static)} - {gib(peak)} - {gib(mem.overhead)}"
        )
    return Explanation(
        "kv_budget",
        r"\text{KV budget} = " + symbols,
        rf"\text{{KV budget}} = {numbers} = {gib(mem.kv_budget)}\ \text{{GiB}}",
        mem.kv_budget,
        "B",
        f"core/memory/accounting.py ({dep.engine.release.name}); docs/model.md, Engine releases",
    )


def kv_in_use(result) -> Explanation:
    """KV the batch needs on one GPU: the shared prefix once plus each request's own, with dp > 1 the
    requests of the busiest data-parallel rank (B_rank)."""
    dep, kv, mem, work = result.deployment, result.kv, result.memory, result.workload
    rank = float(dep.parallel.rank_sequences(work.batch))
    b = r"B_{rank}" if dep.parallel.dp > 1 else "B"
    count = num(rank) if dep.parallel.dp > 1 else str(work.batch)
    if kv.shared_prefix_bytes:  # prefix caching: the shared prefix is held once
        formula = rf"\text{{KV}}_{{batch}} = \text{{KV}}(P) + {b}\,(\text{{KV/request}} - \text{{KV}}(P))"
        shared, per_request = kv.shared_prefix_bytes / units.GiB, kv.bytes_per_request / units.GiB
        values = rf"{shared:.6g} + {count} \times ({per_request:.6g} - {shared:.6g})"
    else:
        formula = rf"\text{{KV}}_{{batch}} = {b} \times \text{{KV/request}}"
        values = rf"{count} \times {kv.bytes_per_request / units.GiB:.6g}"
    return Explanation(
        "kv_in_use",
        formula,
        rf"\text{{KV}}_{{batch}} = {values} = {gib(mem.kv_in_use)}\ \text{{GiB}}",
        mem.kv_in_use,
        "B",
        "core/memory/request_kv.py; docs/model.md, Concurrency ceiling",
    )


def max_concurrency(result) -> Explanation:
    """N_max = floor((KV space - KV(P)) / (KV per request - KV(P))) x dp: whole requests of this
    length in the KV space (the budget plus host KV space), the shared prefix P held once, each
    data-parallel rank holding its own."""
    kv, mem, dp = result.kv, result.memory, result.deployment.parallel.dp
    shared = kv.shared_prefix_bytes
    minus = rf" - {shared / units.GiB:.6g}" if shared else ""
    prefix = r" - \text{KV}(P)" if shared else ""
    ranks = rf" \times {dp}" if dp > 1 else ""
    per_request = f"{kv.bytes_per_request / units.GiB:.6g}"
    empty = mem.kv_space - shared < 0  # nothing left: no request fits, not a negative count
    opening, closing = (r"\max\left(0, ", r"\right)") if empty else ("", "")
    return Explanation(
        "max_concurrency",
        r"N_{max} = \left\lfloor \frac{\text{KV space}"
        + prefix
        + r"}{\text{KV/request}"
        + prefix
        + r"} \right\rfloor"
        + (r" \times dp" if dp > 1 else ""),
        rf"N_{{max}} = {opening}\left\lfloor \frac{{{mem.kv_space / units.GiB:.6g}{minus}}}{{{per_request}{minus}}}"
        rf" \right\rfloor{closing}{ranks} = {num(kv.max_concurrency_at_request_len)}",
        float(kv.max_concurrency_at_request_len),
        "requests",
        "core/memory/capacity.py; docs/model.md, Concurrency ceiling",
    )
