"""Capture sizes by vLLM release and the candidate graph-memory rule (core/memory/graphs.py)."""

from __future__ import annotations

import pytest

from core.memory.graphs import GRAPH_FIT, graph_bytes, layer_graphs
from core.spec import units
from core.spec.catalog import load_catalog
from core.spec.engine_defaults import cuda_graph_sizes
from core.spec.release import parse_release

V0110, V0111, V033 = (parse_release("vllm", v) for v in ("0.11.0", "0.11.1", "0.33.0"))
H100 = load_catalog().gpu("h100-sxm")


def capture_sizes(release, max_num_seqs, max_num_batched_tokens):
    """The engine's capture list on an H100 (one rule: core.spec.engine_defaults.cuda_graph_sizes)."""
    return cuda_graph_sizes(release, max_num_seqs, max_num_batched_tokens, H100, 1)


def test_0_11_0_steps_by_8_up_to_twice_max_num_seqs():
    # vllm/config/__init__.py:589-606 in 0.11.0: [1, 2, 4] + range(8, min(2 x 256, 512) + 1, 8)
    sizes = capture_sizes(V0110, 256, 8192)
    assert sizes[:5] == (1, 2, 4, 8, 16) and sizes[-1] == 512 and len(sizes) == 3 + 64


def test_from_0_11_1_steps_by_16_from_256():
    # config/vllm.py in 0.11.1-0.33: 8-248 by 8, 256-512 by 16 -> 3 + 31 + 17 = 51 graphs
    assert len(capture_sizes(V0111, 256, 8192)) == len(capture_sizes(V033, 256, 8192)) == 51
    assert capture_sizes(V033, 256, 8192)[-3:] == (480, 496, 512)


def test_capture_sizes_stop_at_the_token_budget():
    assert capture_sizes(V0110, 256, 100)[-1] == 96  # filtered by max_num_batched_tokens
    assert capture_sizes(V033, 256, 100)[-1] == 100  # capped, and the cap itself captured
    assert capture_sizes(V033, 2, 8192) == (1, 2, 4)  # max = 2 x max_num_seqs


def test_graph_bytes_is_the_fitted_line(deploy):
    dep = deploy("llama-3.1-8b", "l4", release=V0110, max_num_seqs=128, max_num_batched_tokens=2048)
    x = layer_graphs(dep)
    assert x == pytest.approx(32 * len(capture_sizes(V0110, *reversed(dep.batch_limits))) / 1000)
    assert graph_bytes(dep) == pytest.approx((GRAPH_FIT[0] + GRAPH_FIT[1] * x) * units.GiB)
    # the 0.11.0 L4 log (data/validation demoenvl4-l4-llama31-8b-v0110) says 0.38 GiB; the line gives 0.42
    assert graph_bytes(dep) / units.GiB == pytest.approx(0.38, abs=0.06)
