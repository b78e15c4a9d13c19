"""What every exported report carries beside its numbers: when it was made, by which release of the
tool, its inputs in plain words, and the link that reopens the view it came from.

The date honours ``SOURCE_DATE_EPOCH`` (the reproducible-builds convention), so a report made twice
from the same inputs can be byte-identical (the CLI's golden tests set it).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from importlib import metadata
from typing import Any

from core.messages import message
from core.spec.deployment import Deployment, Workload
from core.spec.efficiency import default_efficiency

PACKAGE = "llm-tradeoff-explorer"
DATE_FORMAT = "%Y-%m-%d %H:%M UTC"


def tool_version() -> str:
    """The installed release of this tool (pyproject's version), or "unknown" when run uninstalled."""
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return "unknown"


def generated_at(now: datetime | None = None) -> str:
    """The report's date in UTC, e.g. "2026-12-02 17:50 UTC"; ``SOURCE_DATE_EPOCH`` fixes it."""
    if now is None:
        epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
        now = datetime.fromtimestamp(int(epoch), UTC) if epoch.isdigit() else datetime.now(UTC)
    return now.astimezone(UTC).strftime(DATE_FORMAT)


def provenance(link: str | None = None) -> dict[str, Any]:
    """The ``report`` block of every export: date, tool version and (from the UI) the restoring link."""
    return {"generated_at": generated_at(), "tool_version": tool_version(), "link": link}


def deployment_inputs(dep: Deployment, lang: str = "en") -> list[tuple[str, str]]:
    """The setup as (label, value) pairs a reader understands without the tool's keys."""
    t = lambda key, **kw: message(key, lang, **kw)  # noqa: E731
    par, engine = dep.parallel, dep.engine
    rows = [
        (t("report.model"), f"{dep.model.name} ({dep.model.id})"),
        (
            t("report.gpus"),
            t("report.gpus_value", count=par.num_gpus, gpu=dep.gpu.name, tp=par.tp, pp=par.pp)
            + (t("report.dp_value", dp=par.dp, ep=par.tp * par.dp) if par.dp > 1 else ""),
        ),
        (t("report.weights"), dep.weights.label),
        (t("report.kv"), dep.kv.label),
        (t("report.engine"), engine.release.name),
        (t("report.memory_fraction"), f"{dep.memory_fraction:.3g}"),
        (t("report.max_model_len"), t("report.tokens", tokens=f"{dep.max_model_len:,}")),
    ]
    if engine.max_num_seqs is not None:
        rows.append(("max_num_seqs", f"{engine.max_num_seqs:,}"))
    if engine.max_num_batched_tokens is not None:
        rows.append(("max_num_batched_tokens", f"{engine.max_num_batched_tokens:,}"))
    levers = message("plan.list_separator", lang).join(t(f"levers.short_{name}") for name in dep.levers.active)
    rows.append((t("report.levers"), levers or t("report.no_levers")))
    rows.append((t("report.efficiency"), efficiency_words(dep, lang)))
    price = dep.gpu.price_per_hour
    rows.append((t("report.price"), f"${price:,.2f}/h" if price else t("report.no_price")))
    return rows


def efficiency_words(dep: Deployment, lang: str = "en") -> str:
    """The speed assumptions as a reader checks them: compute, bandwidth and (MoE) expert
    efficiency, then whether they are this GPU class's defaults for the release or were set."""
    eff, engine = dep.efficiency, dep.engine
    shown = f"compute {eff.compute:.2f}, bandwidth {eff.bandwidth:.2f}"
    if dep.model.moe is not None:
        shown += f", experts {eff.expert:.2f}"
    default = default_efficiency(dep.gpu.memory_type, engine.release)
    fields = ("compute", "bandwidth", "expert", "step_overhead_s", "request_overhead_s", "layer_overhead_s")
    same = all(getattr(eff, f) == getattr(default, f) for f in fields)
    key = "report.efficiency_default" if same else "report.efficiency_set"
    return message(key, lang, values=shown, gpu_class=dep.gpu.memory_type.upper(), release=engine.release.name)


def workload_inputs(work: Workload, lang: str = "en") -> list[tuple[str, str]]:
    """The Explorer's workload in words: B requests of I prompt and O answer tokens."""
    t = lambda key, **kw: message(key, lang, **kw)  # noqa: E731
    return [
        (t("report.prompt"), t("report.tokens", tokens=f"{work.input_len:,}")),
        (t("report.answer"), t("report.tokens", tokens=f"{work.output_len:,}")),
        (t("report.batch"), f"{work.batch:,}"),
    ]


def header_lines(report: dict[str, Any], lang: str = "en") -> list[str]:
    """The provenance as Markdown lines (the HTML reports escape the same sentences)."""
    lines = [message("report.made", lang, date=report["generated_at"], version=report["tool_version"])]
    if report.get("link"):
        lines.append(message("report.link", lang, link=report["link"]))
    return lines
