"""Fetching a repo's config.json from the Hub (core/spec/hub.py), against a local stand-in Hub
reached through HF_ENDPOINT: no test touches the network."""

from __future__ import annotations

import json
from pathlib import Path

import huggingface_hub.constants
import pytest

from core.spec.catalog import resolve
from core.spec.hub import HubError, fetch_config, fetch_model, looks_like_repo_id
from core.spec.params import parameter_counts
from tests.hub_server import HubStandIn, safetensors_header

TINY = json.loads((Path(__file__).parent / "data" / "tiny_llama_config.json").read_text())


@pytest.fixture
def hub(monkeypatch, tmp_path):
    h, layers, vocab = TINY["hidden_size"], TINY["num_hidden_layers"], TINY["vocab_size"]
    # two shards: the embedding and layers in one, the LM head (and one FP32 norm) in the other
    shard_1 = safetensors_header({"embed": ("BF16", [vocab, h]), "layers": ("BF16", [layers, 7, h, h])})
    shard_2 = safetensors_header({"lm_head": ("BF16", [vocab, h]), "norm": ("F32", [h])})
    index = {
        "metadata": {"total_size": 0},
        "weight_map": {
            "embed": "a.safetensors",
            "layers": "a.safetensors",
            "lm_head": "b.safetensors",
            "norm": "b.safetensors",
        },
    }
    packed = safetensors_header({"qweight": ("I32", [h, h // 8]), "scales": ("F16", [h // 128, h])})
    server = HubStandIn(
        {"acme/Tiny-Llama-Instruct": TINY, "acme/Gated-Llama": TINY, "acme/Tiny-AWQ": TINY, "acme/No-Weights": TINY},
        gated={"acme/Gated-Llama": "hf_secret"},
        files={
            "acme/Tiny-Llama-Instruct": {
                "model.safetensors.index.json": json.dumps(index).encode(),
                "a.safetensors": shard_1,
                "b.safetensors": shard_2,
            },
            "acme/Tiny-AWQ": {"model.safetensors": packed},
        },
    )
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)  # tests/conftest.py sets it
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    yield server
    server.close()


def test_a_repo_outside_the_catalog_is_fetched_through_the_mirror(hub, catalog):
    config = fetch_config("acme/Tiny-Llama-Instruct")
    assert config["num_hidden_layers"] == TINY["num_hidden_layers"]
    assert all(path.startswith("/acme/Tiny-Llama-Instruct/resolve/") for _, path, _ in hub.seen)
    match = resolve("acme/Tiny-Llama-Instruct", catalog, online=True)
    assert match.how == "hub" and match.served_name == "acme/Tiny-Llama-Instruct"
    assert match.model.hidden_size == TINY["hidden_size"]


def test_a_gated_repo_needs_hf_token_and_gets_it(hub, monkeypatch):
    with pytest.raises(HubError, match=r"gated .* set HF_TOKEN"):
        fetch_config("acme/Gated-Llama")
    monkeypatch.setenv("HF_TOKEN", "hf_secret")
    assert fetch_config("acme/Gated-Llama")["hidden_size"] == TINY["hidden_size"]
    assert ("HEAD", "/acme/Gated-Llama/resolve/main/config.json", "Bearer hf_secret") in hub.seen


def test_missing_repos_and_files_are_said_with_the_offline_path(hub):
    with pytest.raises(HubError, match=r"has no repo acme/nothing-here .* paste or upload its config.json"):
        fetch_config("acme/nothing-here")


def test_a_fetched_config_is_cached_and_resolves_offline(hub, monkeypatch):
    fetch_config("acme/Tiny-Llama-Instruct")
    hub.close()
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    assert fetch_config("acme/Tiny-Llama-Instruct")["hidden_size"] == TINY["hidden_size"]


def test_offline_or_unreachable_is_a_clear_message_never_a_traceback(monkeypatch, cli):
    with pytest.raises(HubError, match=r"not reachable .* paste or upload"):
        fetch_config("acme/Never-Fetched")  # tests run with HF_HUB_OFFLINE=1
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens there
    with pytest.raises(HubError, match=r"could not fetch acme/Never-Fetched from http://127\.0\.0\.1:9"):
        fetch_config("acme/Never-Fetched")
    code, out, err = cli("estimate", "--model", "acme/Never-Fetched", "--gpu", "a10")
    assert code == 2 and out == "" and err.count("\n") == 1 and "paste or upload its config.json" in err


def test_the_cli_uses_the_fetched_config_and_serves_the_repo(hub, cli):
    code, out, err = cli("check", "--model", "acme/Tiny-Llama-Instruct", "--gpu", "l4", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["model_match"]["matched_by"] == "hub"
    assert data["launch"]["command"].startswith("vllm serve acme/Tiny-Llama-Instruct ")


def test_only_repo_ids_go_to_the_hub(tmp_path):
    assert looks_like_repo_id("Qwen/Qwen3-8B") and looks_like_repo_id("acme/x.y-1_2")
    assert not looks_like_repo_id("llama 8b") and not looks_like_repo_id("./config.json")
    assert not looks_like_repo_id("a/b/c") and not looks_like_repo_id("/etc/passwd")
    with pytest.raises(HubError, match=r"not a Hugging Face repo id"):
        fetch_config("../../etc/passwd")


def test_safetensors_headers_give_the_exact_parameter_count(hub):
    model = fetch_model("acme/Tiny-Llama-Instruct")
    h, layers, vocab = TINY["hidden_size"], TINY["num_hidden_layers"], TINY["vocab_size"]
    expected = 2 * vocab * h + layers * 7 * h * h + h
    assert model.params_total_published == expected
    assert f"BF16 {2 * vocab * h + layers * 7 * h * h:,}" in model.notes and f"F32 {h:,}" in model.notes
    assert parameter_counts(model).total > 0  # the architecture still comes from config.json
    ranges = [path for method, path, _ in hub.seen if method == "GET" and path.endswith(".safetensors")]
    assert sorted(set(ranges)) == [
        "/acme/Tiny-Llama-Instruct/resolve/main/a.safetensors",
        "/acme/Tiny-Llama-Instruct/resolve/main/b.safetensors",
    ]


def test_packed_or_missing_safetensors_leave_the_count_unpublished(hub):
    awq = fetch_model("acme/Tiny-AWQ")  # I32 packs eight 4-bit weights: its element count is not a count
    assert awq.params_total_published is None and "I32" in awq.notes
    bare = fetch_model("acme/No-Weights")
    assert bare.params_total_published is None and bare.notes == ""
