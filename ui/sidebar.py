"""The shared sidebar: the scenario (model, GPU, formats, lengths, batch, engine) and the language.

Widgets that define a scenario are bound to URL query parameters, so a copied link reopens the same
view. The built scenario (or the reason it is impossible) is left in ``st.session_state``.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from core.levers.prefix import prefix_error
from core.spec import units
from core.spec.catalog import Catalog
from core.spec.deployment import Deployment, Workload
from core.spec.engine import Parallelism, tensor_split_error
from core.spec.engine_defaults import sized_max_model_len
from core.spec.gpu import GpuSpec
from core.spec.model import ModelSpec
from core.spec.precision import KV_PRECISIONS, WEIGHT_PRECISIONS, weight_precision
from core.spec.support import kv_for
from core.validation.calibrate import Calibration
from ui import url_inputs
from ui.custom import custom_gpu_form, import_model_form
from ui.engine_inputs import AUTO, LENGTHS, engine_domains, engine_inputs, show_engine_overrides
from ui.i18n import LANGUAGE_NAMES, t
from ui.levers import LeverInputs, active_lever_params, lever_inputs
from ui.link_state import link_imported_model, open_link
from ui.model_search import clear_search, model_search_box, searched_model, stop_unmatched_search, typed_link_names
from ui.money import rate_input
from ui.safe import escape_markdown

DEFAULTS = {"model": "llama-3.1-8b", "gpu": "a10", "input_len": 2048, "output_len": 512, "batch": 8}
"""The scenario a fresh session opens with: one that fits (an A10 holds 11 such requests at once)."""
GPU_COUNTS = (1, 2, 4, 8)
BATCH_RANGE = (1, 1024)
BATCH_STEPS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024)
"""The batch slider's steps, about 1.5x apart: 1-8 one step each instead of a few pixels of a linear
slider; any other count is typed in the number input beneath it."""
LENGTH_RANGE = (1, LENGTHS[-1])


@dataclass(frozen=True)
class Scenario:
    deployment: Deployment
    workload: Workload


def models_and_gpus(catalog: Catalog) -> tuple[dict[str, ModelSpec], dict[str, GpuSpec]]:
    """Catalog entries plus what the user added in this session."""
    models = {m.id: m for m in catalog.models} | st.session_state.get("custom_models", {})
    gpus = {g.id: g for g in catalog.gpus} | st.session_state.get("custom_gpus", {})
    return models, gpus


def render_sidebar(catalog: Catalog) -> None:
    models, gpus = models_and_gpus(catalog)
    typed_link_names(models, gpus)
    open_link(models, gpus)
    models, gpus = models_and_gpus(catalog)  # with a model the link carried
    with st.sidebar:
        # Bound widgets write their *displayed* option to the URL, so every bound widget shows
        # language-independent labels (ids, names, dtype names) and links survive a language switch.
        # the language's own names on the buttons, its code in the URL (lang=zh): kept there by hand,
        # as a bound widget would write the name it shows
        url_inputs.choice("lang", "lang", "Language / 语言", list(LANGUAGE_NAMES), LANGUAGE_NAMES.get)
        st.header(t("sidebar.scenario"))
        model_search_box(models)
        model_id = st.selectbox(
            t("sidebar.model"),
            list(models),
            index=list(models).index(DEFAULTS["model"]),
            key="model",
            format_func=lambda i: models[i].name,
            bind="query-params",
            on_change=_model_changed,
            args=(models,),
            help=t("sidebar.model_help"),
        )
        model = searched_model(models, model_id)
        link_imported_model(model_id)
        # the two forms are built only while open (Streamlit's lazy expanders): a closed form costs
        # nothing per rerun, its typed values kept by persist_state (docs/benchmarks.md)
        with st.expander(t("custom.import_title"), key="sidebar_import_open", on_change="rerun") as box:
            if box.open:
                import_model_form("sidebar")
        gpu_id = st.selectbox(
            t("sidebar.gpu"),
            list(gpus),
            index=list(gpus).index(DEFAULTS["gpu"]),
            key="gpu",
            format_func=lambda i: gpus[i].name,
            bind="query-params",
        )
        with st.expander(t("custom.gpu_title"), key="sidebar_gpu_open", on_change="rerun") as box:
            if box.open:
                custom_gpu_form("sidebar")
        tp = st.selectbox(
            t("sidebar.tp"),
            GPU_COUNTS,
            key="tp",
            bind="query-params",
            help=t("sidebar.tp_help"),
        )
        if tensor_split_error(model, tp) is not None:
            st.warning(t("sidebar.tp_invalid", tp=tp, heads=model.num_heads, kv_heads=model.num_kv_heads))
        dp = 1
        if model.moe is not None:  # data-parallel attention, the routed experts over tp x dp GPUs
            dp = st.selectbox(t("sidebar.dp"), GPU_COUNTS, key="dp", bind="query-params", help=t("sidebar.dp_help"))
        weight_name = st.selectbox(
            t("sidebar.weights"),
            [AUTO, *WEIGHT_PRECISIONS],
            key="weights",
            bind="query-params",
            help=t(
                "sidebar.weights_help",
                native=WEIGHT_PRECISIONS[model.native_dtype].label,
                formats="; ".join(f"{k}: {p.label}" for k, p in WEIGHT_PRECISIONS.items()),
            ),
        )
        kv_name = st.selectbox(
            t("sidebar.kv"), [AUTO, *KV_PRECISIONS], key="kv", bind="query-params", help=t("sidebar.kv_help")
        )
        # slider steps for quick moves, any integer typed beneath (ui.url_inputs.stepped_int)
        length_help = t("sidebar.length_help")
        input_len = url_inputs.stepped_int(
            "input_len", t("sidebar.input_len"), LENGTHS, DEFAULTS["input_len"], *LENGTH_RANGE, length_help
        )
        output_len = url_inputs.stepped_int(
            "output_len", t("sidebar.output_len"), LENGTHS, DEFAULTS["output_len"], *LENGTH_RANGE, length_help
        )
        batch = url_inputs.stepped_int(
            "batch", t("sidebar.batch"), BATCH_STEPS, DEFAULTS["batch"], *BATCH_RANGE, t("sidebar.batch_help")
        )
        with st.expander(t("sidebar.engine")):
            engine = engine_inputs(model, gpus[gpu_id], tp)
        show_engine_overrides()
        lever_weights = weight_precision(model.native_dtype if weight_name == AUTO else weight_name)
        with st.expander(t("levers.title"), expanded=bool(active_lever_params())):
            levers = lever_inputs(model, models, lever_weights, tp)
        rate_input()  # USD -> CNY for the prices shown in Chinese (ui.money), in the link when set
    _store_scenario(
        model, gpus[gpu_id], (tp, dp), weight_name, kv_name, input_len, output_len, batch, engine, levers, models
    )
    stop_unmatched_search()


def _store_scenario(
    model, gpu, layout, weight_name, kv_name, input_len, output_len, batch, engine, levers: LeverInputs, models
) -> None:
    st.session_state.pop("scenario", None)
    st.session_state.pop("scenario_error", None)
    try:
        if isinstance(engine, str):
            raise ValueError(engine)
        weights = weight_precision(model.native_dtype if weight_name == AUTO else weight_name)
        parallel = Parallelism(tp=layout[0], dp=layout[1])  # (tp, dp)
        if (problem := parallel.data_parallel_error(model)) is not None:
            raise ValueError(problem)
        deployment = Deployment(
            model=model,
            gpu=gpu,
            weights=weights,
            kv=kv_for(kv_name, weights, gpu),
            parallel=parallel,
            engine=engine,
            levers=levers.build(models),
        )
        if fix := st.session_state.get("overhead_fix", 0.0):  # a calibration from the Validation page
            deployment = Calibration(overhead_correction_bytes=fix * units.GiB).apply(deployment)
        workload = Workload(input_len=input_len, output_len=output_len, batch=batch)
        if problem := prefix_error(deployment.levers.prefix, input_len):
            raise ValueError(problem)
        if engine.max_model_len is None:  # auto: sized to this scenario's request, as estimate does
            sized = sized_max_model_len(workload.request_len, model.max_context)
            deployment = deployment.with_engine(max_model_len=sized)
        if workload.request_len > deployment.max_model_len:
            raise ValueError(
                t("error.request_too_long", tokens=workload.request_len, max_model_len=deployment.max_model_len)
            )
        st.session_state["scenario"] = Scenario(deployment=deployment, workload=workload)
    except ValueError as err:
        st.session_state["scenario_error"] = str(err)


def link_checks(catalog: Catalog) -> tuple[dict, dict[str, str]]:
    """For :func:`ui.link_state.judge_link`: the names the model and GPU lists show for an id, and
    what each sidebar input takes, in words."""
    models, gpus = models_and_gpus(catalog)
    labels = {
        "model": lambda i: models[i].name if i in models else i,
        "gpu": lambda i: gpus[i].name if i in gpus else i,
    }
    counts = ", ".join(map(str, GPU_COUNTS))
    lengths = "{:,}-{:,}".format(*LENGTH_RANGE)
    domains = {
        "model": t("link.model_domain"),
        "gpu": t("link.gpu_domain"),
        "tp": counts,
        "dp": counts,
        "weights": ", ".join((AUTO, *WEIGHT_PRECISIONS)),
        "kv": ", ".join((AUTO, *KV_PRECISIONS)),
        "input_len": lengths,
        "output_len": lengths,
        "batch": "{}-{}".format(*BATCH_RANGE),
        "lang": ", ".join(LANGUAGE_NAMES),
    }
    return labels, domains | engine_domains()


def _model_changed(models) -> None:
    clear_search(models)


def max_model_len_is_auto() -> bool:
    """Whether the sidebar leaves max_model_len to the tool's rule (sized to each page's longest
    request, :func:`core.spec.engine_defaults.sized_max_model_len`) rather than a value the user chose."""
    return st.session_state.get("max_model_len", AUTO) == AUTO


def require_scenario() -> Scenario:
    """The sidebar's scenario, or (when it is impossible) the reason on the page and stop."""
    if error := st.session_state.get("scenario_error"):
        st.error(t("error.impossible", error=escape_markdown(error)))
        st.stop()
    return st.session_state["scenario"]
