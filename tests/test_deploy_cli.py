"""``python -m core deploy``: the files of the plan ``check`` makes, printed or written; one-line errors."""

from __future__ import annotations

import json

import kubernetes_validate
import yaml

QWEN = ("deploy", "--model", "qwen3-32b", "--gpu", "h100-sxm", "--tp", "2", "--users", "20")


def _check_args(cli) -> list[str]:
    code, out, _ = cli("check", *QWEN[1:], "--json")
    assert code == 0
    return json.loads(out)


def test_compose_printed_runs_the_flags_check_prints(cli):
    code, out, err = cli(*QWEN, "--target", "compose")
    assert code == 0 and err == ""
    doc = yaml.safe_load(out)
    (service,) = doc["services"].values()
    plan = _check_args(cli)
    command = " ".join(service["entrypoint"] + service["command"])
    launch = json.dumps(plan)
    assert "vllm serve Qwen/Qwen3-32B --tensor-parallel-size 2" in command
    for flag in ("--max-model-len", "--max-num-seqs", "--gpu-memory-utilization"):
        value = service["command"][service["command"].index(flag) + 1]
        assert f"{flag} {value}" in launch  # the same value as check's serve command


def test_k8s_written_to_a_directory_validates(cli, tmp_path):
    code, out, err = cli(*QWEN, "--target", "k8s", "--autoscale", "--out", str(tmp_path / "files"))
    assert code == 0, err
    (path,) = (tmp_path / "files").iterdir()
    assert out.strip() == f"wrote {path}"
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    for doc in docs:
        kubernetes_validate.validate(doc, "1.31", strict=True)
    assert [d["kind"] for d in docs][-1] == "HorizontalPodAutoscaler"


def test_bad_input_is_one_line_and_exit_2(cli, tmp_path):
    code, out, err = cli(*QWEN, "--engine", "sglang", "--target", "production-stack")
    assert code == 2 and out == ""
    assert err == "error: production-stack runs vLLM only, not sglang; use --target k8s or llm-d\n"
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = cli(*QWEN, "--target", "k8s", "--out", str(blocker))
    assert code == 2 and err.count("\n") == 1 and "--out" in err
