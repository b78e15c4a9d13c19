"""Money as users buy it: a GPU-hour price with where it came from (the catalog's provider and the
date it was read, or "entered by you"), and in Chinese the CNY amount at an exchange rate with the
USD beside it. One place formats every price the documents and pages print.

CNY = USD x rate [CNY per USD]; the default rate is the CFETS central parity in
``data/money/usd_cny.toml`` (its source and date with it), which the user may replace.
"""

from __future__ import annotations

import datetime as dt
import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.messages import message
from core.report.blocks import Block, Section
from core.spec.gpu import GpuSpec

RATE_FILE = Path(__file__).resolve().parents[2] / "data" / "money" / "usd_cny.toml"
RATE_RANGE = (0.01, 1000.0)
"""What an entered rate may be [CNY per USD]."""


@dataclass(frozen=True)
class Rate:
    """USD -> CNY: ``cny_per_usd``; ``entered`` when the user typed it, else the reference's."""

    cny_per_usd: float
    entered: bool = False

    def __post_init__(self) -> None:
        low, high = RATE_RANGE
        if not low <= self.cny_per_usd <= high:
            raise ValueError(f"exchange rate must be {low} to {high} CNY per USD, got {self.cny_per_usd!r}")


@dataclass(frozen=True)
class Reference:
    """The published rate the default comes from, with its source."""

    cny_per_usd: float
    published: dt.date
    source_url: str
    source_read: dt.date


@functools.cache
def reference() -> Reference:
    """The default exchange rate and its source (``data/money/usd_cny.toml``)."""
    raw = tomllib.loads(RATE_FILE.read_text(encoding="utf-8"))
    return Reference(float(raw["cny_per_usd"]), raw["published"], raw["source_url"], raw["source_read"])


def default_rate() -> Rate:
    return Rate(reference().cny_per_usd)


def rate_from(value: float | None) -> Rate:
    """The rate in use: the user's (``value``, when given and not the reference's) else the default."""
    if value is None or abs(value - reference().cny_per_usd) < 1e-9:
        return default_rate()
    return Rate(float(value), entered=True)


@dataclass(frozen=True)
class Price:
    """One GPU-hour's price [USD] and where it came from."""

    usd_per_gpu_hour: float | None
    entered: bool = False
    provider: str = ""
    source_url: str = ""
    read: dt.date | None = None


def catalog_price(gpu: GpuSpec) -> Price:
    """The catalog's price of ``gpu`` with its provider and the date it was read (None without one)."""
    return Price(gpu.price_per_hour, False, gpu.price_provider, gpu.price_source_url, gpu.price_read)


def price_in_use(gpu: GpuSpec, entered: float | None = None) -> Price:
    """The user's price when they typed one (``entered`` > 0), else the catalog's."""
    if entered is not None and entered > 0:
        return Price(float(entered), entered=True)
    return catalog_price(gpu)


def money(usd: float, lang: str = "en", rate: Rate | None = None, hourly: bool = True, digits: int = 2) -> str:
    """ "$3.19/h" in English (USD); "¥22.39/小时 ($3.19/h)" in Chinese, CNY at ``rate`` (default: the
    reference) with the USD beside it; ``digits`` after the decimal point."""
    key = "prices.hourly" if hourly else "prices.amount"
    if lang != "zh":
        return message(key, lang, usd=f"{usd:,.{digits}f}")
    cny = usd * (rate or default_rate()).cny_per_usd
    return message(f"{key}_cny", lang, usd=f"{usd:,.{digits}f}", cny=f"{cny:,.{digits}f}")


def source_text(price: Price, lang: str = "en") -> str:
    """ "entered by you", "catalog: RunPod, read 2026-11-09", or that there is no price."""
    if price.usd_per_gpu_hour is None:
        return message("prices.none", lang)
    if price.entered:
        return message("prices.entered", lang)
    read = price.read.isoformat() if price.read else "?"
    return message("prices.catalog", lang, provider=price.provider or "?", date=read)


def price_line(price: Price, lang: str = "en", rate: Rate | None = None) -> str:
    """e.g. "price: $3.19/h (catalog: RunPod, read 2026-11-09)" or "price: $2.50/h (entered by you)"."""
    if price.usd_per_gpu_hour is None:
        return message("prices.line_none", lang, source=source_text(price, lang))
    shown = money(price.usd_per_gpu_hour, lang, rate)
    return message("prices.line", lang, price=shown, source=source_text(price, lang))


def priced(usd: float | None, price: Price, lang: str = "en", rate: Rate | None = None) -> str:
    """An amount with its price's source, e.g. "$3.19/h (RunPod, read 2026-11-09)"; "–" without one."""
    if usd is None:
        return message("prices.none", lang)
    return message("prices.priced", lang, money=money(usd, lang, rate), source=source_text(price, lang))


def rate_line(rate: Rate, lang: str = "en") -> str:
    """e.g. "exchange rate: 1 USD = 7.0197 CNY (CFETS central parity of 2026-01-08, read 2026-12-04)"."""
    ref = reference()
    ref_text = message(
        "prices.rate_reference",
        lang,
        name=message("prices.rate_name", lang),
        published=ref.published.isoformat(),
        read=ref.source_read.isoformat(),
    )
    source = (
        message("prices.rate_entered", lang, rate=f"{ref.cny_per_usd:g}", reference=ref_text)
        if rate.entered
        else ref_text
    )
    return message("prices.rate_line", lang, rate=f"{rate.cny_per_usd:g}", source=source)


def price_to_dict(price: Price, rate: Rate | None = None) -> dict[str, Any]:
    """The price for a JSON file: USD per GPU-hour, its source ("entered", "catalog" or "none"),
    provider, address and date read, and the CNY amount at the rate (with the rate and its origin)."""
    rate = rate or default_rate()
    usd = price.usd_per_gpu_hour
    return {
        "usd_per_gpu_hour": usd,
        "source": "none" if usd is None else ("entered" if price.entered else "catalog"),
        "provider": None if price.entered else (price.provider or None),
        "source_url": None if price.entered else (price.source_url or None),
        "read": None if price.entered or price.read is None else price.read.isoformat(),
        "cny_per_usd": rate.cny_per_usd,
        "rate_source": "entered" if rate.entered else "reference",
        "rate_reference_url": reference().source_url,
        "cny_per_gpu_hour": None if usd is None else round(usd * rate.cny_per_usd, 4),
    }


def price_rows(price: Price, rate: Rate | None = None) -> list[tuple[str, Any]]:
    """The JSON's fields as (name, value) rows for a CSV file (empty for None)."""
    return [(key, "" if value is None else value) for key, value in price_to_dict(price, rate).items()]


def price_section(price: Price, lang: str = "en", rate: Rate | None = None) -> Section:
    """The price and the exchange rate as a document section (Markdown, HTML)."""
    rate = rate or default_rate()
    return (message("prices.section", lang), [Block("list", (price_line(price, lang, rate), rate_line(rate, lang)))])


def price_from_dict(data: dict[str, Any]) -> tuple[Price, Rate]:
    """The price and rate back from :func:`price_to_dict` (a plan's JSON carries them so)."""
    read = data.get("read")
    price = Price(
        data.get("usd_per_gpu_hour"),
        data.get("source") == "entered",
        data.get("provider") or "",
        data.get("source_url") or "",
        dt.date.fromisoformat(read) if read else None,
    )
    return price, Rate(float(data["cny_per_usd"]), entered=data.get("rate_source") == "entered")


def with_price(data: dict[str, Any], price: Price, rate: Rate | None = None) -> dict[str, Any]:
    """A plan's JSON (:func:`core.planning.report.plan_to_dict`) with its price and rate under "price":
    every export of the plan (Markdown, HTML, JSON, CSV) then lists them."""
    return {**data, "price": price_to_dict(price, rate)}
