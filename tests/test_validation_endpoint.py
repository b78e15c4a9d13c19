"""The validation set's ``endpoint`` column: which HTTP endpoint the benchmark client used for each serving row."""

from __future__ import annotations

import csv
import re

import pytest

from core.validation.dataset import VALIDATION_DIR

SERVING_CSV = VALIDATION_DIR / "serving.csv"
ENDPOINTS = {"", "chat", "completions"}
# what a row's own quote or caveats say about its client, when they say it
CHAT_CLIENT = re.compile(r"openai-chat|/v1/chat/completions|sglang-oai-chat")
COMPLETIONS_CLIENT = re.compile(r"--backend (?:vllm|openai|sglang)(?![-\w])|/v1/completions")


def _rows() -> list[dict[str, str]]:
    with SERVING_CSV.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


ROWS = _rows()


def test_endpoint_sits_right_after_front_end():
    with SERVING_CSV.open(newline="", encoding="utf-8") as fh:
        header = next(csv.reader(fh))
    assert header.count("endpoint") == 1
    assert header.index("endpoint") == header.index("front_end") + 1


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["id"])
def test_endpoint_is_chat_completions_or_unstated(row):
    assert row["endpoint"] in ENDPOINTS, f"{row['id']}: endpoint {row['endpoint']!r} not one of {sorted(ENDPOINTS)}"


def test_rows_without_an_api_server_have_no_endpoint():
    offline = [r["id"] for r in ROWS if r["front_end"] == "offline" and r["endpoint"]]
    startup = [r["id"] for r in ROWS if r["kind"] == "startup_log" and r["endpoint"]]
    assert not offline, f"in-process rows carry an endpoint: {offline}"
    assert not startup, f"start-up log rows carry an endpoint: {startup}"


def test_endpoint_agrees_with_the_client_the_row_quotes():
    http = [r for r in ROWS if r["front_end"] != "offline"]
    wrong = []
    for r in http:
        said = f"{r['quote']} {r['caveats']}"
        if CHAT_CLIENT.search(said) and r["endpoint"] != "chat":
            wrong.append((r["id"], r["endpoint"], "quotes a chat client"))
        elif COMPLETIONS_CLIENT.search(said) and r["endpoint"] != "completions":
            wrong.append((r["id"], r["endpoint"], "quotes a completions client"))
    assert not wrong
    # the check above is not vacuous: both kinds of quoted client occur among the HTTP rows
    assert any(CHAT_CLIENT.search(f"{r['quote']} {r['caveats']}") for r in http)
    assert any(COMPLETIONS_CLIENT.search(f"{r['quote']} {r['caveats']}") for r in http)


def test_most_http_serving_rows_know_their_endpoint():
    http = [r for r in ROWS if r["front_end"] != "offline" and r["kind"] in ("serving_benchmark", "single_stream")]
    known = [r for r in http if r["endpoint"]]
    assert {r["endpoint"] for r in known} == {"chat", "completions"}
    assert len(known) >= 0.75 * len(http)
