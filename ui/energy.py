"""Energy and power on the pages: the electricity price and PUE inputs (kept in the link), the
Explorer's energy panel with its How buttons, the Plan's energy line in its cost section, the
Compare table's column and the Catalog's power columns. The numbers are :mod:`core.energy.power`'s."""

from __future__ import annotations

import streamlit as st

from core.energy.power import DEFAULT_PUE, DEFAULT_USD_PER_KWH, EnergyInputs, energy_of
from core.estimate.explain_energy import explain_energy
from core.estimate.result import Estimate
from core.spec.gpu import GpuSpec
from ui.explain import explain_popover
from ui.i18n import t
from ui.url_inputs import number

PRICE_KEY, PUE_KEY = "kwh_usd", "pue"
"""The URL parameters of the electricity price [USD/kWh] and the PUE."""
MAX_PRICE, MAX_PUE = 2.0, 3.0


def energy_inputs(where=None) -> EnergyInputs:
    """The electricity price and PUE inputs, bound to the link (``kwh_usd``, ``pue``)."""
    where = where if where is not None else st
    left, right = where.columns(2)
    with left:
        price = number(
            PRICE_KEY,
            t("energy_ui.price"),
            DEFAULT_USD_PER_KWH,
            0.0,
            MAX_PRICE,
            help=t("energy_ui.price_help", default=DEFAULT_USD_PER_KWH),
        )
    with right:
        pue = number(PUE_KEY, t("energy_ui.pue"), DEFAULT_PUE, 1.0, MAX_PUE, help=t("energy_ui.pue_help"))
    return EnergyInputs(usd_per_kwh=float(price), pue=float(pue))


def _money(value: float | None) -> str:
    return "—" if value is None else f"${value:,.4g}"


def render_energy(result: Estimate) -> EnergyInputs:
    """The Explorer's energy panel: inputs, six numbers, each with its How button, and where the
    GPU's idle and TDP come from; returns the inputs (the Explorer's files carry them)."""
    with st.expander(t("energy_ui.heading"), icon=":material/bolt:", expanded=False):
        inputs = energy_inputs()
        en = energy_of(result, inputs)
        gpu = result.deployment.gpu
        if en is None:
            st.info(t("energy_ui.unavailable", gpu=gpu.name))
            return inputs
        explained = lambda: explain_energy(result, inputs)  # noqa: E731 (called only when a How opens)
        shown = (
            ("energy_power", t("energy.power_per_gpu"), f"{en.power_w:,.0f} W"),
            ("energy_per_token", t("energy.j_per_token"), f"{en.j_per_token:.3g} J"),
            ("energy_tokens_per_joule", t("energy.tokens_per_j"), f"{en.tokens_per_j:.3g}"),
            ("energy_kwh_per_million", t("energy.kwh_per_m"), f"{en.kwh_per_m_tokens:.3g} kWh"),
            ("energy_usd_per_million", t("energy.usd_per_m"), _money(en.usd_per_m_tokens)),
            ("energy_usd_per_hour", t("energy.usd_per_hour"), _money(en.usd_per_hour)),
        )
        cells = [col for _ in range(0, len(shown), 3) for col in st.columns(3)]
        for col, (key, label, text) in zip(cells, shown, strict=True):
            col.metric(label, text)
            if key != "energy_usd_per_hour" or en.usd_per_hour is not None:
                explain_popover(explained, key, text, col)
        st.caption(power_source(gpu))
        st.caption(t("energy.scope_line"))
    return inputs


def power_source(gpu: GpuSpec) -> str:
    """Where the GPU's TDP and idle come from, in one line."""
    ratio = f"{gpu.idle_w / gpu.tdp_w:.3f}"
    if not gpu.idle_rule:
        idle = t("energy_ui.idle_measured")
    elif "catalog-wide" in gpu.idle_rule:  # no GPU of its architecture was measured
        idle = t("energy_ui.idle_catalog", ratio=ratio)
    else:
        idle = t("energy_ui.idle_derived", ratio=ratio)
    return t("energy_ui.source", gpu=gpu.name, tdp=f"{gpu.tdp_w:,.0f}", idle=f"{gpu.idle_w:,.0f}", how=idle)


def plan_energy_line(result: Estimate) -> EnergyInputs:
    """The Plan's cost section: power, energy per token and the electricity bill at the planned batch,
    the price and PUE inputs under it; returns them (the Plan's reports carry them)."""
    line = st.container()
    with st.expander(t("energy_ui.inputs"), icon=":material/bolt:"):
        inputs = energy_inputs()
    en = energy_of(result, inputs)
    if en is None:
        line.caption(t("energy_ui.unavailable", gpu=result.deployment.gpu.name))
        return inputs
    line.markdown(
        t(
            "energy_ui.plan_line",
            watts=f"{en.power_w:,.0f}",
            joules=f"{en.j_per_token:.3g}",
            per_joule=f"{en.tokens_per_j:.3g}",
            kwh=f"{en.kwh_per_m_tokens:.3g}",
            usd=_money(en.usd_per_m_tokens),
            hourly=_money(en.usd_per_hour),
        )
    )
    line.caption(power_source(result.deployment.gpu))
    return inputs


def compare_rows(results: list[Estimate]) -> dict[str, list[str]]:
    """The Compare table's energy rows (label -> one cell per scenario), the price and PUE inputs in an
    expander above the table (kept in the link)."""
    with st.expander(t("energy_ui.inputs"), icon=":material/bolt:"):
        inputs = energy_inputs()
    found = [energy_of(r, inputs) for r in results]
    return {
        t("energy_ui.col_watts"): ["—" if en is None else f"{en.power_w:,.0f}" for en in found],
        t("energy_ui.col_joules"): ["—" if en is None else f"{en.j_per_token:.3g}" for en in found],
        t("energy.usd_per_m"): ["—" if en is None else _money(en.usd_per_m_tokens) for en in found],
    }


def catalog_columns(gpu: GpuSpec) -> dict[str, float | str | None]:
    """The Catalog GPU table's power cells (label -> value; None where no figure was found)."""
    basis = "energy_ui.basis_derived" if gpu.idle_rule else "energy_ui.basis_measured"
    return {
        t("energy_ui.col_tdp"): gpu.tdp_w,
        t("energy_ui.col_idle"): gpu.idle_w,
        t("energy_ui.col_idle_basis"): None if gpu.idle_w is None else t(basis),
    }
