"""Downloads of the deployment files (:mod:`core.deploy`): the plan's, and one for the search point the
user picks among those the Plan page shows. Each zip is built when its button is clicked; a target that
cannot be written for the deployment is named in the zip's NOT-WRITTEN.txt."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable

import streamlit as st

from core.deploy.files import bundle
from core.deploy.point import from_point
from core.deploy.spec import DeployError, DeploySpec, from_plan
from core.planning.check import Plan
from core.planning.requirement import Requirement
from core.spec.deployment import Deployment
from ui.download import download_button
from ui.i18n import t

MIME = "application/zip"


def _zip(make: Callable[[], DeploySpec]) -> bytes:
    """The bundle of ``make()``'s spec, or a zip holding only why none could be written."""
    try:
        return bundle(make())
    except DeployError as err:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as z:
            z.writestr("NOT-WRITTEN.txt", f"{err}\n")
        return buffer.getvalue()


def _point_label(p: dict) -> str:
    layout = f"tp{p['tp']}" + (f" pp{p['pp']}" if p["pp"] > 1 else "") + (f" dp{p['dp']}" if p.get("dp", 1) > 1 else "")
    if p["mode"] == "disaggregated":
        split = f"{p['prefill_instances']}P{p['decode_instances']}D"
    else:
        split = f"x{p['replicas']}"
    return f"{p['num_gpus']} GPUs {p['gpu']} {layout} {p['weight_dtype']}/{p['kv_dtype']} {split}"


def deploy_downloads(plan: Plan, base: Deployment, req: Requirement, searched: dict | None) -> DeploySpec | None:
    """The section: the plan's zip, and when the search ran, a choice of its shown points and that one's zip.
    Returns the plan's deployment (its reports list the files), None where none can be written."""
    st.subheader(t("deploy.title"))
    st.caption(t("deploy.caption"))
    spec = None
    try:
        spec = from_plan(plan)
        name = spec.name
    except DeployError as err:
        st.info(t("deploy.not_written", reason=str(err)))
    else:
        download_button(
            st.container(),  # a DeltaGenerator, as every other download of the page (tests record its method)
            t("deploy.download_plan"),
            lambda: _zip(lambda: from_plan(plan)),
            file_name=f"{name}-deploy.zip",
            mime=MIME,
            key="deploy_plan_zip",
        )
    if not searched:
        return spec
    shown = {_point_label(p): p for p in [*searched["pareto"], *searched["pareto_throughput"]]}
    if not shown:
        return spec
    label = st.selectbox(t("deploy.point"), list(shown), key="deploy_point")
    point = shown[label]
    download_button(
        st.container(),
        t("deploy.download_point"),
        lambda: _zip(lambda: from_point(base, point, req)),
        file_name=f"{plan.deployment.model.id}-{point['gpu']}-{point['mode']}-deploy.zip",
        mime=MIME,
        key="deploy_point_zip",
    )
    return spec
