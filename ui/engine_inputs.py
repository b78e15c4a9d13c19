"""The sidebar's engine settings: engine and release, its flags, and the efficiency assumptions.

Defaults follow the engine release and the GPU (core.spec.engine_defaults, CLASS_EFFICIENCY); the
inputs that follow them are reset when the engine, the release or the GPU changes.
"""

from __future__ import annotations

import streamlit as st

from core.spec import units
from core.spec.engine import Efficiency, EngineConfig, default_efficiency
from core.spec.engine_defaults import default_memory_fraction
from core.spec.gpu import GpuSpec
from core.spec.model import ModelSpec
from core.spec.release import CURRENT, ENGINES, Release, parse_release
from ui import url_inputs
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
)
EFFICIENCY_KEYS = tuple(row[1] for row in EFFICIENCY_SLIDERS)
"""Inputs whose default follows the GPU class and the engine release: reset when either changes."""
FRACTION_FLAGS = {
    "vllm": "gpu_memory_utilization",
    "sglang": "mem_fraction_static",
    "trtllm": "kv_cache_free_gpu_memory_fraction",
}


def _slider(label: str, key: str, low: float, high: float, default: float, step: float, help: str) -> float:
    """A URL-bound slider given its default on every run: Streamlit leaves a bound value equal to
    the widget's default out of the URL, so a default it did not know (the minimum) would make a
    slider moved to its minimum reopen at the class default. The default is the same until the
    GPU, the engine or the release changes, and each of those resets the input to it."""
    return st.slider(label, low, high, float(default), step=step, key=key, bind="query-params", help=help)


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
        "max_model_len": f"{AUTO}, {LENGTHS[0]:,}-{LENGTHS[-1]:,} " + t("link.on_steps"),
    } | {key: f"{low:g}-{high:g}" for _, key, _, low, high, _, _ in EFFICIENCY_SLIDERS}


def reset_engine_fraction() -> None:
    """On a change SGLang's default memory fraction follows (tensor parallel size, the model's MLA):
    the default replaces the old one."""
    if st.session_state.get("engine") == "sglang":
        st.session_state.pop("util", None)


def reset_for_gpu() -> None:
    """On a GPU change: its memory class's default efficiencies replace the previous GPU's (and
    SGLang's default memory fraction, which follows the GPU's size)."""
    for key in EFFICIENCY_KEYS:
        st.session_state.pop(key, None)
    reset_engine_fraction()


def _reset_for_engine() -> None:
    """On an engine or release change: its defaults (memory fraction, host costs) replace the old ones."""
    for key in (*EFFICIENCY_KEYS, "util"):
        st.session_state.pop(key, None)


def _release_inputs() -> Release | str:
    """The engine and its release (blank: the newest the rules were read against)."""
    engine = st.selectbox(
        t("engine.engine"),
        list(ENGINES),
        format_func=ENGINES.get,
        key="engine",
        bind="query-params",
        on_change=_reset_for_engine,
        help=t("engine.engine_help"),
    )
    version = st.text_input(
        t("engine.version"),
        key="engine_version",
        bind="query-params",
        placeholder=CURRENT[engine],
        on_change=_reset_for_engine,
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
    fraction = default_memory_fraction(release, gpu.memory_bytes, tp, 1, model.mla is not None)
    # the engine's default is passed every run (not only while the session has no value): it is
    # the same until the engine, the release or the GPU changes, when the input is reset to it
    utilization = st.slider(
        t("engine.util", flag=FRACTION_FLAGS[release.engine]),
        0.50,
        1.00,
        float(fraction),
        0.001,
        key="util",
        bind="query-params",
        help=t(f"engine.util_help_{release.engine}", default=f"{fraction:.3g}"),
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
    defaults = default_efficiency(gpu.memory_type, release)
    chosen = {
        field: unit
        * _slider(
            t(f"engine.{label}"), key, low, high, getattr(defaults, field) / unit, step, t(f"engine.{label}_help")
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
            efficiency=Efficiency(**chosen),
        )
    except ValueError as err:
        return str(err)
