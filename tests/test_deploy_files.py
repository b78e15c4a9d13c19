"""Deployment files (core/deploy): every Kubernetes object validated offline against the Kubernetes
schemas (kubernetes-validate), the LeaderWorkerSet against its CRD's vendored schema, the Compose file
against the compose-spec schema, the production-stack values against the chart's values.schema.json;
and the engine flags read back out of each file equal to the plan's (``serve_command(plan).args``)."""

from __future__ import annotations

import dataclasses
import io
import json
import shlex
import zipfile
from pathlib import Path

import jsonschema
import kubernetes_validate
import numpy as np
import pytest
import yaml

from core.deploy.files import bundle, render
from core.deploy.spec import DeployError, from_candidate, from_plan
from core.planning.check import check
from core.planning.launch import serve_command
from core.planning.requirement import Requirement
from core.planning.search import SearchSpace, search
from core.spec.engine import Parallelism
from core.spec.release import parse_release

SCHEMAS = Path(__file__).resolve().parents[1] / "data" / "schemas"
K8S_VERSION = "1.31"
NETWORK = ["--host", "0.0.0.0", "--port", "8000"]  # nosec B104


def _schema(name: str) -> dict:
    return json.loads((SCHEMAS / name).read_text())


def _plan(deploy, model, gpu, engine, version=None, users=20, batched=None, **par):
    dep = deploy(model=model, gpu=gpu, release=parse_release(engine, version), max_num_batched_tokens=batched)
    dep = dataclasses.replace(dep, parallel=Parallelism(**par))
    return check(dep, Requirement(users=users))


@pytest.fixture
def qwen_vllm(deploy):
    return _plan(deploy, "qwen3-32b", "h100-sxm", "vllm", tp=2)


@pytest.fixture
def v3_sglang(deploy):
    return _plan(deploy, "deepseek-v3", "h200", "sglang", tp=8)


def _validate_compose(doc: dict) -> None:
    jsonschema.Draft7Validator(_schema("compose-spec.json")).validate(doc)  # the schema's own draft


def _docs(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(text) if d is not None]


def _k8s(spec, autoscale=True) -> list[dict]:
    (text,) = render(spec, "k8s", autoscale=autoscale).values()
    return _docs(text)


def _validate_k8s(docs: list[dict]) -> None:
    """Each object against the Kubernetes schemas; a LeaderWorkerSet against the LWS CRD and each of its
    pod templates as a PodTemplateSpec."""
    for doc in docs:
        if doc["kind"] == "LeaderWorkerSet":
            jsonschema.validate(doc, _schema("leaderworkerset-v1.json"))
            group = doc["spec"]["leaderWorkerTemplate"]
            for key in ("leaderTemplate", "workerTemplate"):
                template = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "t"}}
                kubernetes_validate.validate(template | {"template": group[key]}, K8S_VERSION, strict=True)
        else:
            kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def _engine_container(doc: dict) -> dict:
    spec = doc["spec"]
    pod = spec["template"] if "template" in spec else spec["leaderWorkerTemplate"]["leaderTemplate"]
    (container,) = pod["spec"]["containers"]
    return container


def _leader_args(container: dict) -> list[str]:
    """The argument list the leader runs: command + args, or the exec'd line of a shell wrapper."""
    if container["command"][:2] == ["/bin/sh", "-c"]:
        return shlex.split(container["args"][0].split("&& exec ", 1)[1])
    return container["command"] + container["args"]


def _assert_plan_flags(read_back: list[str], plan, extra=()) -> None:
    expected = list(serve_command(plan).args)
    assert read_back[: len(expected)] == expected
    assert read_back[len(expected) :][: len(extra)] == list(extra)


def test_qwen3_32b_on_2_h100_validates_and_carries_the_plans_flags(qwen_vllm):
    spec = from_plan(qwen_vllm)
    docs = _k8s(spec)
    _validate_k8s(docs)
    kinds = [d["kind"] for d in docs]
    assert kinds == ["PersistentVolumeClaim", "Deployment", "Service", "HorizontalPodAutoscaler"]
    container = _engine_container(docs[1])
    _assert_plan_flags(_leader_args(container), qwen_vllm, NETWORK)
    assert container["image"] == f"vllm/vllm-openai:v{qwen_vllm.deployment.engine.release.number}"
    assert container["resources"]["limits"] == {"nvidia.com/gpu": 2} == container["resources"]["requests"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/health"
    assert container["env"] == [
        {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "HF_TOKEN"}}}
    ]
    pod = docs[1]["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-H100-SXM5-80GB"}
    assert {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}} in pod["volumes"]
    metric = docs[3]["spec"]["metrics"][0]["pods"]["metric"]["name"]
    assert metric == "vllm:num_requests_waiting"
    assert "hf_" not in render(spec, "k8s")[f"{spec.name}-k8s.yaml"].replace("hf_...", "")  # no literal token


def test_deepseek_v3_on_8_h200_sglang(v3_sglang):
    spec = from_plan(v3_sglang)
    docs = _k8s(spec)
    _validate_k8s(docs)
    container = _engine_container(docs[1])
    _assert_plan_flags(_leader_args(container), v3_sglang, NETWORK)
    assert container["image"] == f"lmsysorg/sglang:v{v3_sglang.deployment.engine.release.number}"  # 0.5 on: plain tag
    assert docs[3]["spec"]["metrics"][0]["pods"]["metric"]["name"] == "sglang:num_queue_reqs"


def test_multi_node_instance_is_a_leader_worker_set(deploy):
    plan = _plan(deploy, "deepseek-v3", "h100-sxm", "vllm", tp=8, pp=2)
    spec = from_plan(plan)
    docs = _k8s(spec)
    _validate_k8s(docs)
    lws = docs[1]
    assert lws["apiVersion"] == "leaderworkerset.x-k8s.io/v1" and lws["kind"] == "LeaderWorkerSet"
    group = lws["spec"]["leaderWorkerTemplate"]
    assert group["size"] == 2
    _assert_plan_flags(_leader_args(_engine_container(lws)), plan, NETWORK)
    worker = group["workerTemplate"]["spec"]["containers"][0]
    assert worker["resources"]["limits"] == {"nvidia.com/gpu": 8}
    assert "ray start --address=" in worker["args"][0]
    assert docs[2]["spec"]["selector"]["leaderworkerset.sigs.k8s.io/worker-index"] == "0"
    assert docs[3]["spec"]["scaleTargetRef"]["kind"] == "LeaderWorkerSet"
    with pytest.raises(DeployError, match="compose: one instance needs 16 GPUs over 2 nodes"):
        render(spec, "compose")


def test_trtllm_attention_dp_file_travels_in_a_config_map(deploy):
    plan = _plan(deploy, "deepseek-v3", "h200", "trtllm", tp=1, dp=8)
    spec = from_plan(plan)
    docs = _k8s(spec)
    _validate_k8s(docs)
    config = next(d for d in docs if d["kind"] == "ConfigMap")
    assert config["data"] == {"extra-llm-api-config.yml": "enable_attention_dp: true\n"}
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    container = _engine_container(deployment)
    _assert_plan_flags(_leader_args(container), plan, NETWORK)
    assert container["workingDir"] == "/etc/llm-config"
    assert container["image"] == f"nvcr.io/nvidia/tensorrt-llm/release:{plan.deployment.engine.release.number}"
    assert not any(d["kind"] == "HorizontalPodAutoscaler" for d in docs)  # no queue gauge known
    compose = yaml.safe_load(render(spec, "compose")["compose.yaml"])
    _validate_compose(compose)
    assert compose["configs"] == {"extra-llm-api-config.yml": {"content": "enable_attention_dp: true\n"}}


@pytest.mark.parametrize("fixture", ["qwen_vllm", "v3_sglang"])
def test_compose_validates_and_carries_the_plans_flags(fixture, request):
    plan = request.getfixturevalue(fixture)
    doc = yaml.safe_load(render(from_plan(plan), "compose")["compose.yaml"])
    _validate_compose(doc)
    (service,) = doc["services"].values()
    _assert_plan_flags(service["entrypoint"] + service["command"], plan, NETWORK)
    (device,) = service["deploy"]["resources"]["reservations"]["devices"]
    assert device["count"] == plan.deployment.parallel.num_gpus and device["capabilities"] == ["gpu"]
    assert service["environment"]["HF_TOKEN"].startswith("${HF_TOKEN")
    assert service["healthcheck"]["test"][1].startswith("curl -fsS http://localhost:8000/health")


def _production_stack_args(model: dict) -> list[str]:
    """The argument list templates/deployment-vllm-multi.yaml (chart 0.1.12) builds from the values."""
    cfg = model["vllmConfig"]
    args = ["vllm", "serve", model["modelURL"], "--host", "0.0.0.0", "--port", "8000"]  # nosec B104
    args.append("--enable-prefix-caching" if cfg["enablePrefixCaching"] else "--no-enable-prefix-caching")
    return args + ["--tensor-parallel-size", str(cfg["tensorParallelSize"])] + cfg["extraArgs"]


def _flags(args: list[str]) -> list[tuple[str, ...]]:
    """``--flag value`` pairs and lone ``--switch`` flags, in a canonical order (the chart moves two)."""
    out, i = [], 0
    while i < len(args):
        if i + 1 < len(args) and not args[i + 1].startswith("--"):
            out.append((args[i], args[i + 1]))
            i += 2
        else:
            out.append((args[i],))
            i += 1
    return sorted(out)


def test_production_stack_values_validate_and_run_the_plans_flags(deploy, qwen_vllm, v3_sglang):
    schema = _schema("production-stack-values.schema.json")
    batched = _plan(deploy, "qwen3-32b", "h100-sxm", "vllm", tp=4, batched=4096)
    for plan in (qwen_vllm, batched):
        (text,) = render(from_plan(plan), "production-stack").values()
        values = yaml.safe_load(text)
        jsonschema.validate(values, schema)
        (model,) = values["servingEngineSpec"]["modelSpec"]
        item = schema["properties"]["servingEngineSpec"]["properties"]["modelSpec"]["items"]["properties"]
        assert set(model) <= set(item) and set(model["vllmConfig"]) <= set(item["vllmConfig"]["properties"])
        built = _production_stack_args(model)
        plan_args = list(serve_command(plan).args)
        assert built[:3] == plan_args[:3]  # vllm serve MODEL
        chart_added = [("--host", "0.0.0.0"), ("--port", "8000"), ("--no-enable-prefix-caching",)]
        assert _flags(built[3:]) == sorted(_flags(plan_args[3:]) + chart_added)
    with pytest.raises(DeployError, match="production-stack runs vLLM only, not sglang"):
        render(from_plan(v3_sglang), "production-stack")


def _validate_llm_d(values: dict) -> None:
    jsonschema.Draft7Validator(_schema("llm-d-modelservice-values.schema.json")).validate(values)
    for role in ("decode", "prefill"):
        for container in values[role].get("containers", []):
            assert container["modelCommand"] in ("vllmServe", "imageDefault", "custom")  # _helpers.tpl's choices


def test_llm_d_values_run_the_plans_flags(qwen_vllm, deploy):
    values = yaml.safe_load(render(from_plan(qwen_vllm), "llm-d")["qwen3-32b-llm-d-values.yaml"])
    _validate_llm_d(values)
    multi = yaml.safe_load(
        next(iter(render(from_plan(_plan(deploy, "deepseek-v3", "h100-sxm", "vllm", tp=8, pp=2)), "llm-d").values()))
    )
    _validate_llm_d(multi)
    assert multi["multinode"] is True and multi["decode"]["parallelism"]["workers"] == 2
    decode = values["decode"]
    (container,) = decode["containers"]
    assert container["modelCommand"] == "custom"
    _assert_plan_flags(container["command"] + container["args"], qwen_vllm, NETWORK)
    assert decode["parallelism"] == {"tensor": 2, "data": 1, "workers": 1}
    assert values["modelArtifacts"]["authSecretName"] == "hf-token"
    assert values["prefill"]["create"] is False and values["routing"]["proxy"]["enabled"] is False


@pytest.fixture(scope="module")
def disaggregated_point():
    from core.spec.catalog import load_catalog

    catalog = load_catalog()
    from core.spec.deployment import Deployment
    from core.spec.engine import EngineConfig
    from core.spec.precision import kv_precision, weight_precision

    model = catalog.model("qwen3-32b")
    w = weight_precision(model.native_dtype)
    dep = Deployment(
        model=model,
        gpu=catalog.gpu("h100-sxm"),
        weights=w,
        kv=kv_precision("auto", w),
        parallel=Parallelism(tp=2),
        engine=EngineConfig(release=parse_release("vllm")),
    )
    req = Requirement(users=200)
    space = SearchSpace(gpus=("h100-sxm",), tensor_parallel=(2,), pipeline_parallel=(1,), modes=("disaggregated",))
    found = search(catalog, dep, req, space)
    i = int(np.flatnonzero(found.meets_slo)[0])
    return found, i, req


def test_disaggregated_search_point_gives_prefill_and_decode_with_kv_transfer(disaggregated_point):
    found, i, req = disaggregated_point
    spec = from_candidate(found, i, req)
    docs = _k8s(spec, autoscale=False)
    _validate_k8s(docs)
    deployments = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Deployment"}
    assert set(deployments) == {"qwen3-32b-prefill", "qwen3-32b-decode"}
    assert deployments["qwen3-32b-prefill"]["spec"]["replicas"] == int(found.prefill[i])
    assert deployments["qwen3-32b-decode"]["spec"]["replicas"] == int(found.decode[i])
    transfer = ["--kv-transfer-config", '{"kv_connector": "NixlConnector", "kv_role": "kv_both"}']
    for w in spec.workloads:
        container = _engine_container(deployments[f"qwen3-32b-{w.role}"])
        plan_args = list(w.serve.args)
        assert _leader_args(container) == plan_args + transfer + NETWORK
    compose = yaml.safe_load(render(spec, "compose")["compose.yaml"])
    _validate_compose(compose)
    llm_d = yaml.safe_load(next(iter(render(spec, "llm-d").values())))
    _validate_llm_d(llm_d)
    assert llm_d["routing"]["proxy"]["enabled"] is True
    decode = llm_d["decode"]["containers"][0]["args"]
    assert decode[decode.index("--port") + 1] == "8200" == str(llm_d["routing"]["proxy"]["targetPort"])
    assert llm_d["prefill"]["replicas"] == int(found.prefill[i])


def test_disaggregated_refusals_name_the_release(disaggregated_point, deploy):
    found, i, req = disaggregated_point
    old = dataclasses.replace(
        found,
        shapes=tuple(
            dataclasses.replace(s, engine=dataclasses.replace(s.engine, release=parse_release("vllm", "0.8.5")))
            for s in found.shapes
        ),
    )
    with pytest.raises(DeployError, match=r"^vLLM 0\.8\.5 has no NixlConnector"):
        from_candidate(old, i, req)


def test_bundle_zips_every_target_that_can_be_written(v3_sglang):
    with zipfile.ZipFile(io.BytesIO(bundle(from_plan(v3_sglang)))) as z:
        names = set(z.namelist())
        note = z.read("NOT-WRITTEN.txt").decode()
    assert {"deepseek-v3-k8s.yaml", "compose.yaml", "deepseek-v3-llm-d-values.yaml"} <= names
    assert note.startswith("production-stack: production-stack runs vLLM only")


def test_a_point_of_the_search_json_gives_the_candidates_files(disaggregated_point):
    """The Plan page's points are the search's JSON: rebuilt from it, the point runs the same arguments
    as the candidate it came from."""
    from core.deploy.point import from_point
    from core.planning.pareto import candidate_to_dict

    found, i, req = disaggregated_point
    base = found.shapes[int(found.shape[i])]
    point = candidate_to_dict(found, i)
    rebuilt, direct = from_point(base, point, req), from_candidate(found, i, req)
    assert [(w.role, w.replicas, w.args) for w in rebuilt.workloads] == [
        (w.role, w.replicas, w.args) for w in direct.workloads
    ]
    assert render(rebuilt, "k8s") == render(direct, "k8s")


def _with_release(found, engine: str, version: str | None):
    release = parse_release(engine, version)
    shapes = tuple(dataclasses.replace(s, engine=dataclasses.replace(s.engine, release=release)) for s in found.shapes)
    return dataclasses.replace(found, shapes=shapes)


def test_sglang_disaggregated_point_and_multi_node_group(disaggregated_point, deploy):
    found, i, req = disaggregated_point
    spec = from_candidate(_with_release(found, "sglang", None), i, req)
    docs = _k8s(spec)
    _validate_k8s(docs)
    for w in spec.workloads:
        container = _engine_container(next(d for d in docs if d["metadata"]["name"] == f"qwen3-32b-{w.role}"))
        assert _leader_args(container) == [*w.serve.args, "--disaggregation-mode", w.role, *NETWORK]
    with pytest.raises(DeployError, match=r"^SGLang 0\.4\.5: --disaggregation-mode is written for SGLang 0\.4\.6 on"):
        from_candidate(_with_release(found, "sglang", "0.4.5"), i, req)
    with pytest.raises(DeployError, match=r"disaggregated serving \(trtllm-serve disaggregated\) is not written"):
        from_candidate(_with_release(found, "trtllm", None), i, req)
    plan = _plan(deploy, "deepseek-v3", "h100-sxm", "sglang", tp=16)
    docs = _k8s(from_plan(plan))
    _validate_k8s(docs)
    group = docs[1]["spec"]["leaderWorkerTemplate"]
    leader, worker = (group[k]["spec"]["containers"][0] for k in ("leaderTemplate", "workerTemplate"))
    _assert_plan_flags(_leader_args(leader), plan, NETWORK)
    assert leader["args"][-6:] == [
        "--nnodes",
        "2",
        "--node-rank",
        "0",
        "--dist-init-addr",
        "$(LWS_LEADER_ADDRESS):20000",
    ]
    assert worker["args"][-4:-2] == ["--node-rank", "$(LWS_WORKER_INDEX)"]


def test_the_report_section_lists_each_file_its_command_and_the_refusals(v3_sglang):
    from core.deploy.section import deploy_section

    spec = from_plan(v3_sglang)
    title, blocks = deploy_section(spec)
    table = next(b for b in blocks if b.kind == "table")
    assert title == "Deployment files" and [r[0] for r in table.items] == ["k8s", "compose", "llm-d"]
    assert ("k8s", "deepseek-v3-k8s.yaml", "kubectl apply -f deepseek-v3-k8s.yaml") in table.items
    (code,) = (b for b in blocks if b.kind == "code")
    assert code.items == (" ".join(spec.workloads[0].args),)
    assert blocks[-1].items == (
        "production-stack: production-stack runs vLLM only, not sglang; use --target k8s or llm-d",
    )
