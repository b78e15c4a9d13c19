"""Catalog: the models and GPUs the tool knows, with their figures and sources; add your own."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.estimate.report import gpu_to_dict, model_to_dict
from core.spec.catalog import load_catalog
from ui.custom import custom_gpu_form, import_model_form
from ui.energy import catalog_columns
from ui.i18n import t

st.title(t("catalog.title"))
st.caption(t("catalog.subtitle"))
catalog = load_catalog()
custom_models = st.session_state.get("custom_models", {})
custom_gpus = st.session_state.get("custom_gpus", {})

MODEL_COLUMNS = (
    "id", "name", "attention", "layers", "hidden_size", "heads", "kv_heads", "head_dim", "sliding_window",
    "sliding_layers", "sparse_attention_topk", "mtp_layers", "max_context", "native_dtype", "quantization",
    "source_read",
)  # fmt: skip
GPU_COLUMNS = (
    "id", "name", "memory_gib", "memory_basis", "memory_bandwidth_gb_s", "compute_capability", "interconnect",
    "link_bandwidth_gb_s_bidirectional", "host_link", "host_link_gb_s_bidirectional", "price_per_hour_usd",
    "source_read",
)  # fmt: skip
TFLOPS = {"bf16": "TFLOPS", "fp16": "TFLOPS", "fp8": "TFLOPS", "int8": "TOPS", "int4": "TOPS", "fp4": "TFLOPS"}
MODEL_FIRST = ("name", "params_total_b", "params_active_b", "attention", "kv_bytes_per_token_16bit", "max_context",
               "native_dtype", "source_url")  # fmt: skip
GPU_FIRST = ("name", "memory_gib", "memory_bandwidth_gb_s", "bf16_tflops", "fp8_tflops", "price_per_hour_usd",
             "source_url")  # fmt: skip
TABLE_HEIGHT = 640
"""About 17 rows at once (the default showed 10 of 75 models), the columns a reader compares first."""
SOURCE_HOST = r"https?://(?:www\.)?([^/]+)"
"""A source link shows its site; the whole address is the link."""
MISSING = "—"
"""What a cell without a value shows (not "None"): no sliding window, no price, no FP4 units."""


def first(frame: pd.DataFrame, columns) -> list[str]:
    """Every column of ``frame``, ``columns`` first."""
    return [*columns, *(c for c in frame.columns if c not in columns)]


def headers(columns) -> dict:
    """Every column headed in the session's language (the frame keeps the catalog's field names)."""
    return {column: st.column_config.Column(t(f"catalog.col_{column}")) for column in columns}


models_tab, gpus_tab, add_tab = st.tabs([t("catalog.models"), t("catalog.gpus"), t("catalog.add")])
with models_tab:
    rows = [model_to_dict(m) for m in (*catalog.models, *custom_models.values())]
    for row in rows:  # per-layer kinds as one readable cell: "12 attention · 36 linear attention"
        row["layer_kinds"] = " · ".join(f"{n} {t(f'catalog.kind.{kind}')}" for kind, n in row["layer_kinds"].items())
    frame = pd.DataFrame(rows).drop(columns=["moe", "hf_id"])
    st.dataframe(
        frame,
        width="stretch",
        height=TABLE_HEIGHT,
        hide_index=True,
        placeholder=MISSING,
        column_order=first(frame, MODEL_FIRST),
        column_config=headers(MODEL_COLUMNS)
        | {
            "source_url": st.column_config.LinkColumn(t("catalog.source"), display_text=SOURCE_HOST),
            "params_total_b": st.column_config.NumberColumn(t("catalog.params_total"), format="%.2f"),
            "params_active_b": st.column_config.NumberColumn(t("catalog.params_active"), format="%.2f"),
            "params_total_published_b": st.column_config.NumberColumn(t("catalog.params_published"), format="%.2f"),
            "layer_kinds": st.column_config.TextColumn(t("catalog.layer_kinds")),
            "kv_bytes_per_token_16bit": st.column_config.NumberColumn(t("catalog.kv_per_token"), format="%d"),
            "state_bytes_per_request_16bit": st.column_config.NumberColumn(t("catalog.state_per_request"), format="%d"),
            "vision_params_b": st.column_config.NumberColumn(t("catalog.vision_params"), format="%.3f"),
        },
    )
    st.caption(t("catalog.models_caption", count=len(rows)))
with gpus_tab:
    rows = [gpu_to_dict(g) | catalog_columns(g) for g in (*catalog.gpus, *custom_gpus.values())]  # + TDP, idle
    for row in rows:
        tflops = row.pop("tensor_tflops_dense")
        for key in TFLOPS:
            row[f"{key}_tflops"] = tflops.get(key)
        row["memory_basis"] = t(f"catalog.basis.{row['memory_basis']}")
        row["interconnect"] = t(f"catalog.link.{row['interconnect']}")
    gpus = pd.DataFrame(rows)
    st.dataframe(
        gpus,
        width="stretch",
        height=TABLE_HEIGHT,
        hide_index=True,
        placeholder=MISSING,
        column_order=first(gpus, GPU_FIRST),
        column_config=headers(GPU_COLUMNS)
        | {f"{key}_tflops": st.column_config.NumberColumn(f"{key.upper()} [{unit}]") for key, unit in TFLOPS.items()}
        | {"source_url": st.column_config.LinkColumn(t("catalog.source"), display_text=SOURCE_HOST)},
    )
    st.caption(t("catalog.gpus_caption", count=len(rows)))
with add_tab:
    left, right = st.columns(2)
    with left:
        st.subheader(t("custom.import_title"))
        import_model_form("catalog")
    with right:
        st.subheader(t("custom.gpu_title"))
        custom_gpu_form("catalog")
