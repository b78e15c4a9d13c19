"""Kubernetes manifests for a :class:`core.deploy.spec.DeploySpec`: per workload a Deployment (a LeaderWorkerSet,
leaderworkerset.x-k8s.io/v1, when one instance spans nodes) and a Service, one model-cache
PersistentVolumeClaim, and optionally a HorizontalPodAutoscaler (autoscaling/v2).

Each engine container: the image at the plan's release, the plan's arguments
(:attr:`core.deploy.spec.Workload.args`), readiness and liveness probes on the engine's health endpoint,
``nvidia.com/gpu`` (``amd.com/gpu``) requests = limits, node selection by the ``nvidia.com/gpu.product`` label
GPU feature discovery writes, /dev/shm as a memory emptyDir, HF_TOKEN from the Secret ``hf-token`` (key
``HF_TOKEN``, the key llm-d's chart reads too), the Hugging Face cache on the claim. The autoscaler reads the
engine's queue gauge as a Pods metric, which the Kubernetes custom-metrics API serves only through an adapter
(e.g. the Prometheus adapter with a rule exposing that series under the same name).
"""

from __future__ import annotations

import math
import shlex

from core.deploy.spec import (
    CONFIG_DIR,
    HEALTH_PATH,
    PORT,
    QUEUE_METRIC,
    RAY_PORT,
    SGLANG_DIST_PORT,
    DeploySpec,
    Workload,
)
from core.spec import units

CACHE_PATH, SECRET, SECRET_KEY = "/root/.cache/huggingface", "hf-token", "HF_TOKEN"
GPU_LABEL = "nvidia.com/gpu.product"
SHM = "/dev/shm"  # nosec B108: a mount point inside the engine's container
HEADER = (
    f"# The {GPU_LABEL} value below is this tool's reading of the GPU name: it must match the label GPU feature\n"
    "# discovery writes on your cluster's nodes (kubectl get nodes -L nvidia.com/gpu.product).\n"
    f"# Create the token first: kubectl create secret generic {SECRET} --from-literal={SECRET_KEY}=hf_...\n"
)


def _name(spec: DeploySpec, w: Workload) -> str:
    return spec.name if w.role == "engine" else f"{spec.name}-{w.role}"


def _probe(spec: DeploySpec, initial_s: int) -> dict:
    return {
        "httpGet": {"path": HEALTH_PATH[spec.engine], "port": PORT},
        "initialDelaySeconds": initial_s,
        "periodSeconds": 10,
        "failureThreshold": 6,
    }


def _container(spec: DeploySpec, w: Workload, leader: bool) -> dict:
    """The engine container of a single-node pod, or of the leader or a worker of a group."""
    gpus = {spec.gpu_resource: w.gpus_per_node}
    c: dict = {
        "name": "engine",
        "image": spec.image,
        "env": [{"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": SECRET, "key": SECRET_KEY}}}],
        "resources": {"requests": dict(gpus), "limits": dict(gpus)},
        # /dev/shm: the container's shared memory, backed by a memory emptyDir (not a temporary file)
        "volumeMounts": [{"name": "model-cache", "mountPath": CACHE_PATH}, {"name": "shm", "mountPath": SHM}],
    }
    if w.serve.files:
        c["workingDir"] = CONFIG_DIR
        c["volumeMounts"].append({"name": "engine-config", "mountPath": CONFIG_DIR})
    args = list(w.args)
    if w.nodes > 1 and spec.engine == "sglang":
        rank = "0" if leader else "$(LWS_WORKER_INDEX)"
        args += ["--nnodes", str(w.nodes), "--node-rank", rank]
        args += ["--dist-init-addr", f"$(LWS_LEADER_ADDRESS):{SGLANG_DIST_PORT}"]
    if w.nodes > 1 and spec.engine == "vllm":
        if leader:
            script = f"ray start --head --port={RAY_PORT} && exec {shlex.join(args)}"
        else:
            script = f"ray start --address=$LWS_LEADER_ADDRESS:{RAY_PORT} --block"
        c |= {"command": ["/bin/sh", "-c"], "args": [script]}
    else:
        c |= {"command": args[:1], "args": args[1:]}
    if leader:
        c["ports"] = [{"containerPort": PORT, "name": "http"}]
        c["readinessProbe"] = _probe(spec, 60)
        c["livenessProbe"] = _probe(spec, 600)
    return c


def _pod(spec: DeploySpec, w: Workload, leader: bool) -> dict:
    volumes = [
        {"name": "model-cache", "persistentVolumeClaim": {"claimName": f"{spec.name}-model-cache"}},
        {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}},
    ]
    if w.serve.files:
        volumes.append({"name": "engine-config", "configMap": {"name": f"{_name(spec, w)}-config"}})
    return {
        "nodeSelector": {GPU_LABEL: spec.gpu_product},
        "containers": [_container(spec, w, leader)],
        "volumes": volumes,
    }


def _workload(spec: DeploySpec, w: Workload) -> dict:
    name = _name(spec, w)
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/component": w.role}
    meta = {"name": name, "labels": labels}
    if w.nodes == 1:
        template = {"metadata": {"labels": labels}, "spec": _pod(spec, w, True)}
        body = {"replicas": w.replicas, "selector": {"matchLabels": labels}, "template": template}
        return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": body}
    group = {
        "size": w.nodes,
        "leaderTemplate": {"metadata": {"labels": labels}, "spec": _pod(spec, w, True)},
        "workerTemplate": {"metadata": {"labels": labels}, "spec": _pod(spec, w, False)},
    }
    body = {"replicas": w.replicas, "leaderWorkerTemplate": group}
    return {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet", "metadata": meta, "spec": body}


def _service(spec: DeploySpec, w: Workload) -> dict:
    name = _name(spec, w)
    selector = {"app.kubernetes.io/name": name}
    if w.nodes > 1:
        selector["leaderworkerset.sigs.k8s.io/worker-index"] = "0"  # the leader serves the API
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {"selector": selector, "ports": [{"name": "http", "port": PORT, "targetPort": PORT}]},
    }


def cache_size(spec: DeploySpec) -> str:
    """The claim: the checkpoint with 50 % room (tokenizer, a second revision), whole GiB."""
    return f"{max(math.ceil(spec.weights_bytes * 1.5 / units.GiB), 10)}Gi"


def _claim(spec: DeploySpec) -> dict:
    """ReadWriteMany, so every replica and node shares one download (needs a storage class that offers it)."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": f"{spec.name}-model-cache"},
        "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": cache_size(spec)}}},
    }


def _autoscaler(spec: DeploySpec, w: Workload) -> dict | None:
    """From the plan's replicas up to twice as many, adding pods while more than 5 requests wait per pod
    on average: a starting point to tune, not a figure the plan derives. None where no queue gauge is known."""
    metric = QUEUE_METRIC.get(spec.engine)
    if metric is None:
        return None
    target = _workload(spec, w)
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": _name(spec, w)},
        "spec": {
            "scaleTargetRef": {"apiVersion": target["apiVersion"], "kind": target["kind"], "name": _name(spec, w)},
            "minReplicas": w.replicas,
            "maxReplicas": 2 * w.replicas,
            "metrics": [
                {
                    "type": "Pods",
                    "pods": {
                        "metric": {"name": metric},
                        "target": {"type": "AverageValue", "averageValue": "5"},
                    },
                }
            ],
        },
    }


def manifests(spec: DeploySpec, autoscale: bool = False) -> list[dict]:
    """Every object, in the order to apply them."""
    out = [_claim(spec)]
    for w in spec.workloads:
        if w.serve.files:
            data = dict(w.serve.files)
            meta = {"name": f"{_name(spec, w)}-config"}
            out.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data})
        out += [_workload(spec, w), _service(spec, w)]
        if autoscale and (hpa := _autoscaler(spec, w)) is not None:
            out.append(hpa)
    return out
