"""The simulator on a data-parallel attention layout (dp > 1): one rank with 1/dp of the traffic, each
step the busiest rank's work as the static model times it, the replica's throughput dp x the rank's."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from core.serving.rank_step import rank_step_seconds
from core.serving.simulate import simulate
from core.serving.traffic import Lengths, Traffic
from core.spec.catalog import load_catalog
from core.spec.engine import Parallelism
from core.timing.phases import phase_time
from core.validation.dataset import load_rows, predict


@pytest.fixture(scope="module")
def v3_dp8(deploy):
    """DeepSeek-V3 on 8 H200s as tp 1 x dp 8."""
    return dataclasses.replace(deploy(model="deepseek-v3", gpu="h200"), parallel=Parallelism(tp=1, dp=8))


@pytest.mark.parametrize(("per_rank", "new", "context"), [(4, 1, 1000), (16, 1, 3000), (2, 512, 0), (1, 256, 700)])
def test_a_rank_step_is_the_static_models_step_of_the_replica(v3_dp8, per_rank, new, context):
    """dp ranks of ``per_rank`` like sequences step as long as phase_time's step of dp x per_rank
    sequences: the simulator and ``estimate`` time a dp layout alike."""
    simulated = rank_step_seconds(v3_dp8, np.full(per_rank, new), np.full(per_rank, context))
    static = float(phase_time(v3_dp8, 8 * per_rank, new, context, 1).seconds)
    assert simulated == pytest.approx(static, rel=1e-9)


def test_a_dp_run_simulates_one_rank_and_reports_the_replicas_throughput(v3_dp8):
    result = simulate(v3_dp8, Traffic(mode="concurrency", concurrency=64), 160, Lengths(mean=500), Lengths(mean=40))
    assert len(result.arrival) == 20  # the rank's share of the requests
    assert result.series_running.max() <= 8  # and of the clients
    assert result.ranks == 8
    rank_tokens_per_s = float(result.answer.sum() / result.duration_s)
    assert result.output_tokens_per_s == pytest.approx(8 * rank_tokens_per_s, rel=1e-12)
    assert result.request_throughput_per_s == pytest.approx(8 * 20 / result.duration_s, rel=1e-12)


def test_a_dp_validation_row_is_predicted():
    row = next(r for r in load_rows() if r.id == "gpustack-8xh200-dsv32-sglang0562-dp8-rand2k-100")
    predicted = predict(row, load_catalog())
    assert set(predicted) >= {"ttft_ms", "tpot_ms", "output_tokens_per_s"}
    assert all(np.isfinite(v) and v > 0 for v in predicted.values())
