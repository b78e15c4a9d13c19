"""The Explorer's likely range: each headline number divided and multiplied by the validation set's
P90 factor (:func:`core.validation.uncertainty.band`, the band the exported files carry), with why
a factor, one click away."""

from __future__ import annotations

import streamlit as st

from core.estimate.result import Estimate
from core.validation.uncertainty import band
from ui import fmt
from ui.i18n import t


def render_likely_range(result: Estimate) -> None:
    """One caption with the TTFT, TPOT and throughput ranges and a popover saying how they are set;
    nothing when the validation set has too few rows for one of them or a number is zero."""
    gpu_class = result.deployment.gpu.memory_type
    lat, tput = result.latency, result.throughput
    shown = {  # metric: (value as core gives it, its display format, its name)
        "ttft_ms": (lat.ttft_s, fmt.duration, "TTFT"),
        "tpot_ms": (lat.tpot_s, fmt.duration, "TPOT"),
        "output_tokens_per_s": (tput.output_tokens_per_s, fmt.rate, t("metric.throughput")),
    }
    bands = {metric: band(value, metric, gpu_class) for metric, (value, _, _) in shown.items()}
    if not all(bands.values()):
        return
    spans = {
        metric: f"{show(bands[metric].low)} – {show(bands[metric].high)}" for metric, (_, show, _) in shown.items()
    }
    st.caption(
        t(
            "val.bands",
            gpu_class=gpu_class.upper(),
            ttft=spans["ttft_ms"],
            tpot=spans["tpot_ms"],
            rate=spans["output_tokens_per_s"],
        )
    )
    with st.popover(
        t("likely.how_button"), icon=":material/function:", key="explain_likely_range", on_change="rerun"
    ) as box:
        if box.open:
            st.markdown(t("likely.how", gpu_class=gpu_class.upper()))
            st.markdown(
                "\n".join(
                    "- "
                    + t("likely.factor_row", metric=name, factor=f"{bands[metric].factor:.2f}", rows=bands[metric].rows)
                    for metric, (_, _, name) in shown.items()
                )
            )
