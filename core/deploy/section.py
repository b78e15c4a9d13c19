"""The plan report's "Deployment files" section (:data:`core.report.blocks.Section`): what each target
writes for this plan, the commands that apply it, and the targets that cannot be written, for the
renderers every export shares, in the document's language."""

from __future__ import annotations

from core.deploy.files import render_all
from core.deploy.spec import DeploySpec
from core.messages import message
from core.report.blocks import Block, Section

APPLY = {
    "k8s": "kubectl apply -f {file}",
    "compose": "HF_TOKEN=hf_... docker compose -f {file} up -d",
    "production-stack": "helm install vllm vllm/vllm-stack -f {file}",
    "llm-d": "helm install ms llm-d-modelservice/llm-d-modelservice -f {file}",
}
"""How each file is applied (the production stack's and llm-d's charts from their Helm repositories)."""


def deploy_section(spec: DeploySpec, lang: str = "en") -> Section:
    """What each target writes for ``spec``, how it is applied, the engine arguments of each workload,
    the two steps before applying, and the targets refused with why (in the document's language)."""
    t = lambda key, **kw: message(key, lang, **kw)  # noqa: E731
    written, refused = render_all(spec)
    rows = [(target, name, APPLY[target].format(file=name)) for target, files in written.items() for name in files]
    roles = ", ".join(
        t("deploy.section_role", role=w.role, replicas=w.replicas, gpus=w.gpus, nodes=w.nodes) for w in spec.workloads
    )
    head = t("deploy.section_line", model=spec.model, engine=spec.engine, release=spec.release, image=spec.image)
    blocks = [
        Block("p", (f"{head} {roles}",)),
        Block("table", tuple(rows), (t("deploy.section_target"), t("deploy.section_file"), t("deploy.section_apply"))),
        Block("code", tuple(" ".join(w.args) for w in spec.workloads)),
        Block(
            "list",
            (
                t("deploy.section_secret"),
                t("deploy.section_label", product=spec.gpu_product),
            ),
        ),
    ]
    if refused:
        blocks.append(Block("list", tuple(refused)))
    return (t("deploy.title"), blocks)
