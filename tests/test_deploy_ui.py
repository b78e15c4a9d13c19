"""The Plan page offers the plan's deployment files and, once the search ran, those of a shown point;
each zip's files run the command the page shows (AppTest)."""

from __future__ import annotations

import io
import shlex
import zipfile

import yaml

from tests.app_helpers import open_app


def _record(monkeypatch) -> dict:
    from streamlit.delta_generator import DeltaGenerator

    data, original = {}, DeltaGenerator.download_button

    def record(self, label, payload, *args, **kwargs):
        data[kwargs["key"]] = (label, kwargs["file_name"], payload)
        return original(self, label, payload, *args, **kwargs)

    monkeypatch.setattr(DeltaGenerator, "download_button", record)
    return data


def _files(payload) -> dict[str, str]:
    with zipfile.ZipFile(io.BytesIO(payload())) as z:
        return {name: z.read(name).decode() for name in z.namelist()}


def _k8s_args(text: str) -> list[list[str]]:
    docs = [d for d in yaml.safe_load_all(text) if d and d["kind"] in ("Deployment", "LeaderWorkerSet")]
    out = []
    for d in docs:
        (c,) = d["spec"]["template"]["spec"]["containers"]
        out.append(c["command"] + c["args"])
    return out


def test_plan_page_offers_the_plans_deployment_files(monkeypatch):
    data = _record(monkeypatch)
    at = open_app()
    at.switch_page("pages/plan_page.py").run()
    assert not at.exception
    label, file_name, payload = data["deploy_plan_zip"]
    assert label == "Download the plan's deployment files (zip)" and file_name.endswith("-deploy.zip")
    files = _files(payload)
    k8s = next(text for name, text in files.items() if name.endswith("-k8s.yaml"))
    assert {"compose.yaml"} <= set(files) and any(n.endswith("-llm-d-values.yaml") for n in files)
    shown = next(c.value for c in at.code if c.language == "bash")  # the page's serve command
    (args,) = _k8s_args(k8s)
    assert args[: len(shlex.split(shown))] == shlex.split(shown)
    assert args[len(shlex.split(shown)) :] == ["--host", "0.0.0.0", "--port", "8000"]  # nosec B104


def test_each_shown_search_point_has_its_deployment_files(monkeypatch):
    data = _record(monkeypatch)
    at = open_app()
    at.switch_page("pages/plan_page.py").run()
    at.toggle(key="search_on").set_value(True).run()
    assert not at.exception
    choice = at.selectbox(key="deploy_point")
    assert len(choice.options) >= 2
    for option in (choice.options[0], choice.options[-1]):
        at.selectbox(key="deploy_point").set_value(option).run()
        assert not at.exception
        _, file_name, payload = data["deploy_point_zip"]
        files = _files(payload)
        gpus = int(option.split(" GPUs ")[0])
        k8s = next(text for name, text in files.items() if name.endswith("-k8s.yaml"))
        docs = [d for d in yaml.safe_load_all(k8s) if d and d["kind"] == "Deployment"]
        total = sum(
            d["spec"]["replicas"]
            * d["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"]
            for d in docs
        )
        assert total == gpus, option  # the point's GPUs, replicas (or prefill + decode instances) included
        assert option.split(" GPUs ")[1].split()[0] in file_name
