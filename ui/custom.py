"""Session-only additions: a model from an uploaded or pasted config.json, and a custom GPU.

The buttons act in callbacks, which run before the next script run, so the sidebar lists (and
selects) the new entry at once. Bad input gets a message naming what is wrong; the rest of the
session keeps its state.
"""

from __future__ import annotations

import datetime as dt

import streamlit as st

from core.spec import units
from core.spec.display_name import safe_id
from core.spec.gpu import GpuSpec
from core.spec.hf_config import MAX_CONFIG_BYTES, ConfigError, model_from_config, read_config, unread_dtype
from ui.i18n import t
from ui.safe import NAME_MAX, clean_name, escape_markdown, name_changed


def _show_result(key: str, inputs: object = None) -> None:
    """The last add's outcome while the inputs are those it was made from. It is kept in the
    session rather than shown once, so a rerun that something else starts (even one that
    interrupts this run) cannot make the message vanish; editing the inputs retires it. An add
    with something to say about the input (:func:`import_notices`) is a warning."""
    result = st.session_state.get(key)
    if result and result[2] == inputs:
        kind, text, _ = result
        {"success": st.success, "warning": st.warning}.get(kind, st.error)(text)


def _model_inputs(prefix: str) -> tuple:
    """What an import is made from: the uploaded file, the pasted text and the name."""
    upload = st.session_state.get(f"{prefix}_upload")
    return (
        getattr(upload, "file_id", None),
        st.session_state.get(f"{prefix}_paste", ""),
        st.session_state.get(f"{prefix}_model_name", ""),
    )


def import_model_form(prefix: str) -> None:
    """Upload or paste a config.json; on success the model joins and is selected in the model list."""
    st.file_uploader(t("custom.upload"), type=["json"], key=f"{prefix}_upload")
    st.text_area(
        t("custom.paste"), key=f"{prefix}_paste", height=120, max_chars=MAX_CONFIG_BYTES, persist_state="session"
    )
    st.text_input(t("custom.model_name"), key=f"{prefix}_model_name", max_chars=NAME_MAX, persist_state="session")
    st.button(t("custom.add_model"), key=f"{prefix}_add_model", on_click=_import_model, args=(prefix,))
    _show_result(f"{prefix}_model_result", _model_inputs(prefix))


def _import_model(prefix: str) -> None:
    upload = st.session_state.get(f"{prefix}_upload")
    typed = st.session_state.get(f"{prefix}_model_name", "").strip()
    # bytes either way: read_config takes a str that is not JSON for a file path, and a paste box
    # must never make the server open one of its own files
    source = upload.getvalue() if upload is not None else st.session_state.get(f"{prefix}_paste", "").encode()
    result_key = f"{prefix}_model_result"
    if not source:
        st.session_state[result_key] = ("error", t("custom.nothing_to_import"), _model_inputs(prefix))
        return
    try:  # every way a config.json can be wrong is a ConfigError (core.spec.hf_config.read_config)
        config = read_config(source)
        model = imported_model(config, typed)
    except ConfigError as err:
        message = t("custom.config_error", error=escape_markdown(str(err)))
        st.session_state[result_key] = ("error", message, _model_inputs(prefix))
        return
    add_imported_model(model, config, typed)
    st.session_state["model"] = model.id
    notices = import_notices(config, typed)
    added = " ".join([t("custom.model_added", name=escape_markdown(model.name)), *notices])
    st.session_state[result_key] = ("warning" if notices else "success", added, _model_inputs(prefix))


def imported_model(config: dict, name: str):
    """The model a config.json describes, as an import names it (``name``, cleaned as every name
    from outside is: :func:`core.spec.display_name.clean_name`; or the config's ``_name_or_path``);
    raises ConfigError. One rule for the import form and a link that carries it."""
    name = clean_name(name, "")
    model_id = "custom-" + safe_id(name or str(config.get("_name_or_path") or "model"), "model")
    return model_from_config(config, id=model_id, name=name or model_id, notes=t("custom.model_note"))


def import_notices(config: dict, name: str) -> list[str]:
    """What an import took differently from what it was given, one sentence each (Markdown-safe):
    a name that had to be cleaned or cut, a torch_dtype that was not understood."""
    notices = []
    cleaned = clean_name(name, "")
    if name.strip() and name_changed(name, cleaned):
        notices.append(t("hostile_config.name_cleaned", name=escape_markdown(cleaned or "-"), limit=NAME_MAX))
    if (dtype := unread_dtype(config)) is not None:
        notices.append(t("hostile_config.dtype_assumed", value=escape_markdown(dtype)) + ".")
    return notices


IMPORTED = "imported_configs"
"""Session key: model id -> (config.json, name) of each model imported from a config, so a link can carry it."""


def add_imported_model(model, config: dict, name: str) -> None:
    """The imported model joins the session's model list, its config kept for links (with the
    name as cleaned, so a link never carries more than the page showed)."""
    st.session_state.setdefault("custom_models", {})[model.id] = model
    st.session_state.setdefault(IMPORTED, {})[model.id] = (config, clean_name(name, ""))


def imported_config(model_id: str) -> tuple[dict, str] | None:
    """(config.json, name) of a model imported in this session, or None (catalog, hub or none)."""
    return st.session_state.get(IMPORTED, {}).get(model_id)


GPU_FIELDS = {  # key suffix: (label key, default)
    "memory": ("custom.gpu_memory", 24.0),
    "bandwidth": ("custom.gpu_bandwidth", 600.0),
    "bf16": ("custom.gpu_bf16", 125.0),
    "fp8": ("custom.gpu_fp8", 0.0),
    "int8": ("custom.gpu_int8", 0.0),
    "link": ("custom.gpu_link", 64.0),
    "host": ("custom.gpu_host", 64.0),
}


def custom_gpu_form(prefix: str) -> None:
    """A GPU from its datasheet figures; on success it joins and is selected in the GPU list."""
    with st.form(f"{prefix}_gpu_form"):
        st.text_input(
            t("custom.gpu_name"), value="My GPU", max_chars=60, key=f"{prefix}_gpu_name", persist_state="session"
        )
        for suffix, (label, default) in GPU_FIELDS.items():
            st.number_input(
                t(label),
                min_value=0.0,
                max_value=1e6,
                value=default,
                key=f"{prefix}_gpu_{suffix}",
                persist_state="session",
            )
        st.form_submit_button(t("custom.add_gpu"), on_click=_add_gpu, args=(prefix,))
    _show_result(f"{prefix}_gpu_result")


def _add_gpu(prefix: str) -> None:
    value = {suffix: float(st.session_state[f"{prefix}_gpu_{suffix}"]) for suffix in GPU_FIELDS}
    name = clean_name(st.session_state.get(f"{prefix}_gpu_name", ""), "custom GPU")
    tensor = {"fp16": value["bf16"], "bf16": value["bf16"], "fp8": value["fp8"], "int8": value["int8"]}
    result_key = f"{prefix}_gpu_result"
    try:
        if not value["bf16"] > 0:
            raise ValueError(t("custom.gpu_needs_bf16"))
        gpu = GpuSpec(
            id="custom-" + safe_id(name, "gpu"),
            name=name,
            vendor="custom",
            memory_bytes=value["memory"] * units.GiB,
            memory_bytes_datasheet=value["memory"] * units.GiB,
            memory_basis="custom",
            memory_bandwidth=value["bandwidth"] * units.GB,
            tensor_flops=tuple(sorted((k, v * units.TERA) for k, v in tensor.items() if v > 0)),
            interconnect="pcie" if value["link"] > 0 else "none",
            link_bandwidth_bidirectional=value["link"] * units.GB,
            host_link_generation="PCIe (custom)" if value["host"] > 0 else "",
            host_link_bandwidth_bidirectional=value["host"] * units.GB,
            source_read=dt.date.today(),
            notes=t("custom.gpu_note"),
        )
    except ValueError as err:
        st.session_state[result_key] = ("error", t("custom.gpu_error", error=escape_markdown(str(err))), None)
        return
    st.session_state.setdefault("custom_gpus", {})[gpu.id] = gpu
    st.session_state["gpu"] = gpu.id  # its class's defaults follow (ui.defaults)
    st.session_state[result_key] = ("success", t("custom.gpu_added", name=gpu.name), None)
