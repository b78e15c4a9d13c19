"""Energy and power per token (issue 31, item 4): the catalog's [power] figures, the power curve, the
energy per output token, its units and the JSON block."""

from __future__ import annotations

import json
import tomllib

import numpy as np
import pytest

from core.cli.command import main
from core.energy.power import J_PER_KWH, EnergyInputs, board_power, energy_of, utilization
from core.energy.report import energy_dict, energy_section
from core.estimate.result import estimate
from core.spec import DATA_DIR
from core.spec.catalog import load_catalog
from core.spec.deployment import Deployment, Workload
from core.spec.engine import EngineConfig, Parallelism
from core.spec.precision import WEIGHT_PRECISIONS, kv_precision

NO_POWER_FOUND = {"l2", "l20"}  # no published board power could be found (data/gpus notes; report)


def deployment(model="qwen3-32b", gpu="h100-sxm", tp=2) -> Deployment:
    cat = load_catalog()
    m, weights = cat.model(model), WEIGHT_PRECISIONS["bf16"]
    return Deployment(
        model=m,
        gpu=cat.gpu(gpu),
        weights=weights,
        kv=kv_precision("auto", weights),
        parallel=Parallelism(tp=tp),
        engine=EngineConfig(max_model_len=4096),
    )


def run(batch, dep=None, inputs=None):
    e = estimate(dep or deployment(), Workload(input_len=1024, output_len=512, batch=batch))
    return e, energy_of(e, inputs)


@pytest.mark.parametrize("path", sorted((DATA_DIR / "gpus").glob("*.toml")), ids=lambda p: p.stem)
def test_every_gpu_has_tdp_and_idle_with_a_source(path):
    entry = tomllib.loads(path.read_text())
    if path.stem in NO_POWER_FOUND:
        assert "power" not in entry  # left out, not guessed
        return
    power = entry["power"]
    assert power["tdp_w"] > power["idle_w"] > 0
    assert power["source_url"] and power["note"] and power["source_read"]
    assert power["idle_source_url"] and power["idle_note"] and power["idle_source_read"]
    # a derived idle says how; a measured one quotes the captured line
    assert ("idle_rule" in power) == power["idle_note"].startswith("derived")
    if "idle_rule" in power:
        assert "ratio" in power["idle_rule"]


def test_catalog_parses_the_power_figures():
    gpu = load_catalog().gpu("h100-sxm")
    assert (gpu.tdp_w, gpu.idle_w, gpu.idle_rule) == (700.0, 85.0, "")
    assert load_catalog().gpu("h200").idle_rule  # derived from Hopper's measured ratio


def test_power_lies_between_idle_and_tdp_and_rises_with_batch():
    gpu = load_catalog().gpu("h100-sxm")
    assert board_power(gpu, 0.0) == gpu.idle_w and board_power(gpu, 1.0) == gpu.tdp_w
    assert board_power(gpu, 2.0) == gpu.tdp_w  # u is clamped
    powers = [run(b)[1].power_decode_w for b in (1, 8, 64)]
    assert all(gpu.idle_w < p < gpu.tdp_w for p in powers)
    assert powers == sorted(powers) and powers[-1] > powers[0]


def test_energy_per_token_falls_with_batch():
    joules = [run(b)[1].j_per_token for b in (1, 8, 64)]
    assert joules[0] > joules[1] > joules[2]


def test_utilization_is_the_busy_share_of_the_step():
    e, en = run(8)
    d = e.latency.decode
    assert en.u_decode == pytest.approx(max(float(d.compute_s), float(d.memory_s)) / float(d.seconds))
    assert 0 < utilization(e.latency.prefill) <= 1


def test_units_and_the_round_of_requests():
    e, en = run(16, inputs=EnergyInputs(usd_per_kwh=0.2, pue=1.25))
    # all GPUs of the deployment, prefill included, over the round's output tokens
    round_j = 2 * (en.power_prefill_w * float(e.latency.prefill.seconds) + en.power_decode_w * en.decode_s)
    assert en.j_per_token == pytest.approx(round_j / (e.running_batch * 512))
    assert en.decode_s == pytest.approx(511 * float(e.latency.decode.seconds))
    assert en.tokens_per_j == pytest.approx(1 / en.j_per_token)
    assert J_PER_KWH == 3.6e6
    assert en.kwh_per_m_tokens == pytest.approx(en.j_per_token * 1.25 * 1e6 / 3.6e6)
    assert en.usd_per_m_tokens == pytest.approx(en.kwh_per_m_tokens * 0.2)
    assert en.usd_per_hour == pytest.approx(2 * 3.99 + 2 * en.power_w * 1.25 / 1000 * 0.2)


def test_pue_multiplies_facility_energy_only():
    _, board = run(8)
    _, facility = run(8, inputs=EnergyInputs(pue=1.5))
    assert facility.j_per_token == board.j_per_token
    assert facility.kwh_per_m_tokens == pytest.approx(1.5 * board.kwh_per_m_tokens)


@pytest.mark.parametrize("kw", [{"pue": 0.9}, {"pue": 5.0}, {"usd_per_kwh": -1.0}, {"usd_per_kwh": float("nan")}])
def test_bad_inputs_are_refused(kw):
    with pytest.raises(ValueError):
        EnergyInputs(**kw)


def test_gpu_without_power_figures_is_unavailable_not_guessed():
    e = estimate(deployment(model="qwen3-8b", gpu="l20", tp=1), Workload(input_len=512, output_len=128, batch=4))
    assert energy_of(e) is None
    data = energy_dict(e)
    assert data["available"] is False and "l20" in data["reason"]
    title, blocks = energy_section({"energy": data}, "zh")
    assert title == "能耗与功率" and blocks[0].kind == "p"


def test_estimate_json_carries_the_energy_block(capsys):
    argv = ["estimate", "--model", "qwen3-32b", "--gpu", "h100", "--num-gpus", "2", "--batch", "8", "--json"]
    assert main([*argv, "--electricity-usd-per-kwh", "0.25", "--pue", "1.2"]) == 0
    block = json.loads(capsys.readouterr().out)["energy"]
    assert block["available"] is True
    for key in (
        "power_per_gpu_w",
        "energy_per_output_token_j",
        "output_tokens_per_joule",
        "kwh_per_million_output_tokens",
        "usd_per_million_output_tokens",
        "usd_per_hour",
    ):
        assert block[key] > 0, key
    assert (block["electricity_usd_per_kwh"], block["pue"]) == (0.25, 1.2)
    assert block["inputs"]["idle_w"] == 85.0 and block["inputs"]["tdp_w"] == 700.0
    assert block["kwh_per_million_output_tokens"] == pytest.approx(
        block["energy_per_output_token_j"] * 1.2 / 3.6, rel=1e-3
    )
    title, blocks = energy_section({"energy": block}, "en")
    assert title == "Energy and power" and blocks[0].kind == "table" and len(blocks[0].items) == 6


def test_check_json_carries_the_energy_block(capsys):
    argv = ["check", "--model", "qwen3-32b", "--gpu", "h100", "--num-gpus", "2", "--users", "20", "--json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["energy"]["available"] is True


def test_bad_pue_flag_is_one_line(capsys):
    assert main(["estimate", "--model", "qwen3-32b", "--gpu", "h100", "--pue", "0.5"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--pue" in err


def test_each_energy_explanation_is_the_number_shown():
    from core.estimate.explain_energy import explain_energy

    inputs = EnergyInputs(usd_per_kwh=0.3, pue=1.4)
    e, en = run(8, inputs=inputs)
    found = explain_energy(e, inputs)
    assert found["energy_power"].value == en.power_w
    assert found["energy_per_token"].value == en.j_per_token
    assert found["energy_tokens_per_joule"].value == en.tokens_per_j
    assert found["energy_kwh_per_million"].value == en.kwh_per_m_tokens
    assert found["energy_usd_per_million"].value == en.usd_per_m_tokens
    assert found["energy_usd_per_hour"].value == en.usd_per_hour
    for item in found.values():
        shown = item.values.rsplit(" = ", 1)[1].split("\\")[0]
        assert float(shown.replace("{,}", "")) == pytest.approx(item.value, rel=1e-3), item.key
    assert r"\times 1.4 \times" in found["energy_kwh_per_million"].values  # the PUE the user chose


def test_search_carries_power_and_picks_by_tokens_per_joule(deploy, catalog):
    from core.planning.pareto import best, search_to_dict
    from core.planning.requirement import Requirement
    from core.planning.search import SearchSpace, search

    req = Requirement(load="users", users=40, think_time_s=10.0, prompt_len=1000, answer_len=300, tpot_slo_s=0.08)
    space = SearchSpace(gpus=("h100-sxm", "l40s"), tensor_parallel=(1, 2), pipeline_parallel=(1,))
    found = search(catalog, deploy(model="llama-3.1-8b"), req, space)
    ok = np.isfinite(found.tpot_s)
    idle = np.array([found.shapes[s].gpu.idle_w for s in found.shape])
    tdp = np.array([found.shapes[s].gpu.tdp_w for s in found.shape])
    assert ((found.power_w[ok] >= idle[ok]) & (found.power_w[ok] <= tdp[ok])).all()
    assert (found.mode[ok] == 1).any()  # disaggregated points are powered too
    per_joule, cheapest = best(found, "tokens-per-joule"), best(found)
    assert found.tokens_per_joule[per_joule] >= found.tokens_per_joule[found.meets_slo].max() * (1 - 1e-12)
    assert found.tokens_per_joule[per_joule] >= found.tokens_per_joule[cheapest]
    data = search_to_dict(found, space.modes, "tokens-per-joule")
    assert data["objective"] == "tokens-per-joule" and data["best"]["tokens_per_joule"] > 0
    assert data["best"]["power_per_gpu_w"] > 0
    with pytest.raises(ValueError, match="objective"):
        best(found, "joules")


def test_search_objective_flag(capsys):
    argv = ["search", "--model", "llama-3.1-8b", "--gpus", "l40s", "--users", "20", "--json"]
    assert main([*argv, "--objective", "tokens-per-joule", "--electricity-usd-per-kwh", "0.2", "--pue", "1.5"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["objective"] == "tokens-per-joule" and (data["electricity_usd_per_kwh"], data["pue"]) == (0.2, 1.5)
    point = data["best"]
    kwh = 1.5 / point["tokens_per_joule"] / 3.6  # J per token x PUE x 1e6 / 3.6e6
    assert point["energy_kwh_per_million_output_tokens"] == pytest.approx(kwh, rel=1e-3)
    assert point["energy_usd_per_million_output_tokens"] == pytest.approx(0.2 * kwh, rel=1e-3)


def test_search_power_at_a_light_load_is_near_idle(deploy, catalog):
    from core.planning.requirement import Requirement
    from core.planning.search import SearchSpace, search

    light = Requirement(load="rate", rate_per_s=0.01, prompt_len=500, answer_len=100)
    space = SearchSpace(gpus=("h100-sxm",), tensor_parallel=(1,), pipeline_parallel=(1,), modes=("aggregated",))
    found = search(catalog, deploy(model="llama-3.1-8b"), light, space)
    one = np.flatnonzero(found.replicas == 1)[0]
    # 0.01 requests/s x ~1 s each: the GPU steps about 1 % of the time
    assert found.power_w[one] < 85.0 + 0.1 * (700.0 - 85.0)
