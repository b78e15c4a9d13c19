"""The CLI is a public interface: JSON keys, exit codes, one-line errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core.messages import duration
from core.spec import units

ROOT = Path(__file__).resolve().parents[1]


def test_estimate_json_has_the_documented_keys(cli):
    code, out, _ = cli(
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "h100-sxm",
        "--batch",
        "32",
        "--max-model-len",
        "8192",
        "--json",
    )
    assert code == 0
    data = json.loads(out)
    assert set(data["memory_per_gpu"]) >= {
        "capacity_gib",
        "weights_gib",
        "kv_cache_gib",
        "activations_gib",
        "overhead_gib",
        "free_gib",
    }
    assert set(data["kv"]) >= {
        "bytes_per_token",
        "budget_gib_per_gpu",
        "capacity_tokens",
        "max_concurrency_at_max_model_len",
        "max_concurrency_at_request_len",
        "max_concurrency_contiguous",
    }
    assert set(data["latency"]) >= {"ttft_ms", "tpot_ms", "e2e_ms"}
    assert set(data["throughput"]) >= {"output_tokens_per_s", "total_tokens_per_s"}
    assert data["bound"]["decode"] in ("memory", "compute")
    assert data["fits"] is True
    assert data["kv"]["bytes_per_token"] == 131072
    # kv_cache_gib is what 32 x (1024 + 256) tokens need: 40960 tokens x 128 KiB = 5 GiB
    assert data["memory_per_gpu"]["kv_cache_gib"] == pytest.approx(5.0)


def test_hf_id_is_case_insensitive_and_config_path_works(cli, tmp_path):
    code, out, _ = cli("estimate", "--model", "Qwen/QWEN3-8B", "--gpu", "l4", "--json")
    assert code == 0 and json.loads(out)["model"] == "qwen3-8b"
    config = tmp_path / "my-model" / "config.json"
    config.parent.mkdir()
    config.write_text((ROOT / "tests" / "data" / "tiny_llama_config.json").read_text())
    code, out, _ = cli("estimate", "--model", str(config), "--gpu", "t4", "--json")
    assert code == 0 and json.loads(out)["model"] == "my-model"


def test_not_fitting_is_an_answer(cli):
    code, out, _ = cli("estimate", "--model", "llama-3.1-70b", "--gpu", "a10", "--max-model-len", "4096", "--json")
    data = json.loads(out)
    assert code == 0
    assert data["fits"] is False
    assert data["kv"]["budget_gib_per_gpu"] < 0
    assert data["warnings"]


def test_tensor_parallel_round_trip(cli):
    code, out, _ = cli(
        "estimate",
        "--model",
        "llama-3.1-70b",
        "--gpu",
        "h100-sxm",
        "--num-gpus",
        "4",
        "--max-model-len",
        "8192",
        "--json",
    )
    data = json.loads(out)
    assert code == 0 and data["tp"] == 4 and data["num_gpus"] == 4
    # 70.55B params x 2 B / 4 GPUs = 32.9 GiB per GPU
    assert data["memory_per_gpu"]["weights_gib"] == pytest.approx(70.55e9 * 2 / 4 / 2**30, rel=0.01)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["estimate", "--model", "nope", "--gpu", "a10"], "unknown model 'nope'"),
        (["estimate", "--model", "llama-3.1-8b", "--gpu", "nope"], "unknown GPU 'nope'"),
        (["estimate", "--model", "llama-3.1-8b", "--gpu", "a10", "--weight-dtype", "int3"], "weight dtype"),
        (["estimate", "--model", "llama-3.1-8b", "--gpu", "a10", "--batch", "0"], "batch must be"),
        (["estimate", "--model", "llama-3.1-8b", "--gpu", "a10", "--tp", "3"], "tp (3) must divide"),
        (["estimate", "--model", "qwen2.5-7b", "--gpu", "a10", "--tp", "7"], "tp (7) and the 4 KV heads"),
        (
            ["estimate", "--model", "llama-3.1-8b", "--gpu", "a10", "--gpu-memory-utilization", "1.5"],
            "gpu_memory_utilization",
        ),
        (
            ["estimate", "--model", "llama-3.1-8b", "--gpu", "a10", "--max-model-len", "4096", "--input-len", "5000"],
            "exceeds max_model_len",
        ),
        (["estimate", "--model", "llama-3.1-8b", "--gpu", "a10", "--num-gpus", "2", "--tp", "4"], "must equal"),
        (["estimate", "--gpu", "a10"], "--model"),
        (["list", "cpus"], "invalid choice"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(cli, argv, message):
    code, out, err = cli(*argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("error: ")
    assert message in err


def test_list_json(cli):
    code, out, _ = cli("list", "gpus", "--json")
    gpus = json.loads(out)
    assert code == 0 and any(g["id"] == "a10" for g in gpus)
    code, out, _ = cli("list", "models", "--json")
    assert code == 0 and len(json.loads(out)) >= 30


def test_python_dash_m_core_runs():
    proc = subprocess.run(
        [sys.executable, "-m", "core", "estimate", "--model", "qwen3-0.6b", "--gpu", "t4"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "TTFT" in proc.stdout and "fits: yes" in proc.stdout


def test_estimate_takes_the_lever_flags(cli):
    code, out, _ = cli(
        "estimate", "--model", "llama-3.1-8b", "--gpu", "a10", "--max-model-len", "4096",
        "--draft-model", "llama-3.2-1b", "--num-speculative-tokens", "4", "--spec-acceptance", "0.7",
        "--prefix-cache-tokens", "1500", "--input-len", "2000", "--output-len", "300", "--json",
    )  # fmt: skip
    assert code == 0
    data = json.loads(out)
    spec, prefix = data["levers"]["speculative"], data["levers"]["prefix_caching"]
    assert spec["tokens_per_step"] == pytest.approx((1 - 0.7**5) / 0.3, abs=1e-3)
    assert spec["with"]["tpot_ms"] < 0.7 * spec["without"]["tpot_ms"]
    assert data["memory_per_gpu"]["proposer_gib"] == pytest.approx(2.30, abs=0.01)
    assert prefix["cached_tokens_per_request"] == 1488
    assert prefix["with"]["ttft_ms"] < 0.5 * prefix["without"]["ttft_ms"]


def test_offload_flag_makes_70b_int4_fit_a_24_gb_card_and_says_what_it_costs(cli):
    argv = (
        "estimate",
        "--model",
        "llama-3.1-70b",
        "--gpu",
        "rtx-4090",
        "--weight-dtype",
        "int4",
        "--max-model-len",
        "4096",
    )
    code, out, _ = cli(*argv)
    assert code == 0 and "fits: NO" in out
    code, out, _ = cli(*argv, "--cpu-offload-gb", "22")
    assert code == 0 and "fits: yes" in out
    assert "weights in host memory" in out and "PCIe 4.0 x16" in out and "does not make it fast" in out


def test_simulate_and_check_take_the_lever_flags(cli):
    code, out, _ = cli(
        "simulate", "--model", "llama-3.1-8b", "--gpu", "a10", "--request-rate", "0.2", "--num-requests", "40",
        "--input-len", "2000", "--output-len", "100", "--prefix-cache-tokens", "1500", "--json",
    )  # fmt: skip
    assert code == 0
    cached = json.loads(out)
    code, out, _ = cli(
        "simulate", "--model", "llama-3.1-8b", "--gpu", "a10", "--request-rate", "0.2", "--num-requests", "40",
        "--input-len", "2000", "--output-len", "100", "--json",
    )  # fmt: skip
    plain = json.loads(out)
    assert cached["ttft_ms"]["p50"] < 0.6 * plain["ttft_ms"]["p50"]
    code, out, _ = cli(
        "check", "--model", "llama-3.1-8b", "--gpu", "a10", "--users", "4", "--prompt-len", "2000",
        "--shared-prefix-len", "1500", "--ttft-slo-ms", "300", "--think-time-s", "5", "--json",
    )  # fmt: skip
    assert code == 0
    assert any(f["lever"].startswith("prefix caching") for f in json.loads(out)["fixes"])


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--num-speculative-tokens", "4"), "need --draft-model"),
        (("--speculative-method", "draft"), "needs --draft-model"),
        (("--draft-model", "qwen2.5-0.5b"), "vocabulary"),
        (("--spec-acceptance", "1.5", "--speculative-method", "ngram"), "acceptance"),
        (("--max-lora-rank", "8"), "need --max-loras"),
        (("--cpu-offload-gb", "400"), "offloaded weights"),
        (("--prefix-hit-rate", "2"), "hit_rate"),
    ],
)
def test_bad_lever_flags_exit_2_with_one_line(cli, extra, message):
    code, out, err = cli("estimate", "--model", "llama-3.1-8b", "--gpu", "a10", *extra)
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1


def test_one_max_model_len_rule_for_estimate_check_and_simulate(cli):
    """The scenario's longest request rounded up to a power of two (1,500 + 300 = 1,800 -> 2,048),
    capped at the model's context, whichever command is asked; an explicit flag always wins."""
    from core.spec.engine_defaults import sized_max_model_len

    assert [sized_max_model_len(n, 131_072) for n in (1, 300, 1800, 2048, 2049, 2560)] == [
        1,
        512,
        2048,
        2048,
        4096,
        4096,
    ]
    assert sized_max_model_len(40_000, 40_960) == 40_960  # Qwen3's context is not a power of two
    common = ("--model", "llama-3.1-8b", "--gpu", "a10")
    _, out, _ = cli("estimate", *common, "--input-len", "1500", "--output-len", "300", "--json")
    assert json.loads(out)["engine"]["max_model_len"] == 2048
    _, out, _ = cli("check", *common, "--users", "10", "--prompt-len", "1500", "--answer-len", "300", "--json")
    assert "--max-model-len 2048" in json.loads(out)["launch"]["command"]
    _, out, _ = cli(
        "estimate", *common, "--input-len", "1500", "--output-len", "300", "--max-model-len", "8192", "--json"
    )
    assert json.loads(out)["engine"]["max_model_len"] == 8192
    # simulate sizes it to the longest lengths it can draw: uniform 1000 +- 50 % and 100 +- 50 % -> 1,650
    from core.serving.traffic import Lengths, longest_request

    uniform = [Lengths(mean=m, distribution="uniform", spread=0.5) for m in (1000, 100)]
    assert longest_request(*uniform) == 1650
    assert longest_request(Lengths(mean=1000, distribution="lognormal"), uniform[1]) is None  # no end: model context
    assert longest_request(np.array([10, 900]), np.array([5, 70])) == 970  # a CSV: its longest of each


# audit D15: the CLI's text in words. A duration of 1,000 ms or more is printed in seconds, so a
# figure of four digits or more before "ms" is the old formatting
LONG_MS = re.compile(r"\b\d{1,3}(,\d{3})+(\.\d+)? ms|\b\d{4,}(\.\d+)? ms")
A10 = ("--model", "llama-3.1-8b", "--gpu", "a10")


def test_check_text_for_a_load_in_flight_reads_in_words(cli):
    """The audit's `check --in-flight 50`: "about - users each", "$- per user-month", "up to 34 (users,
    requests in flight or requests/s) pass", "2 GPU", "1 replica(s) of 1 GPU(s)"."""
    code, out, err = cli("check", *A10, "--in-flight", "50")
    assert code == 0, err
    data = json.loads(cli("check", *A10, "--in-flight", "50", "--json")[1])
    assert " - users" not in out and "$-" not in out and "(s)" not in out
    assert f"up to {data['solvers']['max_load']:,} requests in flight pass" in out
    assert data["cost"]["per_user_month_usd"] is None and "user-month" not in out  # no users: no user-month
    fix_gpus = re.findall(r"\): (\d+) (GPUs?), \$|: (\d+) (GPUs?), \$", out)
    counted = [(n or m, word or word2) for n, word, m, word2 in fix_gpus]
    assert counted and all(word == ("GPU" if n == "1" else "GPUs") for n, word in counted)
    assert "1 replica of 1 GPU" in out
    # the steady state's TTFT and TPOT are printed without any SLO, as the JSON has them
    assert f"TTFT {duration(data['ttft_ms'] * units.MS)}" in out
    assert f"TPOT {duration(data['tpot_ms'] * units.MS)}" in out
    assert not LONG_MS.search(out)


def test_check_for_users_names_them_and_counts_replicas_in_words(cli):
    argv = ("--model", "llama-3.1-8b", "--gpu", "a10", "--users", "50", "--tokens-per-s-per-user", "20")
    code, out, _ = cli("check", *argv)
    data = json.loads(cli("check", *argv, "--json")[1])
    assert code == 0
    assert f"up to {data['solvers']['max_load']:,} users pass" in out
    assert re.search(r"the fewest GPUs of this type: 2 replicas of 1 GPU, about 25 users each: 2 GPUs", out)


def test_check_in_chinese_translates_the_status_tags_and_the_model_line(cli):
    code, out, _ = cli("check", *A10, "--in-flight", "50", "--lang", "zh")
    assert code == 0
    assert out.splitlines()[0] == "模型：llama-3.1-8b -> Llama-3.1-8B 架构，bf16"
    tags = re.findall(r"^  \[([^\]]+)\]", out, flags=re.M)
    assert tags and {t.strip() for t in tags} <= {"通过", "临界", "不通过"}
    assert "[ok" not in out and "[failed" not in out and "[fails" not in out
    assert "model:" not in out and "users" not in out


@pytest.mark.parametrize(
    "argv",
    [
        # the audit's PM case: 50 arriving together on an A10, TTFT 58,289 ms
        ("estimate", *A10, "--input-len", "2000", "--output-len", "300", "--batch", "50"),
        ("estimate", *A10, "--batch", "32", "--draft-model", "llama-3.2-1b"),
        ("check", *A10, "--users", "50", "--prompt-len", "2000", "--answer-len", "300", "--ttft-slo-ms", "1000"),
        ("simulate", *A10, "--users", "50", "--input-len", "2000", "--output-len", "300", "--num-requests", "200"),
    ],
)
def test_every_command_prints_durations_from_one_second_in_seconds(cli, argv):
    code, out, err = cli(*argv)
    assert code == 0, err
    assert not LONG_MS.search(out), LONG_MS.search(out).group(0)
    assert re.search(r"\d s\b", out)  # these scenarios all have a duration over a second


def test_estimate_prints_the_audits_58_second_ttft_in_seconds(cli):
    argv = ("estimate", *A10, "--input-len", "2000", "--output-len", "300", "--batch", "50")
    _, out, _ = cli(*argv)
    ttft_ms = json.loads(cli(*argv, "--json")[1])["latency"]["ttft_ms"]
    line = next(line for line in out.splitlines() if line.strip().startswith("TTFT"))  # arriving together
    assert (
        ttft_ms > 10_000
        and duration(ttft_ms * units.MS) in line
        and line.split()[1:3]
        == [
            f"{ttft_ms / 1000:.1f}",
            "s",
        ]
    )


def test_search_prints_each_points_durations_as_every_page_does(cli):
    argv = ("search", "--model", "llama-3.1-8b", "--gpus", "a10,l4", "--users", "50", "--tp-options", "1,2")
    code, out, _ = cli(*argv)
    data = json.loads(cli(*argv, "--json")[1])
    assert code == 0 and data["pareto"]
    for point in data["pareto"][:12]:  # the text lists the first 12
        shown = f"TTFT {duration(point['ttft_ms'] * units.MS)}, TPOT {duration(point['tpot_ms'] * units.MS)}"
        assert shown in out
    assert not LONG_MS.search(out)
