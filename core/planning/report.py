"""A plan as plain data (JSON/CSV), as text for the CLI, and as a one-page Markdown or HTML report.

Text comes from the message catalog, so reports exist in English and Chinese.
"""

from __future__ import annotations

from typing import Any

from core.energy.report import EnergyInputs, energy_dict
from core.estimate.provenance import deployment_inputs, provenance
from core.messages import duration, message
from core.planning.answer import (
    cost_sentence,
    percent_text,
    plan_answer,
    price_text,
    queue_sentence,
    quoted_e2e_s,
    quoted_ttft_s,
    verdict_sentence,
)
from core.planning.check import Check, Plan
from core.planning.cost import Cost
from core.planning.fixes import Fix
from core.planning.launch import ServeCommand
from core.planning.requirement import Requirement
from core.planning.solve import GpuOption, Sizing
from core.report.money import Rate
from core.spec import units


def _value(check: Check, value: float) -> str:
    if value == float("inf"):
        return "∞"
    if check.unit == "bytes":
        return f"{value / units.GiB:,.2f} GiB"
    if check.unit == "s":
        return duration(value)
    if check.unit == "tokens/s":
        return f"{value:,.0f} tok/s"
    return f"{value:,.0f} tokens"


def check_to_dict(check: Check) -> dict[str, Any]:
    return {
        "name": check.name,
        "need": check.need,
        "limit": check.limit,
        "unit": check.unit,
        "headroom_ratio": round(check.ratio, 4) if check.ratio != float("inf") else None,
        "status": check.status,
    }


def _plan_numbers(plan: Plan) -> dict[str, Any]:
    state = plan.state
    return {
        "verdict": plan.verdict,
        "binding": plan.binding.name,
        "failing": [c.name for c in plan.failing],
        "num_gpus": plan.num_gpus,
        "in_flight_requests": round(plan.in_flight, 2),
        "running_requests": round(plan.running, 2),
        "queue": "unbounded" if plan.unbounded else ("waiting" if plan.queued else "none"),
        "queue_wait_ms": None if plan.unbounded else round(plan.queue_wait_s / units.MS, 1),
        # the steady state to quote: TTFT and E2E with the wait for a slot (None: no steady state)
        "ttft_ms": None if plan.unbounded or not state.stable else round(quoted_ttft_s(plan) / units.MS, 1),
        "tpot_ms": round(state.tpot_s / units.MS, 2) if state.stable and not plan.unbounded else None,
        "e2e_ms": None if plan.unbounded or not state.stable else round(quoted_e2e_s(plan) / units.MS, 1),
        "output_tokens_per_s": round(plan.output_tokens_per_s, 1),
    }


def requirement_inputs(req: Requirement, lang: str = "en") -> list[tuple[str, str]]:
    """The load and the service levels as (label, value) pairs in words."""
    t = lambda key, **kw: message(key, lang, **kw)  # noqa: E731
    load = {
        "users": lambda: t("report.load_users", users=f"{req.users:,}", think=f"{req.think_time_s:g}"),
        "in_flight": lambda: t("report.load_in_flight", in_flight=f"{req.in_flight:,}"),
        "rate": lambda: t("report.load_rate", rate=f"{req.rate_per_s:g}"),
    }[req.load]()
    rows = [
        (t("report.load"), load),
        (t("report.prompt"), t("report.length_p95", tokens=f"{req.prompt_len:,}", p95=f"{req.p95_prompt:,}")),
        (t("report.answer"), t("report.length_p95", tokens=f"{req.answer_len:,}", p95=f"{req.p95_answer:,}")),
        (
            t("report.ttft_slo"),
            t("report.none") if req.ttft_slo_s is None else f"≤ {req.ttft_slo_s / units.MS:,.0f} ms (P95)",
        ),
        (
            t("report.user_speed"),
            t("report.none")
            if req.tpot_slo_s is None
            else t(
                "report.user_speed_value", rate=f"{1 / req.tpot_slo_s:,.3g}", tpot=f"{req.tpot_slo_s / units.MS:,.3g}"
            ),
        ),
        (t("report.replicas"), f"{req.replicas:,}"),
    ]
    if req.shared_prefix_len:
        rows.append((t("report.shared_prefix"), t("report.tokens", tokens=f"{req.shared_prefix_len:,}")))
    return rows


def solvers_to_dict(
    max_load: float, max_prompt: int, sizing: Sizing | None, options: list[GpuOption], names: dict[str, str]
) -> dict[str, Any]:
    """The setup's limits (max load, longest prompt, fewest GPUs) and the cheapest catalog GPUs."""
    return {
        "max_load": max_load,
        "max_prompt_len": max_prompt,
        "min_gpus": None
        if sizing is None
        else {
            "num_gpus": sizing.num_gpus,
            "tp": sizing.tp,
            "replicas": sizing.replicas,
            "verdict": sizing.plan.verdict,
        },
        "cheapest_gpus": [
            {
                "gpu": o.gpu_id,
                "gpu_name": names.get(o.gpu_id, o.gpu_id),
                "num_gpus": o.sizing.num_gpus,
                "tp": o.sizing.tp,
                "replicas": o.sizing.replicas,
                "cost_per_hour": o.cost_per_hour,
                "verdict": o.sizing.plan.verdict,
            }
            for o in options
        ],
    }


def plan_to_dict(
    plan: Plan,
    fixes: list[Fix],
    command: ServeCommand,
    cost: Cost | None,
    lang: str = "en",
    *,
    solvers: dict[str, Any] | None = None,
    link: str | None = None,
    search: dict[str, Any] | None = None,
    energy: EnergyInputs | None = None,
    rate: Rate | None = None,
) -> dict[str, Any]:
    """The public JSON shape of ``python -m core check --json`` and of the Plan page's reports (README):
    the numbers, the inputs as keys and in words, the date, the tool version and the restoring link."""
    dep, req = plan.deployment, plan.requirement
    return {
        "report": provenance(link),
        **_plan_numbers(plan),
        "summary": verdict_sentence(plan, lang),
        "answer": plan_answer(plan, fixes, lang, rate),  # prices in CNY at ``rate`` in Chinese
        "inputs": [
            {"label": label, "value": value}
            for label, value in deployment_inputs(dep, lang) + requirement_inputs(req, lang)
        ],
        "worst_case_in_flight": plan.worst_case_in_flight,
        "requirement": {
            "load": req.load,
            "users": req.users,
            "think_time_s": req.think_time_s,
            "in_flight": req.in_flight,
            "rate_per_s": req.rate_per_s,
            "prompt_len": req.prompt_len,
            "answer_len": req.answer_len,
            "prompt_len_p95": req.p95_prompt,
            "answer_len_p95": req.p95_answer,
            "ttft_slo_ms": req.ttft_slo_s and req.ttft_slo_s / units.MS,
            "tpot_slo_ms": req.tpot_slo_s and req.tpot_slo_s / units.MS,
            "replicas": req.replicas,
            "shared_prefix_len": req.shared_prefix_len,
        },
        "deployment": {
            "model": dep.model.id,
            "gpu": dep.gpu.id,
            "tp": dep.parallel.tp,
            "pp": dep.parallel.pp,
            "weight_dtype": dep.weights.name,
            "kv_dtype": dep.kv.name,
            "max_model_len": dep.max_model_len,
            "gpu_memory_utilization": dep.memory_fraction,
            "levers": list(dep.levers.active),
        },
        "checks": [check_to_dict(c) for c in plan.checks],
        "fixes": [
            {
                "lever": f.lever.text(lang),
                "caveat": f.caveat.text(lang) if f.caveat else None,
                "cost_per_hour": f.cost_per_hour,
                **_plan_numbers(f.plan),
            }
            for f in fixes
        ],
        "cost": None
        if cost is None
        else {
            "per_hour_usd": round(cost.per_hour, 2),
            "per_million_output_tokens_usd": round(cost.per_million_output_tokens, 3)
            if cost.per_million_output_tokens != float("inf")
            else None,
            "per_user_month_usd": None if cost.per_user_month is None else round(cost.per_user_month, 2),
            "achievable": cost.achievable,
            "delivered_share": round(cost.delivered_share, 4),
        },
        "energy": energy_dict(plan.estimate, energy),  # at the planned in-flight batch (core.energy.power)
        "solvers": solvers,
        "search": search,
        "launch": {
            "engine": plan.deployment.engine.release.engine,
            "release": plan.deployment.engine.release.number,
            "command": command.command,
            "expected_log": list(command.expected_log),
            "needs_quantized_checkpoint": command.needs_quantized_checkpoint,
        },
    }


def headroom_line(check: Check, lang: str = "en") -> str:
    """e.g. "KV cache: 132% of budget (6.63 GiB of 5.02 GiB)"."""
    return message(
        "plan.headroom",
        lang,
        check=message(f"check.{check.name}", lang),
        ratio=percent_text(check.ratio),
        need=_value(check, check.need),
        limit=_value(check, check.limit),
    )


def fix_groups(fixes: list[Fix]) -> list[tuple[str, list[Fix]]]:
    """The ranked fixes split into their labelled groups (same model first), empty groups left out."""
    groups = [(g, [f for f in fixes if f.group == g]) for g in ("same_model", "other_model")]
    return [(g, fs) for g, fs in groups if fs]


def format_plan(data: dict[str, Any], plan: Plan, fixes: list[Fix], lang: str = "en") -> str:
    lines = [data["answer"], ""]
    lines += [message("plan.in_flight_line", lang, in_flight=f"{plan.in_flight:,.1f}", worst=plan.worst_case_in_flight)]
    if queue := queue_sentence(plan, lang):  # the operating point to quote ends the answer above
        lines.append(queue)
    tags = {s: message(f"status.{s}", lang) for s in ("ok", "marginal", "failed")}
    width = max(map(len, tags.values()))
    lines += [""] + [f"  [{tags[c.status]:{width}}] {headroom_line(c, lang)}" for c in plan.checks]
    if fixes:
        lines += ["", message("plan.fixes_title", lang)]
        for group, members in fix_groups(fixes):
            lines.append(f"  {message(f'plan.fix_group_{group}', lang)}")
            for fix in members:
                caveat = f" ({fix.caveat.text(lang)})" if fix.caveat else ""
                status = message(f"status.{'ok' if fix.plan.verdict == 'feasible' else 'marginal'}", lang)
                lines.append(
                    f"  - [{status}] {fix.lever.text(lang)}{caveat}: {message('counted.gpus', lang, n=fix.num_gpus)}, "
                    f"{price_text(fix.cost_per_hour, lang)}, {headroom_line(fix.plan.binding, lang)}"
                )
    if data["cost"]:
        lines += ["", cost_sentence(data["cost"], lang)]
    if solvers := data.get("solvers"):
        sizing = solvers["min_gpus"]
        lines += [
            "",
            message(
                "plan.solvers_line",
                lang,
                max_load=message(f"counted.{plan.requirement.load}", lang, n=f"{solvers['max_load']:,}"),
                max_prompt=solvers["max_prompt_len"],
                min_gpus=message(
                    "plan.min_gpus_value", lang, gpus=sizing["num_gpus"], replicas=sizing["replicas"], tp=sizing["tp"]
                )
                if sizing
                else message("plan.none", lang),
            ),
        ]
    lines += ["", data["launch"]["command"]] + [f"  {line}" for line in data["launch"]["expected_log"]]
    return "\n".join(lines)
