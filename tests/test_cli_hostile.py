"""Hostile CLI input: each refused with exit 2 and one line naming the field, never a traceback."""

from __future__ import annotations

import json

import pytest

from core.levers.prefix import prefix_error
from core.levers.settings import PrefixCaching
from core.spec.engine import EngineConfig
from core.spec.release import parse_release


def test_a_config_nested_thousands_deep_is_one_line_not_a_recursion_error(cli, tmp_path):
    deep = tmp_path / "config.json"
    deep.write_text('{"a":' * 5000 + "1" + "}" * 5000)
    code, out, err = cli("estimate", "--model", str(deep), "--gpu", "h100-sxm")
    assert code == 2 and out == ""
    assert err.strip() == "error: config.json: nested deeper than 32 levels"
    # 33 levels is refused by the depth check (json itself parses it); 6 levels, like a real
    # compressed-tensors quantization_config, is not a nesting problem
    (tmp_path / "c33.json").write_text('{"a":' * 33 + "1" + "}" * 33)
    assert "nested deeper" in cli("estimate", "--model", str(tmp_path / "c33.json"), "--gpu", "h100-sxm")[2]
    (tmp_path / "c6.json").write_text(json.dumps({"model_type": "llama", "q": {"a": {"b": {"c": {"d": 1}}}}}))
    assert "nested deeper" not in cli("estimate", "--model", str(tmp_path / "c6.json"), "--gpu", "h100-sxm")[2]


@pytest.mark.parametrize("size", [2, 7, 48, 512])
def test_a_block_size_vllm_refuses_is_refused(cli, size):
    code, _, err = cli("estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--block-size", str(size))
    assert code == 2
    assert err.strip() == f"error: block_size {size} is not one vLLM accepts (1, 8, 16, 32, 64, 128, 256)"


def test_block_sizes_follow_the_engine():
    vllm, sglang = parse_release("vllm", None), parse_release("sglang", None)
    for size in (1, 8, 16, 256):
        assert EngineConfig(release=vllm, block_size=size).block_size == size
    # SGLang's page_size takes any size in range (page_size 1 is its default)
    assert EngineConfig(release=sglang, block_size=7).block_size == 7
    with pytest.raises(ValueError, match="from 1 to 1024"):
        EngineConfig(release=sglang, block_size=2048)


def test_a_shared_prefix_longer_than_the_prompt_is_refused_not_clamped(cli):
    code, _, err = cli(
        "estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--input-len", "100", "--prefix-cache-tokens", "500"
    )
    assert code == 2
    assert err.strip() == (
        "error: --prefix-cache-tokens: the shared prefix (500 tokens) is longer than the prompt (100 tokens): "
        "it is the start of every prompt"
    )
    assert prefix_error(PrefixCaching(shared_tokens=100), 100) is None  # the whole prompt shared is allowed
    code, out, _ = cli(
        "estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--input-len", "100", "--prefix-cache-tokens", "64"
    )
    assert code == 0 and "prefix_caching: shared_tokens 64" in out


def test_goodput_without_an_slo_says_so(cli):
    base = ("simulate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--num-requests", "50", "--concurrency", "4")
    # the Load test page's SLOs by default (1 s, 50 ms), so goodput is a share; 0 turns each off
    assert json.loads(cli(*base, "--json")[1])["goodput"] == 1.0
    args = (*base, "--ttft-slo-ms", "0", "--tpot-slo-ms", "0")
    code, out, _ = cli(*args)
    assert code == 0 and "goodput: no SLO set" in out and "goodput 100" not in out
    assert json.loads(cli(*args, "--json")[1])["goodput"] is None
    # with an SLO no request can meet (1 ms to the first token) the share is a number: 0
    assert json.loads(cli(*base, "--json", "--ttft-slo-ms", "1")[1])["goodput"] == 0.0
