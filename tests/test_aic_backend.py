"""The optional measured-kernel backend (``--backend aic``, core/timing/aic_backend.py).

Without aiconfigurator-core (the project's own venv): core runs, the answer says "roofline", and
``--backend aic`` is one line naming why. With it (``pip install ".[aic]"`` in a venv of its own; run
there with PYTHONPATH=.): a covered deployment's decode step is AIConfigurator's own step time,
within a sane band of the roofline, and an uncovered one is refused with its reason.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import numpy as np
import pytest

from core.serving.step_cost import StepTimer
from core.spec.deployment import Workload
from core.spec.engine import EngineConfig
from core.spec.scenario_codec import decode, encode
from core.timing import aic_backend
from core.timing.phases import decode_step_time, prefill_time

AIC_MISSING = aic_backend.installed_version() is None


def test_core_imports_and_runs_without_importing_aiconfigurator():
    code = (
        "import sys; from core.cli import main; import core.timing.aic_backend;"
        " main(['estimate', '--model', 'llama-3.1-8b', '--gpu', 'h100-sxm', '--json']);"
        " assert 'aiconfigurator_core' not in sys.modules"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["engine"]["step_time_backend"] == "roofline"


def test_the_answer_names_the_roofline_backend_by_default(cli):
    code, out, _ = cli("estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--json")
    assert code == 0
    assert json.loads(out)["engine"]["step_time_backend"] == "roofline"
    code, out, _ = cli("estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm")
    assert "step time backend: roofline" in out
    simulate = ("simulate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--concurrency", "2", "--num-requests", "9")
    assert json.loads(cli(*simulate, "--json")[1])["step_time_backend"] == "roofline"
    assert "step time backend: roofline" in cli(*simulate)[1]
    check = ("check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--request-rate", "1")
    assert json.loads(cli(*check, "--json")[1])["step_time_backend"] == "roofline"
    assert "step time backend: roofline" in cli(*check)[1]


@pytest.mark.skipif(not AIC_MISSING, reason="aiconfigurator-core is installed here")
@pytest.mark.parametrize("command", ["estimate", "simulate", "check"])
def test_backend_aic_without_the_package_is_one_line_naming_why(cli, command):
    load = {"estimate": [], "simulate": ["--concurrency", "4"], "check": ["--request-rate", "1"]}[command]
    code, out, err = cli(command, "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--backend", "aic", *load)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: --backend aic: ")
    assert 'aiconfigurator-core is not installed (pip install ".[aic]")' in err


def test_backend_is_an_engine_setting_checked_and_kept_in_a_link(deploy, catalog):
    with pytest.raises(ValueError, match="backend must be one of roofline, aic"):
        EngineConfig(backend="measured")
    dep = deploy(backend="aic")
    data = encode(dep, Workload(), catalog)
    assert data["engine"]["backend"] == "aic"
    assert decode(data, catalog)[0].engine.backend == "aic"
    assert "backend" not in encode(deploy(), Workload(), catalog).get("engine", {})


# ---- with aiconfigurator-core installed ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def aic():
    pytest.importorskip("aiconfigurator_core")
    from aiconfigurator_core.sdk import EngineHandle

    return EngineHandle


@pytest.mark.parametrize(
    ("model", "aic_id"), [("llama-3.1-8b", "meta-llama/Meta-Llama-3.1-8B"), ("qwen3-32b", "Qwen/Qwen3-32B")]
)
def test_decode_step_is_aiconfigurators_and_near_the_roofline(aic, deploy, model, aic_id):
    dep = deploy(model, "h100-sxm", backend="aic")
    assert aic_backend.coverage(dep) is None
    assert aic_backend.step_time_backend(dep) == "aic 0.12.0 (h100_sxm, vllm 0.24.0)"
    handle = aic.compile(aic_id, "h100_sxm", "vllm", backend_version="0.24.0", tp_size=1)
    roofline = deploy(model, "h100-sxm")
    for batch, context in ((8, 1024), (64, 4096), (100, 2000)):  # grid points, then between them
        direct = handle.decode_step_latency(batch, context, 1) / 1e3
        step = decode_step_time(dep, batch, context)
        # on the grid AIConfigurator's own number; between grid points its log-log interpolation
        assert float(step.kernel_seconds) == pytest.approx(direct, rel=1e-9 if batch != 100 else 0.03)
        assert float(step.comm_s) == 0.0  # its all-reduces are in its step
        base = decode_step_time(roofline, batch, context)
        assert float(step.overhead_s) == pytest.approx(float(base.overhead_s))  # the project's host costs stay
        ratio = float(step.kernel_seconds) / float(base.kernel_seconds + base.comm_s)
        assert 0.3 < ratio < 3.0, (batch, context, ratio)


def test_prefill_is_aiconfigurators_prefill(aic, deploy):
    dep = deploy("llama-3.1-8b", "h100-sxm", backend="aic")
    handle = aic.compile("meta-llama/Meta-Llama-3.1-8B", "h100_sxm", "vllm", backend_version="0.24.0", tp_size=1)
    phase = prefill_time(dep, 1, 1024)
    assert float(phase.kernel_seconds) == pytest.approx(handle.predict_prefill_latency(1, 1024, 0) / 1e3, rel=1e-9)


def test_simulator_steps_are_the_same_tables(aic, deploy):
    dep = deploy("llama-3.1-8b", "h100-sxm", backend="aic")
    timer = StepTimer(dep, 10_000, 1.0)
    assert isinstance(timer.model, aic_backend.AicStepModel)
    cached = np.full(8, 1024, dtype=np.int64)
    static = decode_step_time(dep, 8, 1024)
    assert timer.model.decode_step(cached, int((cached + 1).sum())) == pytest.approx(float(static.seconds))
    runs = timer.model.decode_steps(cached, int((cached + 1).sum()), 3)
    assert runs[0] == pytest.approx(float(static.seconds)) and runs[2] > runs[0]
    alone = timer.model.batch_step(np.zeros(0, dtype=np.int64), [(1024, 0)])
    assert alone == pytest.approx(float(prefill_time(dep, 1, 1024).seconds))


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"gpu": "mi300x"}, "AMD Instinct MI300X has no AIConfigurator system"),
        ({"gpu": "t4"}, "NVIDIA T4 has no AIConfigurator system"),
        ({"model": "qwen2.5-7b"}, "ships no config for Qwen/Qwen2.5-7B-Instruct"),
    ],
)
def test_an_uncovered_deployment_is_refused_with_its_reason(aic, deploy, cli, change, reason):
    dep = deploy(change.get("model", "llama-3.1-8b"), change.get("gpu", "h100-sxm"), backend="aic")
    assert reason in aic_backend.coverage(dep)
    with pytest.raises(aic_backend.NotCovered, match=reason):
        decode_step_time(dep, 1, 1024)
    argv = ["--model", change.get("model", "llama-3.1-8b"), "--gpu", change.get("gpu", "h100-sxm"), "--backend", "aic"]
    code, out, err = cli("estimate", *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and reason in err


def test_a_lever_that_changes_the_kernels_is_refused(aic, deploy, catalog):
    from core.levers.settings import Levers, Speculative

    dep = dataclasses.replace(deploy(backend="aic"), levers=Levers(speculative=Speculative(method="ngram")))
    assert "speculative lever changes the step's kernels" in aic_backend.coverage(dep)


def test_the_how_explanation_quotes_the_aic_step(aic, deploy):
    from core.estimate.explain import explain
    from core.estimate.result import estimate

    dep = deploy("llama-3.1-8b", "h100-sxm", backend="aic")
    result = estimate(dep, Workload(batch=8))
    tpot = explain(result)["tpot"]
    assert tpot.formula == r"\text{TPOT} = T_{AIC} + T_{overhead}"
    assert r"aic 0.12.0 (h100\_sxm, vllm 0.24.0)" in tpot.values
    assert "core/timing/aic_backend.py (`aic 0.12.0 (h100_sxm, vllm 0.24.0)`)" in tpot.source
    decode = result.latency.decode
    assert tpot.value == pytest.approx(float(decode.kernel_seconds + decode.overhead_s))
