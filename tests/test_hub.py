"""Fetching a repo's config.json from the Hub (core/spec/hub.py), against a local stand-in Hub
reached through HF_ENDPOINT: no test touches the network. Hostile servers (audit F3, F5): an
oversized, unsized, trickling or silent answer is refused within the fetch's deadline, with nothing
left on disk."""

from __future__ import annotations

import hashlib
import json
import re
import time
from pathlib import Path

import huggingface_hub.constants
import pytest

from core.spec.catalog import resolve
from core.spec.hf_config import ConfigError
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
    point_at(server, monkeypatch, tmp_path)
    yield server
    server.close()


def point_at(server: HubStandIn, monkeypatch, tmp_path: Path) -> None:
    """The Hub is ``server``, online; huggingface_hub's home and cache are under ``tmp_path``."""
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)  # tests/conftest.py sets it
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("HF_TOKEN", raising=False)


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


def test_a_fetched_config_resolves_when_the_network_is_gone_without_offline_mode(hub, monkeypatch):
    # a room whose internet dropped after the fetch: the cached copy answers, not "could not fetch"
    fetch_config("acme/Tiny-Llama-Instruct")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens on the discard port
    assert fetch_config("acme/Tiny-Llama-Instruct")["hidden_size"] == TINY["hidden_size"]
    with pytest.raises(HubError, match="could not fetch acme/Never-Fetched"):
        fetch_config("acme/Never-Fetched")


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


# --- hostile servers (audit F3, F5) -------------------------------------------------------------

HOSTILE = {"evil/huge": "huge", "evil/unsized": "unsized", "evil/trickle": "trickle", "evil/silent": "silent"}
LONG_INTEGER = json.dumps(TINY)[:-1].encode() + b', "rope_scaling_seed": ' + b"9" * 5000 + b"}"  # audit F5
DEADLINE_S = 1.0  # the fetch's deadline in these tests (15 s in use)


@pytest.fixture
def evil(monkeypatch, tmp_path):
    server = HubStandIn(
        {**dict.fromkeys(HOSTILE, TINY), "evil/long-integer": LONG_INTEGER, "evil/slow-weights": TINY},
        hostile={f"{repo}/config.json": mode for repo, mode in HOSTILE.items()}
        | {"evil/slow-weights/model.safetensors": "trickle"},
        big=50_000_000,
        interval=0.2,
    )
    point_at(server, monkeypatch, tmp_path)
    yield server
    server.close()


def files_under(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*") if p.is_file() or p.is_symlink())


@pytest.mark.parametrize(
    ("repo", "message"),
    [
        (
            "evil/huge",
            "config.json on http://127.0.0.1:{port} is 50,000,000 bytes, over the 2,000,000 a config.json may have: "
            "refused before downloading, nothing kept",
        ),
        ("evil/unsized", "config.json on http://127.0.0.1:{port} ran past the 2,000,000 bytes a config.json may have"),
        ("evil/trickle", "could not fetch evil/trickle from http://127.0.0.1:{port} (no complete answer within 1 s)"),
        ("evil/silent", "could not fetch evil/silent from http://127.0.0.1:{port} (no complete answer within 1 s)"),
    ],
)
def test_an_oversized_or_slow_config_is_refused_within_the_deadline_and_nothing_is_kept(evil, tmp_path, repo, message):
    start = time.monotonic()
    with pytest.raises(HubError, match=re.escape(message.format(port=evil.url.rsplit(":", 1)[1]))) as refused:
        fetch_model(repo, deadline_s=DEADLINE_S)
    elapsed = time.monotonic() - start
    # before: the 60 MB file was downloaded into the cache and kept; a byte every 2 s held the fetch 198 s
    assert elapsed < 5 * DEADLINE_S, f"{repo}: refused after {elapsed:.1f} s"
    assert "\n" not in str(refused.value)
    assert files_under(tmp_path) == []
    if repo == "evil/huge":  # refused on the size it stated, before its body was asked for
        assert [m for m, path, _ in evil.seen if path.endswith("/config.json")] == ["HEAD"]
    if repo == "evil/unsized":  # the body was read up to the cap, not to its end
        assert evil.sent[f"/{repo}/resolve/main/config.json"] < evil.big / 2


def test_an_integer_of_thousands_of_digits_is_a_config_error_naming_the_field_and_is_not_kept(evil, tmp_path):
    with pytest.raises(
        ConfigError, match=r"^config.json: invalid field 'rope_scaling_seed': an integer of 5,000 digits"
    ):
        fetch_model("evil/long-integer", deadline_s=DEADLINE_S)  # before: a plain ValueError escaped the page
    assert files_under(tmp_path) == []


def test_slow_safetensors_headers_leave_the_count_unknown_within_the_same_deadline(evil, tmp_path):
    start = time.monotonic()
    model = fetch_model("evil/slow-weights", deadline_s=DEADLINE_S)
    assert time.monotonic() - start < 5 * DEADLINE_S
    assert model.params_total_published is None and model.hidden_size == TINY["hidden_size"]
    # the config was whole and valid, so it is kept (blob, snapshot pointer, ref) and nothing else
    blob = hashlib.sha256(json.dumps(TINY).encode()).hexdigest()
    assert sorted(p.name for p in files_under(tmp_path)) == sorted([blob, "config.json", "main"])


def test_the_ui_search_decides_repo_ids_from_the_text_alone(tmp_path, monkeypatch):
    """Nothing a visitor types may touch the server's files (audit F11): an existing path that has
    the shape of a repo id is still a repo id, and a path is never one."""
    (tmp_path / "acme").mkdir()
    (tmp_path / "acme" / "secrets").write_text("x")
    monkeypatch.chdir(tmp_path)
    touched = []
    monkeypatch.setattr(Path, "exists", lambda self, **kw: touched.append(self) or True)
    assert looks_like_repo_id("acme/secrets") and not looks_like_repo_id("acme/../secrets")
    assert not looks_like_repo_id("a/b..c") and not looks_like_repo_id("a--b/c") and not looks_like_repo_id("a/b.git")
    assert touched == []


def test_a_server_cannot_choose_where_the_cache_writes(monkeypatch, tmp_path):
    """The commit and the ETag a server sends become file names: only hexadecimal ones are used."""
    from core.spec.hub_cache import cached_file, store

    cache = tmp_path / "cache"
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    assert not store("acme/x", "config.json", b"{}", commit="../../../../outside", etag="0" * 40)
    assert files_under(tmp_path) == []
    assert store("acme/x", "config.json", b"{}", commit="a" * 40, etag='W/"../../../../outside"')
    blob = hashlib.sha256(b"{}").hexdigest()  # the ETag was not a hash: the blob is named by its bytes
    assert sorted(p.relative_to(cache).as_posix() for p in files_under(tmp_path)) == [
        f"models--acme--x/blobs/{blob}",
        "models--acme--x/refs/main",
        f"models--acme--x/snapshots/{'a' * 40}/config.json",
    ]
    assert cached_file("acme/x", "config.json").read_bytes() == b"{}"
