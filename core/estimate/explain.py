"""Each headline number of an estimate explained: fits, max concurrency, TTFT, TPOT, E2E, throughput,
the decode bound and every memory part (:func:`explain`), as :class:`Explanation` records whose
formula, evaluated with the values shown, gives the number the dashboard shows.

Time follows :mod:`core.estimate.result` and the roofline of :mod:`core.timing.roofline`:

    step time = max(GEMM FLOPs / (peak x compute eff.), weight bytes / (bandwidth x bandwidth eff.))
                + max(attention FLOPs / (16-bit peak x compute eff.), KV bytes / (bandwidth x bandwidth eff.))
                + MoE experts' kernels + all-reduces and logits gather + overheads (+ host reads, + side models)
    TPOT      = one decode step of R running sequences (per emitted token)
    TTFT      = (k - 1) x E2E(R) + request overhead + prefill of R prompts,  k = ceil(B / R)
    E2E       = TTFT + (O - 1) x TPOT;   output tokens/s = B x O / E2E
"""

from __future__ import annotations

import math

import numpy as np

from core.estimate import explain_memory
from core.estimate.explain_memory import Explanation, gib, num
from core.spec import units
from core.timing.aic_backend import step_time_backend
from core.timing.kernel_speed import kernel_speed
from core.timing.roofline import PhaseTime, Roofline

MS = units.MS


def ms(seconds: float) -> str:
    return num(seconds / MS, 5)


def roofline_chain(phase: PhaseTime, dep) -> tuple[str, str]:
    """(symbols, values) of a phase's time: the GEMMs' roofline, attention's roofline and the MoE
    experts' kernels added up, each with its FLOPs, bytes, peaks and efficiencies, then the terms
    added to them."""
    if dep.engine.backend == "aic":
        return aic_chain(phase, dep)
    eff, gpu = dep.efficiency, dep.gpu
    flops, moved, kv = float(phase.flops), float(phase.bytes_moved), float(np.sum(phase.kv_bytes))
    attention_flops = float(phase.attention_flops)
    attention_s, moe_s = float(phase.attention_s), float(phase.moe_s)
    expert_flops, expert_bytes = float(phase.expert_flops), float(phase.expert_bytes)
    gemm_s = float(phase.kernel_seconds) - attention_s - moe_s
    matmul_peak, attention_peak = (rate / eff.compute for rate in Roofline(dep).rates[:2])
    added = [
        (r"T_{MoE}", moe_s),
        (r"T_{comm}", float(phase.comm_s)),
        (r"T_{overhead}", float(phase.overhead_s)),
        (r"T_{host}", float(phase.host_s)),
        (r"T_{side}", float(phase.side_s)),
    ]
    added = [(symbol, value) for symbol, value in added if value]
    symbols = (
        r"\max\left(\frac{F_{lin}}{P \eta_c}, \frac{W}{BW \eta_{bw}}\right)"
        r" + \max\left(\frac{F_{attn}}{P_{attn} \eta_c}, \frac{KV}{BW \eta_{bw}}\right)"
    )
    symbols += "".join(f" + {symbol}" for symbol, _ in added)
    bandwidth = rf"{num(gpu.memory_bandwidth / 1e12)}\,\text{{TB/s}} \times {eff.bandwidth:.3g}"

    def roof(gflop: float, peak: float, gb: float) -> str:
        # GFLOP over TFLOP/s and GB over TB/s are both milliseconds
        compute = (
            rf"\frac{{{num(gflop)}\,\text{{GFLOP}}}}{{{num(peak / 1e12)}\,\text{{TFLOP/s}} \times {eff.compute:.3g}}}"
        )
        return rf"\max\left({compute}, \frac{{{num(gb)}\,\text{{GB}}}}{{{bandwidth}}}\right)"

    moe_note = (
        rf"\ (T_{{MoE}}:\ {num(expert_flops / 1e9)}\,\text{{GFLOP}},\ {num(expert_bytes / 1e9)}\,\text{{GB of"
        rf" experts read at}}\ \eta_{{bw}} \eta_{{exp}},\ \eta_{{exp}} = {eff.expert:.3g},"
        rf"\ {dep.model.num_moe_layers} \times"
        rf" {ms(eff.moe_layer_overhead_s)}\,\text{{ms per step}})"
        if moe_s
        else ""
    )
    gather_s = float(np.sum(phase.gather_s))
    if gather_s:  # the LM head's logits, gathered over the tensor-parallel GPUs every step
        tp = dep.parallel.tp
        moe_note += (
            rf"\ (T_{{comm}}:\ {ms(float(phase.comm_s) - gather_s)}\,\text{{ms of all-reduces and sends}} +"
            rf"\ {ms(gather_s)}\,\text{{ms gathering the logits: sequences}} \times"
            rf"\ {dep.model.vocab_size} \times 2\,\text{{B}} \times \frac{{{tp - 1}}}{{{tp}}}\ \text{{per step}})"
        )
    lin = roof((flops - attention_flops - expert_flops) / 1e9, matmul_peak, (moved - kv - expert_bytes) / 1e9)
    attn = roof(attention_flops / 1e9, attention_peak, kv / 1e9)
    plus = "".join(rf" + {ms(value)}" for _, value in added)
    values = rf"{lin} + {attn}{plus} = {ms(gemm_s)} + {ms(attention_s)}{plus}\ \text{{ms}}{moe_note}"
    frontend = float(phase.frontend_s)
    if frontend > float(phase.gpu_seconds):  # the API server, in its own process, delivers slower than the engine
        symbols = rf"\max\left({symbols}, T_{{delivery}}\right)"
        values += rf"\ \text{{ms, below the front end's}}\ {ms(frontend)}"
    return symbols, values


def aic_chain(phase: PhaseTime, dep) -> tuple[str, str]:
    """(symbols, values) of a phase timed by the aic backend (:mod:`core.timing.aic_backend`): its
    kernels from AIConfigurator's tables, then the project's terms added to them."""
    added = [(symbol, float(value)) for symbol, value in _added_terms(phase) if float(value)]
    symbols = r"T_{AIC}" + "".join(f" + {symbol}" for symbol, _ in added)
    plus = "".join(rf" + {ms(value)}" for _, value in added)
    kernels = float(phase.kernel_seconds)
    backend = step_time_backend(dep).replace("_", r"\_")  # KaTeX's text mode takes no bare underscore
    values = rf"{ms(kernels)}{plus}\ \text{{ms}}\ (T_{{AIC}}:\ \text{{{backend}}})"
    frontend = float(phase.frontend_s)
    if frontend > float(phase.gpu_seconds):
        symbols = rf"\max\left({symbols}, T_{{frontend}}\right)"
        values += rf"\ \text{{ms, below the front end's}}\ {ms(frontend)}"
    return symbols, values


def _added_terms(phase: PhaseTime) -> list:
    return [(r"T_{overhead}", phase.overhead_s), (r"T_{host}", phase.host_s), (r"T_{side}", phase.side_s)]


def tpot(result) -> Explanation:
    dep, lat = result.deployment, result.latency
    symbols, values = roofline_chain(lat.decode, dep)
    return Explanation(
        "tpot",
        r"\text{TPOT} = " + symbols,
        rf"\text{{TPOT}} = {values} = {ms(lat.tpot_s)}\ \text{{ms}}",
        lat.tpot_s,
        "s",
        f"core/timing/phases.py (decode_step_time), core/timing/roofline.py, core/timing/kernel_speed.py "
        f"(`{kernel_speed(dep).tier}`), core/timing/aic_backend.py (`{step_time_backend(dep)}`);"
        " docs/model.md, Latency and throughput",
    )


def prefill(result) -> Explanation:
    dep, phase = result.deployment, result.latency.prefill
    symbols, values = roofline_chain(phase, dep)
    return Explanation(
        "prefill",
        r"T_{prefill} = " + symbols,
        rf"T_{{prefill}} = {values} = {ms(float(phase.seconds))}\ \text{{ms}}",
        float(phase.seconds),
        "s",
        f"core/timing/phases.py (prefill_time), core/timing/kernel_speed.py (`{kernel_speed(dep).tier}`),"
        f" core/timing/aic_backend.py (`{step_time_backend(dep)}`);"
        " docs/model.md, Latency and throughput",
    )


def ttft(result) -> Explanation:
    dep, lat, work = result.deployment, result.latency, result.workload
    running = result.running_batch
    k = math.ceil(work.batch / running)
    request = dep.efficiency.request_delay_s(work.batch)  # overhead + the burst's chat templates on the loop
    prefill_s = float(lat.prefill.seconds)
    waited = lat.ttft_s - request - prefill_s  # (k - 1) rounds of E2E(R)
    e2e_round = waited / (k - 1) if k > 1 else 0.0
    queue = rf"({k} - 1) \times {ms(e2e_round)} + " if k > 1 else ""
    return Explanation(
        "ttft",
        r"\text{TTFT} = (k - 1)\,E2E(R) + T_{request} + T_{prefill}(R),\quad k = \lceil B / R \rceil",
        rf"\text{{TTFT}} = {queue}{ms(request)} + {ms(prefill_s)} = {ms(lat.ttft_s)}\ \text{{ms}}"
        rf"\quad (B = {work.batch},\ R = {running},\ k = {k})",
        lat.ttft_s,
        "s",
        "core/estimate/result.py, core/estimate/scope.py; docs/model.md, Latency and throughput",
    )


def ttft_burst(result) -> Explanation:
    """The burst's TTFT as a benchmark prints it: last, P99 and median (core/estimate/burst.py)."""
    work, burst, (budget, seqs) = result.workload, result.burst, result.deployment.batch_limits
    how = (
        rf"{burst.steps}\ \text{{steps}},\ {burst.preemptions}\ \text{{preemptions}}"
        if burst.source == "simulator"
        else rf"\text{{rounds of}}\ R = {result.running_batch}"
    )
    return Explanation(
        "ttft_burst",
        r"\text{TTFT}_{last},\ \text{TTFT}_{p99},\ \text{TTFT}_{p50}"
        r"\ \text{of B requests sent at t = 0, V1 admission stepped}",
        # the first two in braces and the remark on its own line: three figures side by side, not a chain of
        # equalities to break at "=", ending with the median, the number shown
        r"\begin{gathered}"
        rf"{{\text{{TTFT}}_{{last}} = {ms(burst.last_s)}}},\ {{\text{{TTFT}}_{{p99}} = {ms(burst.p99_s)}}},"
        rf"\ \text{{TTFT}}_{{p50}} = {ms(burst.median_s)}\ \text{{ms}} \\ \quad (B = {work.batch},"
        rf"\ I = {work.input_len},\ O = {work.output_len},\ N = {budget},\ \mathtt{{max\_num\_seqs}} = {seqs};\ {how})"
        r"\end{gathered}",
        burst.median_s,
        "s",
        "core/estimate/burst.py, core/serving/simulate.py; docs/model.md, Latency and throughput",
    )


def e2e(result) -> Explanation:
    lat, out = result.latency, result.workload.output_len
    return Explanation(
        "e2e",
        r"E2E = \text{TTFT} + (O - 1) \times \text{TPOT}",
        rf"E2E = {ms(lat.ttft_s)} + ({out} - 1) \times {ms(lat.tpot_s)} = {ms(lat.e2e_s)}\ \text{{ms}}",
        lat.e2e_s,
        "s",
        "core/estimate/result.py; docs/model.md, Latency and throughput",
    )


def throughput(result) -> Explanation:
    work, lat, rate = result.workload, result.latency, result.throughput.output_tokens_per_s
    return Explanation(
        "throughput",
        r"\text{output tokens/s} = \frac{B \times O}{E2E}",
        rf"\frac{{{work.batch} \times {work.output_len}}}{{{num(lat.e2e_s, 5)}\,\text{{s}}}}"
        rf" = {num(rate)}\ \text{{tok/s}}",
        rate,
        "tok/s",
        "core/estimate/result.py; docs/model.md, Latency and throughput",
    )


def fits(result) -> Explanation:
    mem = result.memory
    sign = r"\le" if result.fits else ">"
    return Explanation(
        "fits",
        r"\text{fits} \iff \text{KV budget} > 0 \ \text{and}\ \text{KV}_{batch} \le \text{KV space}",
        rf"{gib(mem.kv_in_use)}\ \text{{GiB}} {sign} {gib(mem.kv_space)}\ \text{{GiB}}"
        + ("" if mem.kv_budget > 0 else rf",\ \text{{KV budget}} = {gib(mem.kv_budget)} \le 0"),
        float(result.fits),
        "",
        "core/estimate/result.py; docs/model.md, Memory per GPU",
    )


def bound(result) -> Explanation:
    decode = result.latency.decode
    compute_s, memory_s = float(decode.compute_s), float(decode.memory_s)
    sign = r"\ge" if compute_s >= memory_s else "<"
    return Explanation(
        "bound",
        r"\text{compute-bound} \iff \frac{F}{P \eta_c} \ge \frac{\text{bytes}}{BW \eta_{bw}}",
        rf"{ms(compute_s)}\ \text{{ms}} {sign} {ms(memory_s)}\ \text{{ms}}",
        float(compute_s >= memory_s),
        "",
        "core/timing/roofline.py (PhaseTime.bound); docs/model.md, Latency and throughput",
    )


MEMORY = (
    explain_memory.weights,
    explain_memory.activations,
    explain_memory.overhead,
    explain_memory.kv_per_token,
    explain_memory.kv_budget,
    explain_memory.kv_in_use,
    explain_memory.max_concurrency,
)
TIMING = (fits, ttft, ttft_burst, prefill, tpot, e2e, throughput, bound)


def explain(result, parts=None) -> dict[str, Explanation]:
    """Every explained number of an :class:`~core.estimate.result.Estimate`, by key; ``parts``: only these
    explanation functions (e.g. :data:`MEMORY`: no burst is stepped for a page that shows none)."""
    return {item.key: item for item in (f(result) for f in (parts or (*TIMING, *MEMORY)))}


__all__ = ["Explanation", "explain", "gib"]
