"""``python -m core deploy``: the deployment files of the plan ``check`` would make, for one target
(:mod:`core.deploy`): printed with ``---`` between files, or written under ``--out DIR``.

Exit status 0 when written; 2 with a one-line message for bad arguments or a deployment the target
cannot express (e.g. production-stack with SGLang).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from core.cli.args import UsageError, deployment_arguments, deployment_from_args
from core.cli.check import add_requirement_arguments, requirement_from_args
from core.deploy.files import TARGETS, render
from core.deploy.spec import from_plan
from core.planning.check import check
from core.spec.catalog import load_catalog


def add_deploy_parser(sub) -> None:
    dep = sub.add_parser("deploy", help="deployment files for the plan: Kubernetes, Compose, Helm values")
    deployment_arguments(dep, max_model_len_default="the P95 prompt + P95 answer, rounded up to a power of two")
    add_requirement_arguments(dep)
    dep.add_argument("--target", choices=TARGETS, required=True, help="what to write")
    dep.add_argument("--out", help="directory to write the files into (default: print them)")
    dep.add_argument(
        "--autoscale",
        action="store_true",
        help="k8s: add a HorizontalPodAutoscaler on the engine's queue metric (needs a Prometheus adapter)",
    )


def run_deploy(args: argparse.Namespace) -> str:
    req = requirement_from_args(args)
    dep, _ = deployment_from_args(args, load_catalog(), req.longest_request)
    files = render(from_plan(check(dep, req)), args.target, autoscale=args.autoscale)
    if args.out is None:
        return "---\n".join(text if text.endswith("\n") else text + "\n" for text in files.values()).rstrip("\n")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out: {out} exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
        written.append(str(out / name))
    return "\n".join(f"wrote {path}" for path in written)
