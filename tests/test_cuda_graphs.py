"""CUDA-graph capture sizes by release, the padded rows of a decode step, and the launches of a step
run without graphs (issue 30, step terms; core/timing/step_fixed.py)."""

from __future__ import annotations

import numpy as np
import pytest

from core.serving.step_cost import StepModel
from core.spec.engine_defaults import cuda_graph_sizes
from core.spec.release import parse_release
from core.timing.roofline import Roofline, work_time
from core.timing.step_fixed import Graphs


def sizes(catalog, version, gpu="h100-sxm", max_num_seqs=1024, budget=8192, engine="vllm"):
    return cuda_graph_sizes(parse_release(engine, version), max_num_seqs, budget, catalog.gpu(gpu), 1)


def test_capture_sizes_follow_the_release(catalog):
    # 0.11.0: 1, 2, 4 and multiples of 8 up to min(2 x max_num_seqs, 512) (config/__init__.py:551-613)
    assert sizes(catalog, "0.11.0") == (1, 2, 4, *range(8, 513, 8))
    # from 0.11.1: multiples of 8 below 256, then of 16 (config/vllm.py:862-887 in 0.11.1, :1074 in 0.12.0)
    assert sizes(catalog, "0.33.0") == (1, 2, 4, *range(8, 256, 8), *range(256, 513, 16))
    assert sizes(catalog, "0.11.1") == sizes(catalog, "0.33.0")
    # 1024 on data-centre Blackwell from 0.28.0 (is_device_capability_family(100)); 512 in 0.27.0
    assert sizes(catalog, "0.33.0", gpu="b200")[-1] == 1024 and sizes(catalog, "0.27.0", gpu="b200")[-1] == 512
    # the ceiling is 2 x max_num_seqs, and no more than max_num_batched_tokens
    assert sizes(catalog, "0.33.0", max_num_seqs=64)[-1] == 128
    assert sizes(catalog, "0.19.0", budget=196)[-1] == 192
    # and the budget itself is captured when it is the ceiling (config/vllm.py:2592-2597 in 0.33.0; not in 0.19.0)
    assert sizes(catalog, "0.33.0", budget=196)[-2:] == (192, 196)
    # V0, TensorRT-LLM: not modelled; SGLang 0.5.3+: up to cuda_graph_max_bs (256 on an 80 GB GPU at tp 1)
    assert sizes(catalog, "0.6.3") == () and sizes(catalog, "1.2.0", engine="trtllm") == ()
    assert sizes(catalog, "0.5.6", engine="sglang")[-1] == 256


def decode_work(dep, model, n, context):
    """work_time's keywords for one simulated decode step of ``n`` sequences on ``context`` pairs."""
    weights, expert_weights, comm = model._token_terms(float(n))
    return dict(
        linear=model.per_token * n + model.per_sequence * n,
        attention=context * model.per_pair,
        weights=weights,
        expert_weights=expert_weights,
        expert_linear=model.per_expert_token * n,
        kv_per_gpu=context * model.kv_per_token,
        tokens=float(n),
        steps=1.0,
        sequence_steps=n,
        comm_s=comm,
    )


def test_a_decode_step_computes_the_rows_of_its_graph(deploy):
    # 257 sequences run the graph of 272 (0.33.0): the dense GEMMs compute 272 rows, nothing else grows
    dep = deploy(model="qwen3-14b", max_model_len=4096)
    model = StepModel(dep)
    work = decode_work(dep, model, 257, 257 * 300.0)
    plain, padded = work_time(dep, **work), work_time(dep, graphs=True, **work)
    attention, experts = float(plain.attention_flops), float(plain.expert_flops)
    assert (float(padded.flops) - attention - experts) == pytest.approx(
        (float(plain.flops) - attention - experts) * 272 / 257
    )
    assert float(padded.kv_bytes) == float(plain.kv_bytes) and float(padded.comm_s) == float(plain.comm_s)
    assert float(padded.seconds) > float(plain.seconds)  # compute-bound GEMMs at this batch
    # a batch that is a capture size is not padded
    exact = decode_work(dep, model, 256, 256 * 300.0)
    assert float(work_time(dep, graphs=True, **exact).flops) == float(work_time(dep, **exact).flops)


def test_the_simulators_decode_run_is_work_time_with_graphs_bit_for_bit(deploy):
    # 5 sequences run the graph of 8: the fast path pads as work_time does
    dep = deploy(max_model_len=4096)
    model = StepModel(dep)
    cached = np.array([900, 1200, 37, 4000, 12])
    n, context = cached.size, int(cached.sum()) + cached.size
    pairs = context + n * np.arange(20.0)
    phase = work_time(
        dep, graphs=True, **{**decode_work(dep, model, n, pairs), "kv_per_gpu": pairs * model.kv_per_token}
    )
    np.testing.assert_array_equal(model.decode_steps(cached, context, 20), phase.seconds)


def test_a_step_above_the_largest_graph_takes_at_least_its_launches(deploy):
    # Qwen2.5-0.5B, 24 layers: 600 decodes leave the graphs (ceiling 512); the host launches every layer
    # (50 us each by default: 1.2 ms); at 100 us a layer, 2.4 ms, longer than the GPU needs for the kernels
    dep = deploy(model="qwen2.5-0.5b", max_model_len=4096)
    graphs = Graphs(dep)
    assert graphs.largest == 512 and graphs.eager_floor(512, 1.0) == 0.0
    assert graphs.eager_floor(600, 1.0) == pytest.approx(24 * 50e-6)
    slow = dep.with_efficiency(eager_layer_launch_s=100e-6)
    model = StepModel(slow)
    work = decode_work(slow, model, 600, 600 * 100.0)
    assert float(work_time(slow, **work).kernel_seconds) < 24 * 100e-6
    assert float(work_time(slow, graphs=True, **work).kernel_seconds) == pytest.approx(24 * 100e-6)
    below = decode_work(slow, model, 512, 512 * 100.0)
    assert float(work_time(slow, graphs=True, **below).kernel_seconds) < 24 * 100e-6
    # a 7B+ model's kernels at 600 sequences run far longer than their launches: no change
    big = deploy(model="qwen3-14b", max_model_len=4096)
    work = decode_work(big, StepModel(big), 600, 600 * 300.0)
    assert float(Roofline(big, graphs=True)(**work).kernel_seconds) == float(Roofline(big)(**work).kernel_seconds)
