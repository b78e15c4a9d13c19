"""Energy on the pages (issue 31, item 4): the Explorer's panel with its How buttons, the electricity
price and PUE in the link, the Plan's energy line, the Compare rows and the Catalog's power columns."""

from __future__ import annotations

import re

import pytest

from core.energy.power import EnergyInputs, energy_of
from core.estimate.result import estimate
from tests.app_helpers import DEFAULT, DEFAULT_WORK, metrics, open_app

POWER = "Board power per GPU (average)"
J_TOKEN = "Energy per output token (all GPUs, prefill included)"
KWH = "Energy per 1M output tokens (× PUE)"
USD = "Electricity cost per 1M output tokens"


def number(text: str) -> float:
    return float(re.sub(r"[^0-9.]", "", text))


def expected(deploy, inputs=None):
    return energy_of(estimate(deploy(**DEFAULT), DEFAULT_WORK), inputs)


def test_explorer_shows_energy_with_its_how(deploy):
    at = open_app()
    shown, en = metrics(at), expected(deploy)
    assert shown[POWER] == f"{en.power_w:,.0f} W"
    assert number(shown[J_TOKEN]) == pytest.approx(en.j_per_token, rel=5e-3)
    assert any("A10" in c.value and "TDP 150 W" in c.value for c in at.caption)  # its source, in words
    # each How opens on the number shown, its formula evaluated with this scenario's values
    keys = ("energy_power", "energy_per_token", "energy_tokens_per_joule", "energy_kwh_per_million")
    for key in keys:
        at.session_state[f"explain_{key}"] = True
    at.run()
    assert not at.exception
    opened = [m.group(1) for m in (re.match(r"^= \*\*(.+?)\*\*", md.value) for md in at.markdown) if m]
    labels = (POWER, J_TOKEN, "Output tokens per joule", KWH)
    assert opened == [shown[label] for label in labels]
    assert any(f"{en.idle_w:g}" in x.value and "0." in x.value for x in at.latex)  # P_idle + (TDP - idle) x u


def test_the_link_carries_the_electricity_price_and_pue(deploy):
    at = open_app(kwh_usd="0.25", pue="1.3")
    assert not at.exception
    assert at.number_input(key="kwh_usd").value == 0.25 and at.number_input(key="pue").value == 1.3
    assert at.query_params["kwh_usd"] in ("0.25", ["0.25"]) and at.query_params["pue"] in ("1.3", ["1.3"])
    shown, en = metrics(at), expected(deploy, EnergyInputs(usd_per_kwh=0.25, pue=1.3))
    assert number(shown[KWH]) == pytest.approx(en.kwh_per_m_tokens, rel=5e-3)
    assert number(shown[USD]) == pytest.approx(en.usd_per_m_tokens, rel=5e-3)
    # changing the price changes the bill, not the board energy
    before = shown[J_TOKEN]
    at.number_input(key="kwh_usd").set_value(0.5).run()
    assert metrics(at)[J_TOKEN] == before
    assert number(metrics(at)[USD]) == pytest.approx(2 * en.usd_per_m_tokens, rel=5e-3)


def test_a_price_the_input_cannot_take_is_named():
    at = open_app(kwh_usd="-1", pue="9")
    [notice] = [w.value for w in at.warning if "This link asked for values" in w.value]
    assert "`kwh_usd=-1` ignored" in notice and "`pue=9` ignored" in notice


def test_plan_shows_energy_in_its_cost_section():
    at = open_app()
    at.switch_page("pages/plan_page.py").run()
    assert not at.exception
    assert any("J per output token" in m.value and "W per GPU" in m.value for m in at.markdown)


def test_compare_has_energy_rows():
    at = open_app()
    at.switch_page("pages/compare_page.py").run()
    at.button(key="save_scenario").click().run()
    assert not at.exception
    table = at.dataframe[0].value
    assert "W per GPU" in table.index and "J per output token" in table.index
    assert number(table.loc["W per GPU", "#1"]) > 0


def test_catalog_lists_tdp_and_idle():
    at = open_app()
    at.switch_page("pages/catalog_page.py").run()
    assert not at.exception
    gpus = next(d.value for d in at.dataframe if "TDP [W]" in d.value.columns)
    row = gpus.set_index("id").loc["h100-sxm"]
    assert (row["TDP [W]"], row["Idle [W]"], row["Idle basis"]) == (700.0, 85.0, "measured")
    assert gpus.set_index("id").loc["h200", "Idle basis"].startswith("derived")
