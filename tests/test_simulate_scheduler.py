"""The simulated scheduler's release rules: vLLM V1 admits into every free block, V0 keeps a 1 % watermark."""

from __future__ import annotations

import numpy as np
import pytest

from core.serving.scheduler import Engine, watermark
from core.serving.step_cost import Blocks
from core.spec.release import parse_release


def _engine_with_one_free_block(dep) -> Engine:
    """An engine of 100 blocks, 99 of them held by others, and one waiting one-block prompt."""
    blocks = Blocks(dep)
    prompt = np.array([blocks.size], dtype=np.int64)
    engine = Engine(dep, prompt, np.array([10]), blocks, 100, np.zeros(1, dtype=np.int64), np.zeros(1))
    engine.used = 99.0
    engine.waiting.append(0)
    return engine


@pytest.mark.parametrize(("version", "admitted"), [("0.33.0", True), ("0.11.0", True), ("0.6.3", False)])
def test_v1_admits_into_the_last_percent_of_blocks_and_v0_does_not(deploy, version, admitted):
    dep = deploy(gpu="a10", max_model_len=4096, release=parse_release("vllm", version))
    engine = _engine_with_one_free_block(dep)
    chunks: list[tuple[int, int]] = []
    engine.admit(engine.token_budget, chunks)
    assert (engine.running == [0]) is admitted
    assert (chunks == [(0, engine.blocks.size)]) is admitted


def test_watermark_by_release(deploy):
    assert watermark(deploy(release=parse_release("vllm", "0.33.0"))) == 0.0
    assert watermark(deploy(release=parse_release("vllm", "0.7.3"))) == 0.01
    assert watermark(deploy(release=parse_release("sglang", "0.5.7"))) == 0.01
