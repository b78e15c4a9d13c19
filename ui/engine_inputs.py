"""The sidebar's engine settings: engine and release, its flags, and the efficiency assumptions.

Defaults follow the engine release and the GPU (core.spec.engine_defaults, CLASS_EFFICIENCY) until the
user sets an input (ui.defaults: one rule for every path to a GPU or engine change).
"""

from __future__ import annotations

import dataclasses

import streamlit as st

from core.spec import units
from core.spec.efficiency import ENDPOINTS, class_efficiency, default_efficiency
from core.spec.engine import EngineConfig
from core.spec.engine_defaults import default_memory_fraction
from core.spec.gpu import GpuSpec
from core.spec.model import ModelSpec
from core.spec.release import CURRENT, ENGINES, Release, parse_release
from ui import defaults, url_inputs
from ui.i18n import t

LENGTHS = (
    64,
    128,
    256,
    512,
    1024,
    1536,
    2048,
    3072,
    4096,
    6144,
    8192,
    12288,
    16384,
    24576,
    32768,
    49152,
    65536,
    98304,
    131072,
    163840,
)
BATCH_TOKENS = (512, 1024, 2048, 4096, 8192, 16384, 32768, 65536)
MAX_SEQS = (16, 32, 64, 128, 256, 512, 1024, 2048)
BLOCK_SIZES = (8, 16, 32, 64, 128)
AUTO = "auto"

EFFICIENCY_SLIDERS = (
    # Efficiency field, URL key, label, low, high, step, unit (slider value x unit = the field's SI value)
    ("compute", "eff_compute", "compute_eff", 0.05, 1.0, 0.01, 1.0),
    ("bandwidth", "eff_bw", "bandwidth_eff", 0.05, 1.0, 0.01, 1.0),
    ("expert", "eff_expert", "expert_eff", 0.05, 1.0, 0.01, 1.0),
    ("step_overhead_s", "eff_overhead", "step_overhead", 0.0, 10.0, 0.1, units.MS),
    ("request_overhead_s", "eff_request", "request_overhead", 0.0, 500.0, 1.0, units.MS),
    ("layer_overhead_s", "eff_layer", "layer_overhead", 0.0, 200.0, 1.0, units.US),
    ("per_sequence_overhead_s", "eff_seq", "per_sequence", 0.0, 500.0, 0.5, units.US),
    ("frontend_per_token_s", "eff_frontend", "frontend", 0.0, 500.0, 5.0, units.US),
    ("moe_layer_overhead_s", "eff_moe_layer", "moe_layer", 0.0, 500.0, 5.0, units.US),
    ("chat_ingest_s", "eff_chat", "chat_ingest", 0.0, 50.0, 0.5, units.MS),
)
EFFICIENCY_KEYS = tuple(row[1] for row in EFFICIENCY_SLIDERS)
"""Inputs whose default follows the GPU class and the engine release (:mod:`ui.defaults`)."""
FOLLOWING_KEYS = ("util", *EFFICIENCY_KEYS)
"""Every engine input whose default follows the scenario."""
FRACTION_FLAGS = {
    "vllm": "gpu_memory_utilization",
    "sglang": "mem_fraction_static",
    "trtllm": "kv_cache_free_gpu_memory_fraction",
}


def _slider(label: str, key: str, low: float, high: float, default: float, step: float, help: str) -> float:
    """A URL-bound slider whose default follows the GPU, the engine and the release until the user
    sets it (:func:`ui.defaults.bound_input`)."""
    return defaults.bound_input(
        st.slider, key, float(default), label=label, min_value=low, max_value=high, step=step, help=help
    )


def engine_domains() -> dict[str, str]:
    """What each engine input takes, in words, for a notice about a link value it could not take."""

    def listed(*values) -> str:
        return ", ".join(map(str, values))

    return {
        "engine": listed(*ENGINES),
        "util": "0.5-1.0",
        "mnbt": listed(AUTO, *BATCH_TOKENS),
        "max_seqs": listed(AUTO, *MAX_SEQS),
        "block": listed(AUTO, *BLOCK_SIZES),
        "endpoint": listed(*ENDPOINTS),
        "max_model_len": f"{AUTO}, {LENGTHS[0]:,}-{LENGTHS[-1]:,} " + t("link.on_steps"),
    } | {key: f"{low:g}-{high:g}" for _, key, _, low, high, _, _ in EFFICIENCY_SLIDERS}


def _release_inputs() -> Release | str:
    """The engine and its release (blank: the newest the rules were read against)."""
    engine = st.selectbox(
        t("engine.engine"),
        list(ENGINES),
        format_func=ENGINES.get,
        key="engine",
        bind="query-params",
        on_change=defaults.reset,  # a memory fraction set for one engine means another thing to the next
        args=("util",),
        help=t("engine.engine_help"),
    )
    version = st.text_input(
        t("engine.version"),
        key="engine_version",
        bind="query-params",
        placeholder=CURRENT[engine],
        help=t("engine.version_help", current=CURRENT[engine]),
    )
    try:
        return parse_release(engine, version)
    except ValueError as err:
        return str(err)


def engine_inputs(model: ModelSpec, gpu: GpuSpec, tp: int) -> EngineConfig | str:
    release = _release_inputs()
    if isinstance(release, str):
        return release
    choices = [AUTO, *sorted({n for n in LENGTHS if n < model.max_context} | {model.max_context})]
    fraction = default_memory_fraction(release, gpu.memory_bytes, tp, 1, model.mla is not None, gpu.vendor)
    # the engine's default follows the engine, its release, the GPU's size, tp and MLA (SGLang)
    utilization = _slider(
        t("engine.util", flag=FRACTION_FLAGS[release.engine]),
        "util",
        0.50,
        1.00,
        fraction,
        0.001,
        t(f"engine.util_help_{release.engine}", default=f"{fraction:.3g}"),
    )
    max_model_len = st.select_slider(
        "max_model_len",
        choices,
        value=AUTO,
        key="max_model_len",
        bind="query-params",
        help=t("engine.max_model_len_help"),
    )
    batched = st.selectbox(
        "max_num_batched_tokens", [AUTO, *BATCH_TOKENS], key="mnbt", bind="query-params", help=t("engine.mnbt_help")
    )
    seqs = st.selectbox(
        "max_num_seqs", [AUTO, *MAX_SEQS], key="max_seqs", bind="query-params", help=t("engine.max_seqs_help")
    )
    block = st.selectbox(
        "block_size", [AUTO, *BLOCK_SIZES], key="block", bind="query-params", help=t("engine.block_help")
    )
    endpoint = st.selectbox(
        t("engine.endpoint"),
        list(ENDPOINTS),
        format_func=lambda name: t(f"engine.endpoint_{name}"),
        key="endpoint",
        bind="query-params",
        help=t("engine.endpoint_help"),
    )
    class_defaults = default_efficiency(gpu.memory_type, release)
    chosen = {
        field: unit
        * _slider(
            t(f"engine.{label}"), key, low, high, getattr(class_defaults, field) / unit, step, t(f"engine.{label}_help")
        )
        for field, key, label, low, high, step, unit in EFFICIENCY_SLIDERS
    }
    url_inputs.number("overhead_fix", t("engine.overhead_fix"), 0.0, -64.0, 64.0, help=t("engine.overhead_fix_help"))
    try:
        return EngineConfig(
            release=release,
            gpu_memory_utilization=utilization,
            max_model_len=None if max_model_len == AUTO else max_model_len,
            max_num_batched_tokens=None if batched == AUTO else batched,
            max_num_seqs=None if seqs == AUTO else seqs,
            block_size=None if block == AUTO else block,
            endpoint=endpoint,
            # none set: the GPU class's defaults travel as None, so a deployment moved to another GPU
            # (a fix, the search) takes that GPU's class defaults, as the sidebar would; one set: the
            # class's defaults with the sliders' values (the factors without a slider keep theirs)
            efficiency=dataclasses.replace(class_efficiency(gpu.memory_type), **chosen)
            if any(defaults.is_set(key) for key in EFFICIENCY_KEYS)
            else None,
        )
    except ValueError as err:
        return str(err)


def show_engine_overrides() -> None:
    """Under the closed Engine settings: each input there that the user set and no longer follows
    the GPU, model or engine, with its default and a way back (:func:`ui.defaults.show_set`)."""
    labels = {key: t(f"engine.{label}") for _, key, label, *_ in EFFICIENCY_SLIDERS}
    labels["util"] = t("engine.util", flag=FRACTION_FLAGS.get(st.session_state.get("engine", "vllm"), "util"))
    units_of = {key: unit for _, key, _, _, _, _, unit in EFFICIENCY_SLIDERS}

    def shown(key: str, value) -> str:
        if value is None:
            return "—"
        unit = units_of.get(key, 1.0)
        suffix = {units.MS: " ms", units.US: " µs"}.get(unit, "")
        return f"{float(value):.3g}{suffix}"

    defaults.show_set(FOLLOWING_KEYS, labels.get, shown)
