"""The energy figures as the JSON block of ``estimate --json`` and ``plan --json`` (:func:`energy_dict`),
one CLI line (:func:`energy_line`) and a document section built from that JSON (:func:`energy_section`).
Formulas and units: :mod:`core.energy.power`."""

from __future__ import annotations

from typing import Any

from core.energy.power import SHAPE, EnergyInputs, energy_of
from core.estimate.result import Estimate
from core.messages import message
from core.report.blocks import Block, Section
from core.spec.gpu import GpuSpec

__all__ = ["EnergyInputs", "energy_dict", "energy_line", "energy_section", "gpu_power_dict"]


def gpu_power_dict(gpu: GpuSpec) -> dict[str, Any]:
    """A GPU's board power figures and their sources, for ``list gpus --json`` (None where none was found)."""
    return {
        "tdp_w": gpu.tdp_w,
        "idle_w": gpu.idle_w,
        "idle_basis": None if gpu.idle_w is None else ("derived" if gpu.idle_rule else "measured"),
        "idle_rule": gpu.idle_rule or None,
        "power_source_url": gpu.power_source_url or None,
        "idle_source_url": gpu.idle_source_url or None,
    }


def _r(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def energy_dict(e: Estimate, inputs: EnergyInputs | None = None) -> dict[str, Any]:
    """The ``energy`` block: power per GPU [W], J per output token, tokens per J, kWh and USD per 1M
    output tokens at the given price and PUE, cost per hour, and every input used; ``available`` False
    (with the reason) when the GPU has no power figures in the catalog."""
    inputs = inputs or EnergyInputs()
    gpu = e.deployment.gpu
    base = {"electricity_usd_per_kwh": inputs.usd_per_kwh, "pue": inputs.pue}
    en = energy_of(e, inputs)
    if en is None:
        return {"available": False, "reason": f"no [power] figures for GPU {gpu.id!r} in the catalog", **base}
    return {
        "available": True,
        "scope": "gpu_board",  # GPU boards only; x PUE for the facility
        "power_per_gpu_w": round(en.power_w, 1),
        "power_prefill_w": round(en.power_prefill_w, 1),
        "power_decode_w": round(en.power_decode_w, 1),
        "energy_per_output_token_j": _r(en.j_per_token),
        "output_tokens_per_joule": _r(en.tokens_per_j),
        "kwh_per_million_output_tokens": _r(en.kwh_per_m_tokens),
        "usd_per_million_output_tokens": _r(en.usd_per_m_tokens),
        "energy_usd_per_hour": _r(en.energy_usd_per_hour),
        "usd_per_hour": _r(en.usd_per_hour),
        **base,
        "inputs": {
            "gpus": en.gpus,
            "running_batch": en.running,
            "output_len": en.output_len,
            "idle_w": en.idle_w,
            "tdp_w": en.tdp_w,
            "idle_derived": bool(gpu.idle_rule),
            "utilization_prefill": _r(en.u_prefill, 3),
            "utilization_decode": _r(en.u_decode, 3),
            "prefill_s": _r(en.prefill_s, 6),
            "decode_s": _r(en.decode_s, 6),
            "curve": f"P = idle + (TDP - idle) x u^{SHAPE:g}",
            "gpu_price_per_hour_usd": gpu.price_per_hour,
            "power_source_url": gpu.power_source_url,
            "idle_source_url": gpu.idle_source_url,
        },
    }


def energy_line(data: dict[str, Any]) -> str:
    """One CLI line from the ``energy`` block."""
    if not data.get("available"):
        return f"energy: unavailable ({data.get('reason', 'no power figures')})"
    cost = data["usd_per_hour"]
    hourly = f"; ${cost:.2f}/h with the GPUs' price" if cost is not None else ""
    return (
        f"energy: {data['power_per_gpu_w']:.0f} W per GPU (board), {data['energy_per_output_token_j']:.3g} J per output"
        f" token ({data['output_tokens_per_joule']:.3g} tokens/J), {data['kwh_per_million_output_tokens']:.3g} kWh"
        f" and ${data['usd_per_million_output_tokens']:.3g} per 1M output tokens"
        f" at ${data['electricity_usd_per_kwh']:g}/kWh, PUE {data['pue']:g}{hourly}"
    )


def energy_section(data: dict[str, Any], lang: str = "en") -> Section:
    """The document section "Energy and power" from an ``estimate --json`` or ``plan --json`` dict
    (its ``energy`` block); a one-paragraph section when the GPU has no power figures."""
    title = message("energy.section_title", lang)
    block = data.get("energy") or {}
    if not block.get("available"):
        return title, [Block("p", (message("energy.unavailable", lang, reason=block.get("reason", "")),))]
    inp = block["inputs"]
    cost = block["usd_per_hour"]
    rows = (
        (message("energy.power_per_gpu", lang), f"{block['power_per_gpu_w']:.0f} W"),
        (message("energy.j_per_token", lang), f"{block['energy_per_output_token_j']:.3g} J"),
        (message("energy.tokens_per_j", lang), f"{block['output_tokens_per_joule']:.3g}"),
        (message("energy.kwh_per_m", lang), f"{block['kwh_per_million_output_tokens']:.3g} kWh"),
        (message("energy.usd_per_m", lang), f"${block['usd_per_million_output_tokens']:.3g}"),
        (message("energy.usd_per_hour", lang), "—" if cost is None else f"${cost:.2f}"),
    )
    inputs = (
        message("energy.inputs_line", lang, price=block["electricity_usd_per_kwh"], pue=block["pue"]),
        message(
            "energy.curve_line",
            lang,
            idle=inp["idle_w"],
            tdp=inp["tdp_w"],
            u_pre=inp["utilization_prefill"],
            u_dec=inp["utilization_decode"],
        ),
        message("energy.scope_line", lang),
    )
    return title, [
        Block("table", rows, (message("energy.quantity", lang), message("energy.value", lang))),
        Block("list", inputs),
    ]
