"""The Learn page's section on the what-if levers: each formula with this scenario's values.

When a lever is on, its own settings are used; when it is off, an example setting is shown (and
said to be one), so a workshop can walk through every formula from any scenario.
"""

from __future__ import annotations

import streamlit as st

from core.estimate.result import Estimate
from core.levers.attention_kernel import (
    SCORE_BYTES_PER_ELEMENT,
    eager_oom_prompt_len,
    heads_per_gpu,
    score_matrix_bytes,
)
from core.levers.lora import lora_module_shapes, lora_params_per_adapter
from core.levers.prefix import cached_prompt_tokens, shared_prefix_tokens
from core.levers.settings import Lora, PrefixCaching, Speculative
from core.levers.speculative import ACCEPTANCE_RANGES, draft_candidates, expected_tokens_per_step, proposer_deployment
from core.spec import units
from core.spec.deployment import Deployment, Workload
from core.timing.host_link import host_read_bandwidth
from core.timing.phases import decode_step_time, phase_time, plain_decode_step_time
from ui import fmt
from ui.explain import latex
from ui.i18n import t
from ui.sidebar import models_and_gpus

EXAMPLE_K, EXAMPLE_ACCEPTANCE = 4, 0.7
EXAMPLE_RANK = 16


def render_levers(dep: Deployment, work: Workload, result: Estimate, catalog) -> None:
    st.header(t("learn.levers_heading"))
    st.markdown(t("learn.levers_intro"))
    _speculative(dep, work, catalog)
    _prefix(dep, work, result)
    _offload(dep)
    _lora(dep)
    _attention(dep, work, result)


def _example(is_example: bool) -> None:
    if is_example:
        st.caption(t("learn.example_setting"))


def _speculative(dep: Deployment, work: Workload, catalog) -> None:
    st.subheader(t("levers.spec"))
    spec = dep.levers.speculative
    example = spec is None
    if example:
        models, _ = models_and_gpus(catalog)
        draft = next(iter(draft_candidates(dep.model, models.values())), None)
        spec = Speculative(
            method="draft" if draft else "ngram", draft=draft, k=EXAMPLE_K, acceptance=EXAMPLE_ACCEPTANCE
        )
        dep = dep.with_levers(speculative=spec)
    _example(example)
    a, k = spec.acceptance, spec.k
    tokens = expected_tokens_per_step(a, k)
    latex(
        r"E = \frac{1 - \alpha^{k+1}}{1 - \alpha}"
        rf" = \frac{{1 - {a:.2f}^{{{k + 1}}}}}{{1 - {a:.2f}}} = {tokens:.2f}\ \text{{tokens/step}}"
        if a < 1
        else rf"E = k + 1 = {k + 1}"
    )
    context = work.decode_context
    plain = float(plain_decode_step_time(dep, work.batch, context).seconds)
    verify = _verify_seconds(dep, work.batch, context, k)
    proposer = proposer_deployment(dep)
    draft_s = 0.0
    if proposer is not None:
        step = plain_decode_step_time(proposer, work.batch, context)
        draft_s = float(step.seconds - step.overhead_s)
    per_token = float(decode_step_time(dep, work.batch, context).seconds)
    latex(
        r"\text{TPOT}_{spec} = \frac{k\,t_{draft} + t_{verify}(k+1)}{E}"
        rf" \approx \frac{{{k} \times {draft_s / units.MS:.2f} + {verify / units.MS:.2f}}}{{{tokens:.2f}}}"
        rf" = {per_token / units.MS:.2f}\ \text{{ms}}"
        rf" \quad (\text{{plain}}: {plain / units.MS:.2f}\ \text{{ms}})"
    )
    low, high = ACCEPTANCE_RANGES[spec.method]
    st.markdown(
        t(
            "learn.spec_body",
            method=spec.method,
            draft=spec.draft.name if spec.draft else "-",
            batch=work.batch,
            low=f"{low:.1f}",
            high=f"{high:.1f}",
        )
    )


def _verify_seconds(dep: Deployment, batch: int, context: float, k: int) -> float:
    """One verification step: every sequence adds k + 1 tokens (the target's own roofline)."""
    no_spec = dep.with_levers(speculative=None)
    return float(phase_time(no_spec, batch, k + 1, context, 1).seconds)


def _prefix(dep: Deployment, work: Workload, result: Estimate) -> None:
    st.subheader(t("levers.prefix"))
    prefix = dep.levers.prefix
    example = "prefix" not in dep.levers.active
    if example:
        prefix = PrefixCaching(shared_tokens=work.input_len * 3 // 4)
    _example(example)
    block = dep.engine.block_tokens
    shared = shared_prefix_tokens(prefix, work.input_len, block)
    cached = cached_prompt_tokens(prefix, work.input_len, block)
    latex(
        r"c = c_P + \left\lfloor \frac{h\,(I - c_P)}{b} \right\rfloor b,"
        r"\quad c_P = \left\lfloor \frac{\min(P, I)}{b} \right\rfloor b"
        rf" = {shared:,.0f} + {cached - shared:,.0f} = {cached:,.0f}\ \text{{tokens}}"
        rf" \quad (P = {prefix.shared_tokens:,},\ h = {prefix.hit_rate:.2f},\ I = {work.input_len:,},\ b = {block})"
    )
    uncached = work.input_len - cached
    latex(rf"\text{{prefill}} = I - c = {uncached:,.0f}\ \text{{tokens, attending to the }}c\text{{ cached}}")
    latex(
        r"N_{max} = \left\lfloor \frac{\text{KV budget} - \text{KV}(P)}{\text{KV/request} - \text{KV}(P)} \right\rfloor"
    )
    st.markdown(t("learn.prefix_body"))


def _offload(dep: Deployment) -> None:
    st.subheader(t("levers.offload"))
    if dep.gpu.host_link_bandwidth <= 0:
        st.info(t("learn.no_host_link", gpu=dep.gpu.name))
        return
    offloaded = dep.levers.offload.weights_bytes
    example = not offloaded
    if example:
        offloaded = 1.0 * units.GiB
    _example(example)
    bandwidth = host_read_bandwidth(dep.gpu, dep.efficiency)
    latex(
        r"t_{host} = \frac{X}{\tfrac{1}{2} B_{link} \cdot \eta_{link}}"
        rf" = \frac{{{offloaded / units.GiB:.2f}\ \text{{GiB}}}}"
        rf"{{\tfrac{{1}}{{2}} \times {dep.gpu.host_link_bandwidth_bidirectional / units.GB:.0f}\ \text{{GB/s}}"
        rf" \times {dep.efficiency.link:.2f}}}"
        rf" = {offloaded / bandwidth / units.MS:.1f}\ \text{{ms per step}}"
    )
    st.markdown(t("learn.offload_body", link=dep.gpu.host_link_generation, source=dep.gpu.host_link_source_url))


def _lora(dep: Deployment) -> None:
    st.subheader(t("levers.lora"))
    lora = dep.levers.lora
    example = lora is None
    if example:
        targets = "all-linear" if dep.model.moe is None else "attention"
        lora = Lora(adapters=1, rank=EXAMPLE_RANK, targets=targets)
    _example(example)
    try:
        shapes = lora_module_shapes(dep.model, lora.targets)
    except ValueError as err:
        st.info(str(err))
        return
    per_layer = sum(a + b for a, b in shapes)
    params = lora_params_per_adapter(dep.model, lora)
    terms = " + ".join(f"({a:,} + {b:,})" for a, b in shapes)
    latex(
        r"\text{params} = L \cdot r \sum (d_{in} + d_{out})"
        rf" = {dep.model.num_layers} \times {lora.rank} \times [{terms}]"
        rf" = {dep.model.num_layers} \times {lora.rank} \times {per_layer:,} = {params:,}"
    )
    mib = params * 2 / units.MiB
    latex(rf"\text{{bytes}} = \text{{params}} \times 2\ \text{{B}} = {mib:,.1f}\ \text{{MiB per adapter}}")
    st.markdown(t("learn.lora_body"))


def _attention(dep: Deployment, work: Workload, result: Estimate) -> None:
    st.subheader(t("levers.attention"))
    heads = heads_per_gpu(dep.model, dep.parallel.tp)
    s = work.input_len
    scores = score_matrix_bytes(dep.model, dep.parallel.tp, 1, s)
    flash_budget = result.memory.kv_budget + result.memory.part("attention_scores")
    latex(
        r"S_{eager} = H \cdot s^2 \cdot (2 + 4)\ \text{B}"
        rf" = {heads} \times {s:,}^2 \times {SCORE_BYTES_PER_ELEMENT:g}\ \text{{B}}"
        rf" = {scores / units.GiB:.2f}\ \text{{GiB}}"
    )
    st.markdown(
        t(
            "learn.attention_body",
            free=fmt.gib(flash_budget),
            oom=fmt.count(eager_oom_prompt_len(dep.model, dep.parallel.tp, flash_budget)),
        )
    )
