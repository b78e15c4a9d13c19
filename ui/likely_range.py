"""The Explorer's likely range: each headline number (TTFT the burst's median, TPOT, throughput)
divided and multiplied by the factor its kernel tier's held-out predictions missed by on its GPU class
(:func:`core.estimate.likely.likely_bands`, the band the exported files carry), the tier named, with
why a factor one click away."""

from __future__ import annotations

import streamlit as st

from core.estimate.likely import MIN_ROWS, gpu_class_of, likely_bands
from core.estimate.result import Estimate
from core.spec import units
from core.timing.kernel_speed import kernel_speed
from ui import fmt
from ui.i18n import t


def tier_name(tier: str) -> str:
    return t(f"likely.tier_{tier.replace(' ', '_')}")


def render_likely_range(result: Estimate) -> None:
    """One caption with the TTFT, TPOT and throughput ranges and a popover saying how they are set;
    nothing when the validation set has too few rows for one of them or a number is zero."""
    bands = likely_bands(result)
    if bands is None:
        return
    shown = {  # metric: (its display format from the report's unit, its name)
        "ttft_ms": (lambda ms: fmt.duration(ms * units.MS), t("metric.ttft_burst")),
        "tpot_ms": (lambda ms: fmt.duration(ms * units.MS), "TPOT"),
        "output_tokens_per_s": (fmt.rate, t("metric.throughput")),
    }
    spans = {metric: f"{show(bands[metric].low)} – {show(bands[metric].high)}" for metric, (show, _) in shown.items()}
    st.caption(
        t(
            "likely.bands_tier",
            tier=tier_name(kernel_speed(result.deployment).tier),
            gpu_class=t(f"likely.class_{gpu_class_of(result)}"),
            ttft=spans["ttft_ms"],
            tpot=spans["tpot_ms"],
            rate=spans["output_tokens_per_s"],
        )
    )
    with st.popover(
        t("likely.how_button"), icon=":material/function:", key="explain_likely_range", on_change="rerun"
    ) as box:
        if box.open:
            st.markdown(t("likely.how_tier", min_rows=MIN_ROWS))
            st.markdown(
                "\n".join(
                    "- "
                    + t(
                        "likely.factor_row_tier",
                        metric=name,
                        factor=f"{bands[metric].factor:.2f}",
                        rows=bands[metric].rows,
                        tier=tier_name(bands[metric].tier),
                        gpu_class=t(f"likely.class_{bands[metric].gpu_class}"),
                    )
                    for metric, (_, name) in shown.items()
                )
            )
