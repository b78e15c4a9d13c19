"""Prices on the pages as users buy them (issue 31, item 5): the USD -> CNY rate input (in the sidebar,
kept in the link as ``cny_rate`` when it is not the reference rate), the price the user typed on Plan
(kept as theirs by :mod:`ui.defaults`), and every price text drawn through :mod:`core.report.money`
(catalog provider and date, or "entered by you"; CNY at the rate in Chinese)."""

from __future__ import annotations

import streamlit as st

from core.report.money import (
    RATE_RANGE,
    Price,
    Rate,
    catalog_price,
    default_rate,
    money,
    price_in_use,
    priced,
    rate_from,
    reference,
    source_text,
)
from core.spec.catalog import load_catalog
from core.spec.gpu import GpuSpec
from ui import defaults
from ui.i18n import lang, t
from ui.link_state import record_domain

RATE_KEY = "cny_rate"
"""Session and URL key of the exchange rate [CNY per USD]."""
PRICE_KEY = "plan_price"
"""Plan's price input (ui.plan_inputs: ``plan_`` + price)."""


def _reference_text() -> str:
    ref = reference()
    return f"{ref.cny_per_usd:g} ({t('prices.rate_name')}, {ref.published.isoformat()})"


def rate_input() -> Rate:
    """The exchange rate input, bound to the link (left out of it at the reference rate); open in
    Chinese, where prices are shown in CNY at it, and folded away in English."""
    low, high = RATE_RANGE
    record_domain(RATE_KEY, t("link_query.range", low=f"{low:g}", high=f"{high:g}"))
    with st.expander(t("prices.rate_title"), expanded=lang() == "zh"):
        value = st.number_input(
            t("prices.rate_label"),
            min_value=low,
            max_value=high,
            value=reference().cny_per_usd,
            step=0.01,
            format="%.4f",
            key=RATE_KEY,
            bind="query-params",
            help=t("prices.rate_help", reference=_reference_text()),
        )
    return rate_from(value)


def current_rate() -> Rate:
    """The rate the session uses (the sidebar's input), else the reference rate."""
    value = st.session_state.get(RATE_KEY)
    try:
        return rate_from(float(value)) if value is not None else default_rate()
    except (TypeError, ValueError):
        return default_rate()


def typed_price() -> float | None:
    """The GPU-hour price the user set on Plan [USD], or None while it follows the catalog."""
    value = st.session_state.get(defaults.SET, {}).get(PRICE_KEY)
    return float(value) if value is not None and float(value) > 0 else None


def plan_price(gpu: GpuSpec) -> Price:
    """The price Plan costs at: the user's when typed, else ``gpu``'s catalog price with its source."""
    return price_in_use(gpu, typed_price())


def price_help(gpu: GpuSpec) -> str:
    """The price input's help: the catalog default with its provider and date (CNY in Chinese)."""
    price = catalog_price(gpu)
    source = (
        priced(price.usd_per_gpu_hour, price, lang(), current_rate())
        if price.usd_per_gpu_hour
        else source_text(price, lang())
    )
    return t("prices.price_help", source=source)


def shown(usd: float | None, hourly: bool = True, digits: int = 2) -> str:
    """An amount as the page shows it: USD in English, CNY with the USD beside it in Chinese."""
    return "—" if usd is None else money(usd, lang(), current_rate(), hourly, digits)


def gpu_price_cell(gpu_id: str, per_hour: float | None, num_gpus: int = 1) -> str:
    """A table cell: the cost per hour with its price's source (the user's price where the row is
    priced at it, else the catalog's provider and date)."""
    if per_hour is None:
        return t("plan.no_catalog_price")
    own = typed_price()
    if own is not None and abs(per_hour / max(num_gpus, 1) - own) < 1e-9:
        source = Price(own, entered=True)
    else:
        gpus = {g.id: g for g in load_catalog().gpus}
        source = catalog_price(gpus[gpu_id]) if gpu_id in gpus else Price(per_hour)
    return priced(per_hour, source, lang(), current_rate())
