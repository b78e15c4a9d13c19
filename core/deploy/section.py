"""The plan report's "Deployment files" section (:data:`core.report.blocks.Section`): what each target
writes for this plan, the commands that apply it, and the targets that cannot be written, for the
renderers every export shares (English, as the CLI; the lead wires it into the reports)."""

from __future__ import annotations

from core.deploy.files import TARGETS, render
from core.deploy.spec import DeployError, DeploySpec
from core.report.blocks import Block, Section

APPLY = {
    "k8s": "kubectl apply -f {file}",
    "compose": "HF_TOKEN=hf_... docker compose -f {file} up -d",
    "production-stack": "helm install vllm vllm/vllm-stack -f {file}",
    "llm-d": "helm install ms llm-d-modelservice/llm-d-modelservice -f {file}",
}
"""How each file is applied (the production stack's and llm-d's charts from their Helm repositories)."""


def deploy_section(spec: DeploySpec) -> Section:
    rows, refused = [], []
    for target in TARGETS:
        try:
            files = render(spec, target)
        except DeployError as err:
            refused.append(f"{target}: {err}")
            continue
        rows += [(target, name, APPLY[target].format(file=name)) for name in files]
    roles = ", ".join(f"{w.role} x{w.replicas} ({w.gpus} GPUs, {w.nodes} node(s) each)" for w in spec.workloads)
    blocks = [
        Block("p", (f"{spec.model} on {spec.engine} {spec.release} ({spec.image}): {roles}.",)),
        Block("table", tuple(rows), ("target", "file", "apply")),
        Block("code", tuple(" ".join(w.args) for w in spec.workloads)),
        Block(
            "list",
            (
                "Create the Secret first: kubectl create secret generic hf-token --from-literal=HF_TOKEN=hf_...",
                f"The node label nvidia.com/gpu.product={spec.gpu_product} must match your cluster's.",
            ),
        ),
    ]
    if refused:
        blocks.append(Block("list", tuple(refused)))
    return ("Deployment files", blocks)
