"""The worked examples of the course chapters this tool teaches from, reproduced exactly.

The chapters (Chinese, kept with the project brief, not in this repository) work these by hand:
KV of one 1,024-token request of a 32-layer, 32-KV-head, head_dim-128 model in FP16 (0.5 GiB);
32 such requests of 4,096 tokens (64 GiB, 16 GiB with 8 KV heads); how many 0.5 GiB requests fit
the 50 GB an 80 GB card leaves after 16 GB of weights (about 100); Llama-2-7B at 2,048 tokens and
batch 8 (8 GiB). The chapters call the 32-KV-head model "Llama-3-8B"; the real one has 8 KV heads.
"""

from __future__ import annotations

import pytest

from core.memory.capacity import textbook_max_concurrency
from core.memory.kv import kv_bytes_per_sequence, kv_bytes_per_token
from core.spec import units
from core.spec.engine import Parallelism
from core.spec.model import ModelSpec
from core.spec.precision import KV_PRECISIONS

FP16 = KV_PRECISIONS["fp16"]


def chapter_model(kv_heads: int) -> ModelSpec:
    """The chapter's "Llama-3-8B": 32 layers, 32 heads, head_dim 128 (it assumes MHA)."""
    return ModelSpec(
        id=f"chapter-{kv_heads}kv",
        name="chapter example",
        num_layers=32,
        hidden_size=4096,
        ffn_size=14336,
        num_heads=32,
        num_kv_heads=kv_heads,
        head_dim=128,
        vocab_size=128256,
        max_context=8192,
    )


def test_kv_of_1024_tokens_is_half_a_gib():
    # 2 x 32 layers x 32 KV heads x 128 x 2 bytes x 1024 tokens = 536,870,912 B = 0.5 GiB
    kv = kv_bytes_per_sequence(chapter_model(32), FP16, Parallelism(), 1024)
    assert kv == 2 * 32 * 32 * 128 * 2 * 1024
    assert kv / units.GiB == pytest.approx(0.5)


def test_kv_of_32_requests_at_4096_tokens_mha_and_gqa():
    # MHA: 2 x 32 x 32 x 128 x 2 x 4096 x 32 = 64 GiB; with 8 KV heads a quarter of it, 16 GiB
    mha = 32 * kv_bytes_per_sequence(chapter_model(32), FP16, Parallelism(), 4096)
    gqa = 32 * kv_bytes_per_sequence(chapter_model(8), FP16, Parallelism(), 4096)
    assert mha / units.GiB == pytest.approx(64.0)
    assert gqa / units.GiB == pytest.approx(16.0)


def test_textbook_concurrency_on_an_80_gb_card():
    # 80 GB card, 16 GB weights, 50 GB left for KV, 0.5 GiB per 1024-token request: about 100.
    # The chapter's "GB" here is the GiB of its own script (it divides by 1024**3).
    per_request = kv_bytes_per_sequence(chapter_model(32), FP16, Parallelism(), 1024)
    assert textbook_max_concurrency(50 * units.GiB, per_request) == pytest.approx(100)


def test_llama2_7b_at_2048_tokens_batch_8_needs_8_gib(catalog):
    # Llama-2-7B is MHA (32 KV heads): 2 x 32 x 32 x 128 x 2 B = 512 KiB per token;
    # 2048 tokens x 8 requests x 512 KiB = 8 GiB
    model = catalog.model("llama-2-7b")
    per_seq = kv_bytes_per_sequence(model, FP16, Parallelism(), 2048)
    assert 8 * per_seq / units.GiB == pytest.approx(8.0)


def test_real_llama3_8b_uses_gqa_not_the_chapters_mha(catalog):
    # Real Llama-3-8B has 8 KV heads: 0.125 GiB per 1024 tokens, a quarter of the chapter's figure
    model = catalog.model("llama-3-8b")
    assert model.num_kv_heads == 8
    per_1024 = kv_bytes_per_sequence(model, FP16, Parallelism(), 1024)
    assert per_1024 / units.GiB == pytest.approx(0.125)
    mha_equivalent = kv_bytes_per_token(chapter_model(32), FP16, Parallelism()) * 1024
    assert mha_equivalent / per_1024 == pytest.approx(4.0)
