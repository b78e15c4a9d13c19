"""Hostile CLI input: each refused with exit 2 and one line naming the field, never a traceback."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.levers.prefix import prefix_error
from core.levers.settings import PrefixCaching
from core.spec.engine import EngineConfig
from core.spec.release import parse_release

ROOT = Path(__file__).resolve().parents[1]


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


# --- file arguments and names (audit F8) ----------------------------------------------------------


def test_a_model_name_of_256_characters_is_one_line_not_a_file_name_error():
    # before: OSError: [Errno 36] File name too long, from Path.is_file() in core/spec/catalog.resolve
    command = [sys.executable, "-m", "core", "estimate", "--gpu", "a10", "--model", "M" * 256]
    answer = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert answer.returncode == 2 and "Traceback" not in answer.stderr and answer.stderr.count("\n") == 1
    assert answer.stderr.startswith("error: unknown model 'MMM")


@pytest.fixture
def odd_paths(tmp_path):
    (tmp_path / "folder.json").mkdir()
    os.mkfifo(tmp_path / "pipe.json")
    (tmp_path / "pipe.csv").symlink_to(tmp_path / "pipe.json")
    (tmp_path / "wide.csv").write_text("1," + "9" * 200_000 + "\n")
    return tmp_path


@pytest.mark.parametrize(
    ("flag", "path", "message"),
    [
        ("--model", "{tmp}/" + "M" * 300 + ".json", "error: config.json: file name too long: "),
        ("--model", "{tmp}/folder.json", "error: config.json: {tmp}/folder.json is a directory, not a file"),
        ("--model", "{tmp}/pipe.json", "error: config.json: {tmp}/pipe.json is not a regular file (a device, pipe"),
        ("--model", "{tmp}/a\x00b.json", "error: config.json: the path {tmp}/a\\x00b.json holds a NUL character"),
        ("--model", "{tmp}/nothing.json", "error: config.json: no such file: {tmp}/nothing.json"),
        ("--draft-model", "{tmp}/" + "D" * 300 + ".json", "error: config.json: file name too long: "),
        ("--lengths-csv", "/dev/zero", "error: --lengths-csv: /dev/zero is not a regular file (a device, pipe"),
        ("--lengths-csv", "/dev/urandom", "error: --lengths-csv: /dev/urandom is not a regular file"),
        ("--lengths-csv", "{tmp}/pipe.csv", "error: --lengths-csv: {tmp}/pipe.csv is not a regular file"),
        ("--lengths-csv", "{tmp}", "error: --lengths-csv: {tmp} is a directory, not a file"),
        ("--lengths-csv", "{tmp}/" + "L" * 300, "error: --lengths-csv: file name too long: "),
        ("--lengths-csv", "{tmp}/wide.csv", "error: CSV line 1: not a CSV of two columns (field larger than"),
    ],
)
def test_file_arguments_that_are_no_readable_file_are_one_line(cli, odd_paths, flag, path, message):
    # before: "no such file" for /dev/zero, a traceback for a long name, and open() on a FIFO waits forever
    tmp = str(odd_paths)
    base = ["--model", "llama-3.1-8b", "--gpu", "a10"]
    if flag == "--model":
        args = ["estimate", "--gpu", "a10", "--model", path.format(tmp=tmp)]
    elif flag == "--draft-model":
        args = ["estimate", *base, "--draft-model", path.format(tmp=tmp)]
    else:
        args = ["simulate", *base, "--request-rate", "1", "--num-requests", "5", "--lengths-csv", path.format(tmp=tmp)]
    code, out, err = cli(*args)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(message.format(tmp=tmp))


# --- values vLLM refuses at start-up (audit F12) ----------------------------------------------------


def test_a_lora_rank_vllm_has_no_kernel_for_is_refused_with_its_rule(cli):
    base = ("estimate", "--model", "llama-3.1-8b", "--gpu", "a10", "--max-loras", "2")
    code, out, err = cli(*base, "--max-lora-rank", "3")
    assert code == 2 and out == ""
    assert err.strip() == (
        "error: --max-lora-rank 3 is not one vLLM accepts (1, 8, 16, 32, 64, 128, 256, 320, 512: "
        "MaxLoRARanks in vllm/config/lora.py)"
    )
    assert cli(*base, "--max-lora-rank", "320")[0] == 0
    assert cli(*base, "--max-lora-rank", "3", "--engine", "sglang")[0] == 0  # vLLM's rule, not SGLang's


def test_a_token_budget_below_max_num_seqs_is_refused_as_vllm_refuses_it(cli):
    base = ("estimate", "--model", "llama-3.1-8b", "--gpu", "a10")
    code, out, err = cli(*base, "--max-num-batched-tokens", "1")
    assert code == 2 and out == ""
    assert err.strip() == (
        "error: --max-num-batched-tokens 1 is below max_num_seqs (256): vLLM refuses it (max_num_batched_tokens "
        "must be greater than or equal to max_num_seqs, vllm/config/scheduler.py); raise it or lower --max-num-seqs"
    )
    assert cli(*base, "--max-num-batched-tokens", "1", "--max-num-seqs", "1")[0] == 0
    assert cli(*base, "--max-num-batched-tokens", "256")[0] == 0  # A10: max_num_seqs 256 by default


def test_a_file_the_system_refuses_is_one_line(cli, monkeypatch, tmp_path):
    # as root every file reads, so the refusal is the system's answer stood in for
    path = tmp_path / "locked.json"
    path.write_text("{}")
    real_stat = os.stat

    def refused(target, *args, **kwargs):
        if str(target) == str(path):
            raise PermissionError(errno.EACCES, "Permission denied", str(target))
        return real_stat(target, *args, **kwargs)

    monkeypatch.setattr(os, "stat", refused)
    code, out, err = cli("estimate", "--gpu", "a10", "--model", str(path))
    assert code == 2 and out == "" and err == f"error: config.json: permission denied: {path}\n"


def test_a_seeded_simulation_prints_the_same_bytes_each_run(cli):
    """Audit F12: the text answer carried its compute time, so two runs of the same seed differed; it goes to stderr."""
    args = ("simulate", "--gpu", "a10", "--model", "qwen3-8b", "--seed", "7", "--num-requests", "100")
    runs = [cli(*args, "--request-rate", "2") for _ in range(2)]
    assert all(code == 0 for code, _, _ in runs)
    assert runs[0][1] == runs[1][1]
    assert "to compute" not in runs[0][1] and "to compute" in runs[0][2]
