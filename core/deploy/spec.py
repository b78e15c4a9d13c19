"""What a deployment file describes, from a plan or a search point: the engine image at the plan's
release, one workload per role (the replicas, or the prefill and decode instances) and each one's
engine arguments, taken from :func:`core.planning.launch.serve_command` (the one place they are made).

Sources, read in each engine's source or docs:
- Health endpoints, all ``GET /health`` (read in each engine's source, 2026-12-04): vLLM
  vllm/entrypoints/serve/instrumentator/health.py, ``@router.get("/health", response_class=Response)``, 200 or
  503 once the engine is dead (vllm/entrypoints/openai/api_server.py in older releases); SGLang
  python/sglang/srt/entrypoints/http_server.py (its native API docs list ``/health`` and ``/health_generate``);
  trtllm-serve: docs/source/commands/trtllm-serve.rst, "The server also supports ... /health, /metrics".
- Images: ``vllm/vllm-openai:v<release>`` (Docker Hub, the vLLM docs' "Using Docker");
  ``lmsysorg/sglang:v<release>`` from 0.5 (plain tags such as ``v0.5.6.post1``, ``v0.5.12`` and ``v0.5.15``
  appear in public deployment files; the CUDA-suffixed ones like ``v0.5.12-cu130`` are alternatives), and
  ``v<release>-cu124`` before 0.5 (``lmsysorg/sglang:v0.4.6.post5-cu124`` in sgl-project/sglang#4655);
  ``nvcr.io/nvidia/tensorrt-llm/release:<release>`` (the TensorRT-LLM quick start guide,
  nvidia.github.io/TensorRT-LLM/quick-start-guide.html, e.g. ``release:1.3.0rc5``).
- Disaggregated prefill/decode: vLLM ``--kv-transfer-config '{"kv_connector":"NixlConnector",
  "kv_role":"kv_both"}'`` (docs/features/nixl_connector_usage.md), NixlConnector released in 0.9.0
  (ai-dynamo/dynamo#1345; upstreamed in vllm-project/vllm#17749 onward); SGLang ``--disaggregation-mode
  prefill|decode`` (docs/advanced_features/pd_disaggregation.md, the PD framework of
  sgl-project/sglang#4654; taken from 0.4.6, the first release its PD tracker #4655 reports running).
  TensorRT-LLM's (``trtllm-serve disaggregated`` with a cache-transceiver config) is not written here.
  Either way a router sends each request to a prefill and then a decode instance (llm-d's routing
  sidecar, the production stack's router, SGLang's mini_lb): these files start the engines only.
- Multi-node instances (more GPUs than a node holds): vLLM over Ray (``ray start`` on every pod of the
  group, ``--distributed-executor-backend ray`` on the leader, as vLLM's LeaderWorkerSet example);
  SGLang ``--nnodes N --node-rank R --dist-init-addr LEADER:PORT``; TensorRT-LLM (mpirun) refused.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

from core.planning.check import Plan, check
from core.planning.launch import ServeCommand, serve_command
from core.planning.requirement import Requirement
from core.spec.cluster import GPUS_PER_NODE

PORT = 8000
HEALTH_PATH = {"vllm": "/health", "sglang": "/health", "trtllm": "/health"}
QUEUE_METRIC = {"vllm": "vllm:num_requests_waiting", "sglang": "sglang:num_queue_reqs"}
"""Prometheus gauges of requests waiting for a slot (vLLM's metrics docs; SGLang's production metrics)."""
VLLM_NIXL_FROM, SGLANG_PD_FROM = (0, 9, 0), (0, 4, 6)
RAY_PORT, SGLANG_DIST_PORT = 6379, 20000
CONFIG_DIR = "/etc/llm-config"


class DeployError(ValueError):
    """A deployment these files cannot express; its message is one line naming what."""


@dataclass(frozen=True)
class Workload:
    """One role's pods: ``replicas`` instances of ``gpus`` GPUs each over ``nodes`` nodes."""

    role: str  # "engine", "prefill" or "decode"
    replicas: int
    gpus: int
    nodes: int
    serve: ServeCommand
    extra_args: tuple[str, ...]
    """Arguments the deployment adds after the plan's: address and port, the KV-transfer role."""
    tp: int = 1
    dp: int = 1

    @property
    def gpus_per_node(self) -> int:
        return self.gpus // self.nodes

    @property
    def args(self) -> tuple[str, ...]:
        """The leader's full argument list: the plan's, then the deployment's."""
        return self.serve.args + self.extra_args


@dataclass(frozen=True)
class DeploySpec:
    name: str
    engine: str
    release: str
    image: str
    model: str
    gpu_product: str
    gpu_resource: str
    workloads: tuple[Workload, ...]
    max_model_len: int
    weights_bytes: float


def image(engine: str, version: tuple[int, int, int]) -> str:
    number = ".".join(str(v) for v in version)
    if engine == "sglang":
        return f"lmsysorg/sglang:v{number}" + ("-cu124" if version < (0, 5, 0) else "")
    if engine == "trtllm":
        return f"nvcr.io/nvidia/tensorrt-llm/release:{number}"
    return f"vllm/vllm-openai:v{number}"


def _network_args(engine: str) -> tuple[str, ...]:
    return ("--host", "0.0.0.0", "--port", str(PORT))  # nosec B104: a container listens on its pod IP


def _role_args(plan: Plan, role: str) -> tuple[str, ...]:
    release = plan.deployment.engine.release
    if role == "engine":
        return ()
    if release.engine == "vllm":
        if not release.at_least(VLLM_NIXL_FROM):
            raise DeployError(f"{release.name} has no NixlConnector for disaggregated prefill (vLLM 0.9.0 on)")
        return ("--kv-transfer-config", json.dumps({"kv_connector": "NixlConnector", "kv_role": "kv_both"}))
    if release.engine == "sglang":
        if not release.at_least(SGLANG_PD_FROM):
            raise DeployError(f"{release.name}: --disaggregation-mode is written for SGLang 0.4.6 on")
        return ("--disaggregation-mode", role)
    raise DeployError(f"{release.name}: disaggregated serving (trtllm-serve disaggregated) is not written by deploy")


def _workload(plan: Plan, role: str, replicas: int) -> Workload:
    dep = plan.deployment
    gpus = dep.parallel.num_gpus
    nodes = max(1, -(-gpus // GPUS_PER_NODE))
    if nodes > 1 and dep.engine.release.engine == "trtllm":
        raise DeployError(
            f"{dep.engine.release.name}: an instance over {nodes} nodes needs an MPI launch, not written by deploy"
        )
    if nodes > 1 and gpus % nodes:
        raise DeployError(f"tp x pp x dp = {gpus} GPUs do not split evenly over {nodes} nodes of {GPUS_PER_NODE}")
    extra = _role_args(plan, role) + _network_args(dep.engine.release.engine)
    if nodes > 1 and dep.engine.release.engine == "vllm":
        extra += ("--distributed-executor-backend", "ray")
    par = dep.parallel
    return Workload(role, replicas, gpus, nodes, serve_command(plan), extra, tp=par.tp, dp=par.dp)


def _slug(text: str) -> str:
    out = "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")
    while "--" in out:
        out = out.replace("--", "-")
    return out[:40].strip("-") or "llm"


def _spec(plan: Plan, workloads: tuple[Workload, ...]) -> DeploySpec:
    dep = plan.deployment
    release = dep.engine.release
    amd = dep.gpu.vendor.lower().startswith("amd")
    return DeploySpec(
        name=_slug(dep.model.id),
        engine=release.engine,
        release=release.number,
        image=image(release.engine, release.version),
        model=dep.model.hf_id or dep.model.id,
        gpu_product=dep.gpu.name.replace(" ", "-"),
        gpu_resource="amd.com/gpu" if amd else "nvidia.com/gpu",
        workloads=workloads,
        max_model_len=dep.max_model_len,
        weights_bytes=float(plan.estimate.memory.weights) * dep.parallel.num_gpus,
    )


def from_plan(plan: Plan) -> DeploySpec:
    """The plan's replicas, each running the plan's serve command."""
    return _spec(plan, (_workload(plan, "engine", max(plan.requirement.replicas, 1)),))


def from_candidate(candidates, i: int, req: Requirement) -> DeploySpec:
    """A search point (:class:`core.planning.search.Candidates` row ``i``): its shape checked at the
    requirement (for the serve command's batch), its replicas or its prefill and decode instances."""
    dep = candidates.shapes[int(candidates.shape[i])]
    if int(candidates.mode[i]) == 0:
        replicas = int(candidates.replicas[i])
        plan = check(dep, dataclasses.replace(req, replicas=replicas))
        return _spec(plan, (_workload(plan, "engine", replicas),))
    prefill, decode = int(candidates.prefill[i]), int(candidates.decode[i])
    plan = check(dep, dataclasses.replace(req, replicas=decode))
    return _spec(plan, (_workload(plan, "prefill", prefill), _workload(plan, "decode", decode)))
