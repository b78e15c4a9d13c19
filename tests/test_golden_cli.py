"""Golden outputs: the ``--json`` answers of the README's CLI examples, pinned.

Written before core/ was reorganized into packages (issue 13) so that a refactor that changes an
answer fails here. Regenerate deliberately with ``GOLDEN_UPDATE=1 pytest tests/test_golden_cli.py``
and review the diff: a changed golden file is a changed answer.

Floats are compared to 12 significant digits: a refactor may add the same terms in another order,
which moves the last bit, and that is not a change of behaviour. ``simulation_seconds`` is how long
the simulator took, not an answer, and is left out.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "data" / "golden"
TINY_CONFIG = str(Path(__file__).parent / "data" / "tiny_llama_config.json")
VOLATILE = {"simulation_seconds"}
SIGNIFICANT = 12

CASES = {
    "list_models": ["list", "models", "--json"],
    "list_gpus": ["list", "gpus", "--json"],
    "estimate_8b_a10": [
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "a10",
        "--max-model-len",
        "8192",
        "--batch",
        "8",
        "--json",
    ],
    "estimate_70b_tp4": [
        "estimate",
        "--model",
        "meta-llama/Llama-3.1-70B",
        "--gpu",
        "h100-sxm",
        "--num-gpus",
        "4",
        "--json",
    ],
    "estimate_config_int4": ["estimate", "--model", TINY_CONFIG, "--gpu", "l4", "--weight-dtype", "int4", "--json"],
    "estimate_draft": [
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "a10",
        "--max-model-len",
        "8192",
        "--draft-model",
        "llama-3.2-1b",
        "--num-speculative-tokens",
        "4",
        "--spec-acceptance",
        "0.7",
        "--json",
    ],
    "estimate_prefix": [
        "estimate",
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "a10",
        "--max-model-len",
        "8192",
        "--input-len",
        "2000",
        "--output-len",
        "300",
        "--batch",
        "8",
        "--prefix-cache-tokens",
        "1500",
        "--json",
    ],
    "estimate_offload": [
        "estimate",
        "--model",
        "llama-3.1-70b",
        "--gpu",
        "rtx-4090",
        "--weight-dtype",
        "int4",
        "--max-model-len",
        "4096",
        "--cpu-offload-gb",
        "22",
        "--json",
    ],
    "check_8b_a10": [
        "check",
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "a10",
        "--users",
        "50",
        "--think-time-s",
        "30",
        "--prompt-len",
        "1500",
        "--answer-len",
        "300",
        "--ttft-slo-ms",
        "1000",
        "--tokens-per-s-per-user",
        "20",
        "--json",
    ],
    "check_70b_chat": [
        "check",
        "--model",
        "llama-3.1-70b",
        "--gpu",
        "h100-sxm",
        "--num-gpus",
        "4",
        "--preset",
        "chat",
        "--json",
    ],
    "simulate_8b_a10_rate": [
        "simulate",
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "a10",
        "--max-model-len",
        "4096",
        "--request-rate",
        "1",
        "--num-requests",
        "10000",
        "--input-len",
        "1000",
        "--output-len",
        "200",
        "--length-dist",
        "lognormal",
        "--json",
    ],
    "simulate_8b_h100_closed": [
        "simulate",
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "h100-sxm",
        "--concurrency",
        "64",
        "--json",
    ],
    "validate": ["validate", "--json", "--in-sample"],
}


def _normalized(value):
    """The JSON value with volatile keys dropped and floats rounded to SIGNIFICANT digits."""
    if isinstance(value, dict):
        return {k: _normalized(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_normalized(v) for v in value]
    if isinstance(value, float):
        return float(f"{value:.{SIGNIFICANT}g}")
    if isinstance(value, str):
        return value.replace(TINY_CONFIG, "<tiny_llama_config.json>")
    return value


@pytest.mark.parametrize("name", list(CASES))
def test_cli_json_matches_golden(name, cli):
    code, out, err = cli(*CASES[name])
    assert code == 0, err
    got = _normalized(json.loads(out))
    path = GOLDEN / f"{name}.json"
    if os.environ.get("GOLDEN_UPDATE"):
        path.write_text(json.dumps(got, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    assert got == json.loads(path.read_text())


TEXT_CASES = ("estimate_8b_a10", "estimate_draft", "check_8b_a10")


@pytest.mark.parametrize("name", TEXT_CASES)
def test_cli_text_matches_golden(name, cli):
    code, out, err = cli(*[a for a in CASES[name] if a != "--json"])
    assert code == 0, err
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("GOLDEN_UPDATE"):
        path.write_text(out)
    assert out == path.read_text()
