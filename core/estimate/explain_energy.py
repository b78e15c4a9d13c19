"""The energy numbers explained (:func:`explain_energy`): board power per GPU, energy per output token,
tokens per joule, kWh and USD per 1M output tokens and cost per hour, each as an
:class:`~core.estimate.explain_memory.Explanation` whose formula, evaluated with the values shown,
gives the number shown. The formulas are :mod:`core.energy.power`'s:

    u = max(compute time, byte time) / step time;   P = P_idle + (P_TDP - P_idle) x u
    J/token = N x (P_prefill x t_prefill + P_decode x (O - 1) x TPOT) / (R x O)
    kWh per 1M = J/token x PUE x 1e6 / 3.6e6;   USD per 1M = kWh per 1M x price
    cost per hour = N x GPU price + N x P_avg x PUE / 1000 x price
"""

from __future__ import annotations

from core.energy.power import Energy, EnergyInputs, energy_of
from core.estimate.explain_memory import Explanation, num

SOURCE = "core/energy/power.py; docs/accuracy.md, Energy: the PowerX check"


def power(en: Energy) -> Explanation:
    return Explanation(
        "energy_power",
        r"\bar P = \frac{P_{pre} t_{pre} + P_{dec} t_{dec}}{t_{pre} + t_{dec}},\quad"
        r" P = P_{idle} + (P_{TDP} - P_{idle})\, u,\quad u = \frac{\max(T_{compute}, T_{bytes})}{T_{step}}",
        rf"P_{{pre}} = {num(en.idle_w)} + ({num(en.tdp_w)} - {num(en.idle_w)}) \times {en.u_prefill:.3f}"
        rf" = {num(en.power_prefill_w)}\ \text{{W}},\ P_{{dec}} = {num(en.idle_w)} + ({num(en.tdp_w)}"
        rf" - {num(en.idle_w)}) \times {en.u_decode:.3f} = {num(en.power_decode_w)}\ \text{{W}};\ "
        rf"\bar P = \frac{{{num(en.power_prefill_w)} \times {num(en.prefill_s)} + {num(en.power_decode_w)}"
        rf" \times {num(en.decode_s)}}}{{{num(en.round_s)}}} = {num(en.power_w)}\ \text{{W}}",
        en.power_w,
        "W",
        SOURCE,
    )


def per_token(en: Energy) -> Explanation:
    return Explanation(
        "energy_per_token",
        r"J_{tok} = \frac{N (P_{pre} t_{pre} + P_{dec} (O - 1)\, TPOT)}{R \times O}",
        rf"J_{{tok}} = \frac{{{en.gpus} \times ({num(en.power_prefill_w)} \times {num(en.prefill_s)}"
        rf" + {num(en.power_decode_w)} \times {num(en.decode_s)})}}{{{en.running} \times {en.output_len}}}"
        rf" = {num(en.j_per_token)}\ \text{{J}}",
        en.j_per_token,
        "J",
        SOURCE,
    )


def tokens_per_joule(en: Energy) -> Explanation:
    return Explanation(
        "energy_tokens_per_joule",
        r"\text{tokens/J} = 1 / J_{tok}",
        rf"1 / {num(en.j_per_token)} = {num(en.tokens_per_j)}\ \text{{tokens/J}}",
        en.tokens_per_j,
        "tok/J",
        SOURCE,
    )


def kwh_per_million(en: Energy) -> Explanation:
    return Explanation(
        "energy_kwh_per_million",
        r"\text{kWh per 1M} = \frac{J_{tok} \times PUE \times 10^6}{3.6 \times 10^6}",
        rf"\frac{{{num(en.j_per_token)} \times {en.inputs.pue:g} \times 10^6}}{{3.6 \times 10^6}}"
        rf" = {num(en.kwh_per_m_tokens)}\ \text{{kWh}}",
        en.kwh_per_m_tokens,
        "kWh",
        SOURCE,
    )


def usd_per_million(en: Energy) -> Explanation:
    return Explanation(
        "energy_usd_per_million",
        r"\text{USD per 1M} = \text{kWh per 1M} \times \text{price}",
        rf"{num(en.kwh_per_m_tokens)} \times {en.inputs.usd_per_kwh:g} = {num(en.usd_per_m_tokens)}\ \text{{USD}}",
        en.usd_per_m_tokens,
        "USD",
        SOURCE,
    )


def usd_per_hour(en: Energy) -> Explanation | None:
    if en.usd_per_hour is None:
        return None
    return Explanation(
        "energy_usd_per_hour",
        r"\text{USD/h} = N \times \text{GPU price} + N \times \bar P \times PUE / 1000 \times \text{price}",
        rf"{en.gpus} \times {en.gpu_price_per_hour:g} + {en.gpus} \times {num(en.power_w)} \times {en.inputs.pue:g}"
        rf" / 1000 \times {en.inputs.usd_per_kwh:g} = {num(en.usd_per_hour)}\ \text{{USD/h}}",
        en.usd_per_hour,
        "USD/h",
        SOURCE,
    )


ENERGY = (power, per_token, tokens_per_joule, kwh_per_million, usd_per_million, usd_per_hour)


def explain_energy(result, inputs: EnergyInputs | None = None) -> dict[str, Explanation]:
    """The energy explanations of an estimate by key; empty when its GPU has no power figures."""
    en = energy_of(result, inputs)
    if en is None:
        return {}
    return {item.key: item for item in (f(en) for f in ENERGY) if item is not None}
