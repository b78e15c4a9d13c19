"""Helm values for the vLLM production stack and for llm-d's model service chart.

vllm-project/production-stack, chart ``helm/`` 0.1.12 at a6c01db05f65f556235413ba8dbcfb0c01132fff
(values.schema.json vendored in data/schemas/): one ``servingEngineSpec.modelSpec`` entry per workload.
Its template (templates/deployment-vllm-multi.yaml) runs ``vllm serve <modelURL> --host 0.0.0.0 --port
<containerPort>``, then ``--enable-prefix-caching`` or ``--no-enable-prefix-caching`` (always one of the two:
``enablePrefixCaching`` is set to whether the plan turns it on, so a plan without the prefix lever runs with
it off, as its figures assume), ``--tensor-parallel-size`` (``tensorParallelSize``, which also mounts
/dev/shm), then ``vllmConfig.extraArgs``: every other argument of the plan, in its order. vLLM only.

llm-d-incubation/llm-d-modelservice, chart ``llm-d-modelservice`` v0.4.12 at
3051935eb5a49f6df21cd6aeb5e4f05b98799262 (values.yaml, templates/_helpers.tpl): ``modelCommand: custom``
runs the container's ``command`` and ``args`` as given, here the plan's; ``modelArtifacts.authSecretName``
sets HF_TOKEN from that Secret's key ``HF_TOKEN``; ``decode``/``prefill`` carry replicas, ``parallelism``
(tensor, data, workers = nodes per instance; ``multinode`` turns on its LeaderWorkerSet) and
``acceleratorTypes`` (the node label and its values). Disaggregated points turn on its routing sidecar
(``routing.proxy``, connector nixlv2), which listens on the service port and forwards to the decode
engine on ``routing.proxy.targetPort``: the decode engine's ``--port`` is that port.
"""

from __future__ import annotations

from core.deploy.kubernetes import GPU_LABEL, SECRET, cache_size
from core.deploy.spec import PORT, DeployError, DeploySpec, Workload

PRODUCTION_STACK_FIXED = ("vllm", "serve")
"""What the production stack's template writes itself before the model (vllm serve)."""
LLM_D_PROXY_PORT = 8200


def _split_prefix_and_tp(args: tuple[str, ...]) -> tuple[bool, int, list[str]]:
    """(prefix caching on, tensor parallel size, the rest) of ``vllm serve MODEL ...`` arguments."""
    rest, tp, prefix, i = [], 1, False, 3
    while i < len(args):
        if args[i] == "--tensor-parallel-size":
            tp, i = int(args[i + 1]), i + 2
            continue
        if args[i] == "--enable-prefix-caching":
            prefix = True
        elif args[i] in ("--host", "--port"):
            i += 2  # the chart writes both
            continue
        else:
            rest.append(args[i])
        i += 1
    return prefix, tp, rest


def production_stack(spec: DeploySpec) -> dict:
    if spec.engine != "vllm":
        raise DeployError(f"production-stack runs vLLM only, not {spec.engine}; use --target k8s or llm-d")
    models = []
    for w in spec.workloads:
        if w.nodes > 1:
            raise DeployError(f"production-stack: an instance over {w.nodes} nodes is not written; use --target k8s")
        prefix, tp, rest = _split_prefix_and_tp(w.args)
        repository, tag = spec.image.split(":")
        models.append(
            {
                "name": spec.name if w.role == "engine" else f"{spec.name}-{w.role}",
                "repository": repository,
                "tag": tag,
                "modelURL": spec.model,
                "replicaCount": w.replicas,
                "requestCPU": 8,
                "requestMemory": "64Gi",
                "requestGPU": w.gpus,
                "requestGPUType": spec.gpu_resource,
                "pvcStorage": cache_size(spec),
                "shmSize": "16Gi",
                "hf_token": {"secretName": SECRET, "secretKey": "HF_TOKEN"},
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": GPU_LABEL, "operator": "In", "values": [spec.gpu_product]}]}
                ],
                "vllmConfig": {"enablePrefixCaching": prefix, "tensorParallelSize": tp, "extraArgs": rest},
            }
        )
    return {"servingEngineSpec": {"containerPort": PORT, "servicePort": PORT, "modelSpec": models}}


def _llm_d_role(spec: DeploySpec, w: Workload, port: int) -> dict:
    args = list(w.args)
    args[args.index("--port") + 1] = str(port)
    gpus = {spec.gpu_resource: w.gpus_per_node}
    probe = {"httpGet": {"path": "/health", "port": port}, "periodSeconds": 10, "failureThreshold": 6}
    container = {
        "name": "vllm" if spec.engine == "vllm" else spec.engine,
        "image": spec.image,
        "modelCommand": "custom",
        "command": args[:1],
        "args": args[1:],
        "ports": [{"containerPort": port, "name": "http"}],
        "resources": {"limits": dict(gpus), "requests": dict(gpus)},
        "mountModelVolume": True,
        "readinessProbe": probe | {"initialDelaySeconds": 60},
        "livenessProbe": probe | {"initialDelaySeconds": 600},
    }
    return {
        "create": True,
        "replicas": w.replicas,
        "parallelism": {"tensor": w.tp, "data": w.dp, "workers": w.nodes},
        "acceleratorTypes": {"labelKey": GPU_LABEL, "labelValues": [spec.gpu_product]},
        "containers": [container],
    }


def llm_d(spec: DeploySpec) -> dict:
    roles = {w.role: w for w in spec.workloads}
    disaggregated = "decode" in roles
    if any(w.nodes > 1 for w in spec.workloads) and spec.engine != "vllm":
        raise DeployError(f"llm-d: multi-node {spec.engine} instances are not written; use --target k8s")
    values: dict = {
        "modelArtifacts": {
            "name": spec.model,
            "uri": f"hf://{spec.model}",
            "size": cache_size(spec),
            "authSecretName": SECRET,
        },
        "multinode": any(w.nodes > 1 for w in spec.workloads),
        "accelerator": {"type": "amd" if spec.gpu_resource.startswith("amd") else "nvidia"},
        "routing": {
            "servicePort": PORT,
            "proxy": {"enabled": disaggregated, "connector": "nixlv2", "targetPort": LLM_D_PROXY_PORT},
        },
    }
    if disaggregated:
        values["decode"] = _llm_d_role(spec, roles["decode"], LLM_D_PROXY_PORT)
        values["prefill"] = _llm_d_role(spec, roles["prefill"], PORT)
    else:
        values["decode"] = _llm_d_role(spec, roles["engine"], PORT)
        values["prefill"] = {"create": False, "replicas": 0}
    return values
