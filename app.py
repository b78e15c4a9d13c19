"""Streamlit entry point: page config, the shared sidebar (the scenario), and navigation.

Run with ``streamlit run app.py``. Pages read the scenario from ``st.session_state`` and call core.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from core.catalog import load_catalog
from core.deployment import Deployment, Workload
from core.engine import EngineConfig, Parallelism
from core.precision import KV_PRECISIONS, WEIGHT_PRECISIONS, kv_precision, weight_precision

HERE = Path(__file__).resolve().parent
DEFAULT_MODEL, DEFAULT_GPU = "llama-3.1-8b", "a10"
GPU_COUNTS = (1, 2, 4, 8)
LENGTHS = (128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072)

st.set_page_config(page_title="LLM Inference Tradeoff Explorer", page_icon=":material/speed:", layout="wide")
catalog = load_catalog()
models = {m.id: m for m in catalog.models}
gpus = {g.id: g for g in catalog.gpus}

with st.sidebar:
    st.header("Scenario")
    model_id = st.selectbox(
        "Model",
        list(models),
        index=list(models).index(DEFAULT_MODEL),
        key="model",
        format_func=lambda i: models[i].name,
    )
    gpu_id = st.selectbox(
        "GPU", list(gpus), index=list(gpus).index(DEFAULT_GPU), key="gpu", format_func=lambda i: gpus[i].name
    )
    tp = st.selectbox("GPUs (tensor parallel)", GPU_COUNTS, key="tp")
    native = models[model_id].native_dtype
    weight_name = st.selectbox(
        "Weight precision",
        list(WEIGHT_PRECISIONS),
        index=list(WEIGHT_PRECISIONS).index(native),
        key="weights",
        format_func=lambda n: WEIGHT_PRECISIONS[n].label,
    )
    kv_name = st.selectbox(
        "KV-cache precision",
        ["auto", *KV_PRECISIONS],
        key="kv",
        format_func=lambda n: "auto (model dtype)" if n == "auto" else KV_PRECISIONS[n].label,
    )
    input_len = st.select_slider("Prompt length [tokens]", LENGTHS, value=2048, key="input_len")
    output_len = st.select_slider("Answer length [tokens]", LENGTHS, value=512, key="output_len")
    batch = st.slider("Concurrent requests (batch)", 1, 1024, 16, key="batch")
    max_context = models[model_id].max_context
    context_choices = sorted({n for n in LENGTHS if n < max_context} | {max_context})
    max_model_len = st.select_slider(
        "max_model_len [tokens]",
        context_choices,
        value=max_context,
        key="max_model_len",
        help="The longest request the engine accepts; vLLM reserves for it in its concurrency figure",
    )
    utilization = st.slider("gpu_memory_utilization", 0.5, 1.0, 0.9, 0.01, key="gpu_memory_utilization")

st.session_state.pop("scenario_error", None)
try:
    weights = weight_precision(weight_name)
    st.session_state["deployment"] = Deployment(
        model=models[model_id],
        gpu=gpus[gpu_id],
        weights=weights,
        kv=kv_precision(kv_name, weights),
        parallel=Parallelism(tp=tp),
        engine=EngineConfig(gpu_memory_utilization=utilization, max_model_len=max_model_len),
    )
    st.session_state["workload"] = Workload(input_len=input_len, output_len=output_len, batch=batch)
except ValueError as err:
    st.session_state["scenario_error"] = str(err)

# Page files end in "_page.py" and get explicit URL paths without that suffix. Streamlit still has a
# legacy mode for a folder named pages/: until st.navigation has run once in the process, a request
# whose page hash matches a file there would run that file alone, without this sidebar (seen in
# AppTest reruns and on a fresh server opened at a page URL). Distinct URL paths never match.
PAGES = [
    st.Page(
        HERE / "pages" / "explorer_page.py",
        title="Explorer",
        icon=":material/speed:",
        url_path="explorer",
        default=True,
    )
]
st.navigation(PAGES).run()
