"""Learn page: a hybrid model's constant per-request state and the block size it forces, as
formulas with this scenario's values (core.memory.state computes them)."""

from __future__ import annotations

import streamlit as st

from core.memory.capacity import KvCapacity
from core.memory.kv import kv_bytes_per_token_per_layer, state_layers_per_gpu
from core.memory.state import STATE_DTYPE_BYTES, block_alignment, state_bytes_per_layer, state_page_padding
from core.spec.deployment import Deployment
from core.spec.mixers import LayerKind
from ui.explain import latex
from ui.i18n import t


def render_state(dep: Deployment, kv: KvCapacity) -> None:
    """The state formula of the model's linear layers and vLLM's block size; nothing for others."""
    model, tp = dep.model, dep.parallel.tp
    if not model.is_hybrid:
        return
    layers = state_layers_per_gpu(model, dep.parallel.pp)
    per_layer = state_bytes_per_layer(model, tp)
    b = STATE_DTYPE_BYTES
    if model.count_layers(LayerKind.LINEAR_ATTENTION):
        g = model.linear_attention
        latex(
            r"\text{state/request}_{GDN} = L_{lin} \left[ \frac{(K-1)(2 n_k d_k + n_v d_v)}{tp} b"
            r" + \frac{n_v}{tp} d_k d_v b_{rec} \right]"
            rf" = {layers} \times \left[ \frac{{{g.conv_kernel - 1} \times (2 \times {g.num_k_heads} \times"
            rf" {g.k_head_dim} + {g.num_v_heads} \times {g.v_head_dim})}}{{{tp}}} \times {b}"
            rf" + \frac{{{g.num_v_heads}}}{{{tp}}} \times {g.k_head_dim} \times {g.v_head_dim} \times"
            rf" {g.recurrent_state_bytes} \right] = {layers * per_layer:,.0f}\ \text{{B}}"
        )
    else:
        m = model.mamba
        groups = m.groups_per_gpu_total(tp)
        latex(
            r"\text{state/request}_{Mamba2} = L_{M} \left[ \frac{(K-1)(H P + 2 G N)}{tp} b"
            r" + \frac{H}{tp} P N b_{ssm} \right]"
            rf" = {layers} \times \left[ \frac{{{m.conv_kernel - 1} \times ({m.num_heads} \times {m.head_dim}"
            rf" + 2 \times {groups} \times {m.state_size})}}{{{tp}}} \times {b}"
            rf" + \frac{{{m.num_heads}}}{{{tp}}} \times {m.head_dim} \times {m.state_size} \times"
            rf" {m.ssm_state_bytes} \right] = {layers * per_layer:,.0f}\ \text{{B}}"
        )
    per_token = kv_bytes_per_token_per_layer(model, dep.kv, tp)
    align = block_alignment(dep)  # 16 tokens; 64 for Gated DeltaNet on FlashInfer (vLLM 0.33+, SM90)
    latex(
        r"\text{block} = \max\left(\text{block}_{cfg},\ A \left\lceil \frac{\text{state/layer}}"
        r"{A \times \text{KV/token/layer}} \right\rceil\right)"
        rf" = \max\left({dep.engine.block_tokens},\ {align} \left\lceil \frac{{{per_layer:,.0f}}}{{{align} \times"
        rf" {per_token:,.0f}}} \right\rceil\right) = {kv.block_size}\ \text{{tokens}}"
    )
    st.caption(t("learn.state_caption", padding=f"{100 * state_page_padding(dep):.2f}", block=kv.block_size))
