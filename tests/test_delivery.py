"""The API server as a queue beside the engine (issue 30 item 5): it delays what the client sees, it
does not slow the engine's steps (core/serving/delivery.py)."""

from __future__ import annotations

import numpy as np
import pytest

from core.serving.delivery import FrontEnd
from core.serving.simulate import simulate
from core.serving.traffic import Lengths, Traffic
from core.spec import units


def test_a_step_reaches_the_clients_after_the_front_end_streams_it():
    front = FrontEnd(60 * units.US)
    # 100 tokens at 60 us: the last leaves 6 ms after the step, on average 3.03 ms
    assert front.step(1.0, 100) == pytest.approx(1.0 + 101 / 2 * 60e-6)
    assert front.free == pytest.approx(1.006)
    # the next step ends before the front end is free: its tokens wait behind the first step's
    assert front.step(1.002, 100) == pytest.approx(1.006 + 101 / 2 * 60e-6)
    assert front.step(2.0, 0) == 2.0  # a step that streams nothing
    assert FrontEnd(0.0).step(3.0, 500) == 3.0  # in-process: no front end


def test_a_run_of_steps_is_its_steps_one_by_one():
    ends = np.array([1.0, 1.004, 1.008, 1.05, 1.051])
    one = FrontEnd(60 * units.US)
    stepped = [one.step(t, 100) for t in ends]
    run = FrontEnd(60 * units.US)
    np.testing.assert_allclose(run.run(ends, 100), stepped, rtol=0, atol=1e-12)
    assert run.free == pytest.approx(one.free) and run.last == pytest.approx(one.last)


def lengths():
    return Lengths(mean=300), Lengths(mean=300)


def test_the_front_end_delays_delivery_not_the_engine(deploy):
    # Qwen2.5-1.5B on an H100, 1000 requests at once: the engine's steps (about 18 ms) are shorter than the
    # front end's 1000 x 60 us; the clients see a token every ~60 ms, and the engine is not slowed
    dep = deploy(model="qwen2.5-1.5b", max_model_len=4096)
    slow, alone = (dep.with_efficiency(frontend_per_token_s=f) for f in (60 * units.US, 0.0))
    burst = Traffic(mode="concurrency", concurrency=1000)
    seen, engine = (simulate(d, burst, 1000, *lengths(), seed=0) for d in (slow, alone))
    assert seen.steps == engine.steps  # the same engine steps
    assert np.median(seen.tpot) == pytest.approx(1000 * 60e-6, rel=0.05)
    assert np.median(engine.tpot) < 0.5 * np.median(seen.tpot)
    assert seen.output_tokens_per_s == pytest.approx(1 / 60e-6, rel=0.1)  # the front end's ceiling


def test_below_its_ceiling_the_front_end_adds_its_queue_to_ttft_only(deploy):
    # Llama-3.1-8B on an H100 at 40 requests/s of 300 tokens: the front end streams 12,000 of its 16,667
    # tokens/s; each token reaches its client a fraction of a step late (TTFT up), at the engine's pace (TPOT)
    dep = deploy(max_model_len=4096)
    slow, alone = (dep.with_efficiency(frontend_per_token_s=f) for f in (60 * units.US, 0.0))
    rate = Traffic(mode="rate", rate_per_s=40)
    seen, engine = (simulate(d, rate, 2000, *lengths(), seed=0) for d in (slow, alone))
    assert np.median(seen.tpot) == pytest.approx(np.median(engine.tpot), rel=0.02)
    assert np.median(seen.ttft) > np.median(engine.ttft) + 5e-3
