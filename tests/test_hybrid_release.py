"""A hybrid's block, state pages and logged KV tokens as each vLLM release works them out.

Sources (read in the release sdists): vLLM 0.33.0 ``update_kv_cache_capacity`` logs
int(concurrency x max_model_len) (v1/core/kv_cache_utils.py:1061-1150; 0.20.1 first, 0.20.0 and 0.11.0
:1080 log num_blocks // groups x block); with prefix caching on for hybrids (0.26+) a state group
reserves 2 + checkpoint pages per request (v1/kv_cache_interface.py:1135-1141); on SM90 the Gated
DeltaNet prefill runs on FlashInfer (qwen_gdn_linear_attn.py:249, 690-696) whose checkpoints sit on
64-token chunks (v1/attention/backends/gdn_attn.py:34), so the block is a multiple of 64
(platforms/interface.py:1089-1100).
"""

from __future__ import annotations

import math

import pytest

from core.memory.budget import gpu_memory
from core.memory.capacity import kv_capacity
from core.memory.state import kv_block_size, state_pages_per_request
from core.spec.release import parse_release


def _next(deploy, version, gpu="h100-sxm", tp=4):
    return deploy("qwen3-next-80b-a3b", gpu, tp=tp, max_model_len=32768, release=parse_release("vllm", version))


def test_qwen3_next_4xh100_logged_like_vllm_033(deploy):
    """The domain review's worked case (2026-12 review §3.2): 0.33 logs ~2.49 M tokens and 76.1x,
    where the 0.11-0.20.0 accounting gives 681,632 tokens and 80.9x."""
    dep = _next(deploy, "0.33.0")
    cap = kv_capacity(dep, gpu_memory(dep).kv_budget, 4096)
    assert cap.block_size == 320 == kv_block_size(dep)  # 64 x ceil(274,432 B state / (64 x 1,024 B))
    assert state_pages_per_request(dep) == 3  # 'align': 2 pages + 1 prefill checkpoint
    pool = math.floor(gpu_memory(dep).kv_budget / (320 * 12 * 1024))  # groups of 12 layers
    assert pool == 8522
    reserved = math.ceil(32768 / 320) + 3 * 3  # 103 full-attention blocks + 3 state groups x 3 pages
    assert cap.max_concurrency_at_max_model_len == pytest.approx(pool / reserved) == pytest.approx(76.1, abs=0.05)
    assert cap.capacity_tokens == int(pool / reserved * 32768) == pytest.approx(2.49e6, rel=0.005)


def test_before_0_20_1_the_log_counts_blocks_of_a_group(deploy):
    dep = _next(deploy, "0.19.0")
    cap = kv_capacity(dep, gpu_memory(dep).kv_budget, 4096)
    assert cap.block_size == 272 and state_pages_per_request(dep) == 1  # 16 x 17; no prefix caching
    pool = math.floor(gpu_memory(dep).kv_budget / (272 * 12 * 1024))
    assert cap.capacity_tokens == pool // 4 * 272  # 4 groups: 1 attention + 3 state
    assert cap.max_concurrency_at_max_model_len == pytest.approx(pool / (math.ceil(32768 / 272) + 3))


@pytest.mark.parametrize(
    ("version", "gpu", "pages", "block"),
    [
        ("0.25.1", "h100-sxm", 1, 272),  # prefix caching off for hybrids
        ("0.26.0", "h100-sxm", 2, 272),  # on: 'align' keeps 2 pages
        ("0.32.0", "h100-sxm", 2, 272),  # no checkpoint page yet
        ("0.33.0", "a100-80gb", 2, 272),  # Triton GDN prefill off SM90: no checkpoint, 16-token alignment
    ],
)
def test_state_pages_and_block_by_release(deploy, version, gpu, pages, block):
    dep = _next(deploy, version, gpu=gpu)
    assert (state_pages_per_request(dep), kv_block_size(dep)) == (pages, block)


def test_mamba2_hybrids_go_to_align_from_0_30(deploy):
    """0.26-0.29 put Mamba2 models in 'all' mode (not modelled: one page); 0.30 'align'; 0.33 adds the
    Mamba2 layer's checkpoint page on any GPU (mamba_mixer2.py:1109-1117)."""
    pages = {
        v: state_pages_per_request(deploy("nemotron-h-56b", "a100-80gb", tp=2, release=parse_release("vllm", v)))
        for v in ("0.26.0", "0.30.0", "0.33.0")
    }
    assert pages == {"0.26.0": 1, "0.30.0": 2, "0.33.0": 3}


def test_a_plain_model_logs_the_same_tokens_either_way(deploy):
    """Full attention at a max_model_len that is a whole number of blocks: both rules agree."""
    old = deploy("llama-3.1-8b", "h100-sxm", max_model_len=8192, release=parse_release("vllm", "0.19.0"))
    new = deploy("llama-3.1-8b", "h100-sxm", max_model_len=8192, release=parse_release("vllm", "0.33.0"))
    budget = 50 * 2**30
    assert kv_capacity(old, budget, 1024).capacity_tokens == kv_capacity(new, budget, 1024).capacity_tokens


def test_the_simulator_holds_the_state_pages_the_release_reserves(deploy):
    """A running request in the simulator holds the state pages vLLM reserves for it: 3 per state group
    at 0.33 on an H100 (prefix caching's 'align' + a checkpoint), 1 at 0.19, as capacity counts them."""
    import numpy as np

    from core.memory.request_kv import request_state_bytes
    from core.serving.step_cost import Blocks

    held = {}
    for version, pages in (("0.19.0", 1), ("0.33.0", 3)):
        dep = _next(deploy, version)
        blocks = Blocks(dep)
        assert blocks.state == pytest.approx(pages * request_state_bytes(dep))
        held[version] = float(blocks(np.array([1]))[0]) * blocks.block_bytes - blocks.state  # the KV part
        assert 0 < held[version] <= blocks.block_bytes
