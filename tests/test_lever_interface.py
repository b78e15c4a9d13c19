"""The one interface through which levers change memory and time (core/levers/base.py).

A lever is seen by memory, timing, the estimate and the simulator only through its hooks: a
stand-in lever registered in place of a real one must show up everywhere, with nothing else
changed, and the real levers must add exactly what their own formulas say.
"""

from __future__ import annotations

import numpy as np
import pytest

from core.estimate.report import estimate_to_dict
from core.estimate.result import estimate
from core.levers import registry
from core.levers.base import Lever, PartLabel
from core.levers.lora import lora_memory_bytes
from core.levers.settings import Lora, Offload, PrefixCaching, Speculative
from core.memory import budget
from core.memory.budget import MemoryPart, gpu_memory
from core.serving.simulate import simulate
from core.serving.step_cost import StepModel, step_seconds
from core.serving.traffic import Lengths, Traffic
from core.spec import units
from core.spec.deployment import Deployment, Workload
from core.timing.phases import decode_step_time, prefill_time
from core.timing.roofline import StepWork

EXTRA = 1.0 * units.GiB
EXTRA_FLOPS_PER_TOKEN = 1e12


class StandIn(Lever):
    """A lever no code knows: 1 GiB beside the weights, 1 TFLOP per token, registered as 'attention'."""

    name = "attention"
    part_labels = (PartLabel("stand_in", "a stand-in part"),)

    def memory_parts(self, dep, max_num_batched_tokens):
        return (MemoryPart("stand_in", EXTRA, "gpu_static"),)

    def step_work(self, dep, tokens, sequences_per_step, steps):
        return StepWork(flops=EXTRA_FLOPS_PER_TOKEN * np.asarray(tokens, dtype=float))


@pytest.fixture
def stand_in(monkeypatch):
    monkeypatch.setattr(registry, "LEVERS", (StandIn(),))
    budget._gpu_memory.cache_clear()
    yield
    budget._gpu_memory.cache_clear()


def test_a_new_lever_reaches_memory_timing_report_and_simulator_through_the_registry_only(deploy, stand_in):
    plain = deploy(gpu="a10", max_model_len=4096)
    eager = plain.with_levers(attention="eager")  # turns the stand-in on
    work = Workload(input_len=1000, output_len=100, batch=4)

    assert gpu_memory(eager).kv_budget == pytest.approx(gpu_memory(plain).kv_budget - EXTRA)
    assert gpu_memory(eager).part("stand_in") == EXTRA
    assert gpu_memory(eager).non_kv == pytest.approx(gpu_memory(plain).non_kv + EXTRA)
    # 4 x 1000 prompt tokens x 1 TFLOP more on the A10's compute: prefill gets longer by that work
    extra_s = 4 * 1000 * EXTRA_FLOPS_PER_TOKEN / plain.gpu.flops_for(plain.weights)[0] / plain.efficiency.compute
    assert float(prefill_time(eager, 4, 1000).compute_s) == pytest.approx(
        float(prefill_time(plain, 4, 1000).compute_s) + extra_s
    )
    assert float(decode_step_time(eager, 4, 1050).flops) == pytest.approx(
        float(decode_step_time(plain, 4, 1050).flops) + 4 * EXTRA_FLOPS_PER_TOKEN
    )
    report = estimate_to_dict(estimate(eager, work))["memory_per_gpu"]
    assert report["stand_in_gib"] == pytest.approx(1.0)
    sims = [
        simulate(d, Traffic(mode="rate", rate_per_s=0.05), 20, Lengths(mean=500), Lengths(mean=50))
        for d in (plain, eager)
    ]
    assert np.mean(sims[1].ttft) > np.mean(sims[0].ttft)


def test_the_simulators_fast_step_adds_a_levers_work_as_the_general_path_does(deploy, stand_in):
    eager = deploy(gpu="a10", max_model_len=4096).with_levers(attention="eager")
    model = StepModel(eager)
    assert model.exact  # the stand-in's work is linear in tokens: the fast path takes it
    new, cached = np.array([1, 1, 300]), np.array([900, 1200, 0])
    assert model.step(new, cached) == pytest.approx(step_seconds(eager, new, cached), rel=1e-12)
    offloaded = deploy(gpu="a10", max_model_len=4096).with_levers(offload=Offload(weights_bytes=2 * units.GiB))
    assert StepModel(offloaded).step(new, cached) == pytest.approx(step_seconds(offloaded, new, cached), rel=1e-12)


def test_memory_and_timing_take_the_levers_from_the_deployment(deploy, monkeypatch):
    """The seam: memory and timing never consult the registry; the deployment hands them the models
    of the levers that are on. A stand-in handed in that way, with the registry untouched and no
    lever set, shows up in memory and time."""
    plain = deploy(gpu="a10", max_model_len=4096)
    before = gpu_memory(plain), float(prefill_time(plain, 4, 1000).flops), float(decode_step_time(plain, 4, 1050).flops)
    monkeypatch.setattr(Deployment, "lever_models", property(lambda dep: (StandIn(),)))
    budget._gpu_memory.cache_clear()
    try:
        assert gpu_memory(plain).part("stand_in") == EXTRA
        assert gpu_memory(plain).kv_budget == pytest.approx(before[0].kv_budget - EXTRA)
        # 4 x 1000 prompt tokens and 4 decode tokens x 1 TFLOP each, split over tp = 1
        assert float(prefill_time(plain, 4, 1000).flops) == pytest.approx(before[1] + 4000 * EXTRA_FLOPS_PER_TOKEN)
        assert float(decode_step_time(plain, 4, 1050).flops) == pytest.approx(before[2] + 4 * EXTRA_FLOPS_PER_TOKEN)
    finally:
        budget._gpu_memory.cache_clear()


@pytest.mark.parametrize(
    "levers",
    [
        {},
        {"prefix": PrefixCaching(shared_tokens=512)},
        {"offload": Offload(weights_bytes=units.GiB)},
        {"lora": Lora()},
        {"attention": "eager"},
        {"speculative": Speculative(method="ngram", k=3)},
        {"speculative": Speculative(method="mtp"), "lora": Lora(), "attention": "eager"},
    ],
    ids=["off", "prefix", "offload", "lora", "eager", "ngram", "three"],
)
def test_the_deployment_hands_in_the_registered_models_of_the_levers_that_are_on(deploy, levers):
    dep = deploy(gpu="h100-sxm").with_levers(**levers)
    assert dep.lever_models == registry.levers_on(dep.levers)
    assert [lever.name for lever in dep.lever_models] == [
        lever.name for lever in registry.LEVERS if lever.name in dep.levers.active
    ]
    assert len(dep.lever_models) == len(levers)


def test_a_lever_that_is_off_adds_nothing(deploy):
    dep = deploy(gpu="a10", max_model_len=4096)
    assert registry.levers_on(dep.levers) == ()
    assert gpu_memory(dep).parts == ()
    assert gpu_memory(dep).lever_gpu == 0.0


def test_lora_memory_is_its_own_formula_through_the_interface(deploy):
    plain = deploy(gpu="a10", max_model_len=4096)
    lora = Lora(adapters=4, rank=16)
    dep = plain.with_levers(lora=lora)
    expected = lora_memory_bytes(dep.model, lora, dep.parallel.tp)
    assert gpu_memory(dep).part("lora") == pytest.approx(expected)
    assert gpu_memory(dep).kv_budget == pytest.approx(gpu_memory(plain).kv_budget - expected)


def test_every_registered_lever_names_its_memory_parts_once():
    names = [label.name for label in registry.memory_part_labels()]
    assert len(names) == len(set(names))
    assert {lever.name for lever in registry.LEVERS} == {"speculative", "prefix", "offload", "lora", "attention"}


def test_lora_takes_the_simulators_fast_path_and_it_equals_the_general_one(deploy):
    """LoRA's step work (the adapters a step reads, at most one per sequence) depends only on the
    step's token and sequence counts, which the fast path evaluates once per size: the same time as
    the general path for mixed steps and decode runs (a 333-request burst with LoRA took 26,000 general
    steps, about 1.1 s, before; docs/benchmarks.md)."""
    dep = deploy(gpu="a10", max_model_len=4096).with_levers(lora=Lora(adapters=4))
    model = StepModel(dep)
    assert model.exact
    for new, cached in (([1, 1, 300], [900, 1200, 0]), ([1] * 3, [5, 700, 900]), ([1] * 64, range(100, 740, 10))):
        new, cached = np.array(new), np.array(list(cached))
        assert model.step(new, cached) == pytest.approx(step_seconds(dep, new, cached), rel=1e-12)
    cached = np.arange(100, 740, 10)
    ones = np.ones(cached.size, dtype=np.int64)
    general = [step_seconds(dep, ones, cached + j) for j in range(5)]
    assert model.decode_steps(cached, int((cached + 1).sum()), 5) == pytest.approx(general, rel=1e-12)
    one = deploy(gpu="a10", max_model_len=4096).with_levers(lora=Lora(adapters=1))
    # one adapter: a step of 64 sequences reads it once, as a step of 1 does (not 64 times)
    assert StepModel(one).step(ones, cached) == pytest.approx(step_seconds(one, ones, cached), rel=1e-12)
