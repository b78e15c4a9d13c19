"""The deployment files of a target as text: YAML by PyYAML's safe dumper (key order kept, no aliases), several
Kubernetes objects joined by ``---``; :func:`bundle` zips them for a download."""

from __future__ import annotations

import io
import zipfile

import yaml

from core.deploy.compose import compose
from core.deploy.helm import llm_d, production_stack
from core.deploy.kubernetes import HEADER, manifests
from core.deploy.spec import DeploySpec

TARGETS = ("k8s", "compose", "production-stack", "llm-d")


class _Dumper(yaml.SafeDumper):
    """safe_dump's dumper, writing a repeated mapping out again rather than as an anchor and alias."""

    def ignore_aliases(self, data) -> bool:
        return True


def _dump(doc) -> str:
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=1000)


def _header(spec: DeploySpec, target: str) -> str:
    roles = ", ".join(f"{w.role} x{w.replicas} ({w.gpus} GPUs)" for w in spec.workloads)
    return f"# {target} for {spec.model} on {spec.engine} {spec.release}: {roles}\n"


def render(spec: DeploySpec, target: str, autoscale: bool = False) -> dict[str, str]:
    """{file name: text} of ``target``; :class:`core.deploy.spec.DeployError` where it cannot be written."""
    if target == "k8s":
        docs = manifests(spec, autoscale)
        body = "---\n".join(_dump(d) for d in docs)
        return {f"{spec.name}-k8s.yaml": _header(spec, target) + HEADER + body}
    if target == "compose":
        return {"compose.yaml": _header(spec, target) + _dump(compose(spec))}
    if target == "production-stack":
        text = _header(spec, target) + HEADER + _dump(production_stack(spec))
        return {f"{spec.name}-production-stack-values.yaml": text}
    if target == "llm-d":
        return {f"{spec.name}-llm-d-values.yaml": _header(spec, target) + HEADER + _dump(llm_d(spec))}
    raise ValueError(f"--target must be one of {', '.join(TARGETS)}, not {target!r}")


def render_all(spec: DeploySpec) -> tuple[dict[str, dict[str, str]], list[str]]:
    """Every target's files for ``spec`` (target -> file name -> text), and "target: why" for each target
    that cannot be written for it."""
    from core.deploy.spec import DeployError

    written, refused = {}, []
    for target in TARGETS:
        try:
            written[target] = render(spec, target)
        except DeployError as e:
            refused.append(f"{target}: {e}")
    return written, refused


def bundle(spec: DeploySpec) -> bytes:
    """A zip of every target that can be written for ``spec``, and a note naming those that cannot."""
    written, refused = render_all(spec)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for files in written.values():
            for name, text in files.items():
                z.writestr(name, text)
        if refused:
            z.writestr("NOT-WRITTEN.txt", "\n".join(refused) + "\n")
    return buffer.getvalue()
