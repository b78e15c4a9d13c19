"""A plan's answer in words, the same on the page, in the reports and the CLI: the verdict and what
binds, the cheapest working fix with its price, the wait for a slot when the engine is full, the
steady state to quote and the cost (with whether the setup delivers the load).
"""

from __future__ import annotations

from typing import Any

from core.messages import duration, message, rate
from core.planning.check import Plan
from core.planning.fixes import Fix
from core.report.money import Rate, money


def verdict_sentence(plan: Plan, lang: str = "en") -> str:
    """The verdict naming the worst limit and by how much, then any other failing limits, worst first."""
    b = plan.binding
    sentence = message(
        f"plan.verdict_{plan.verdict}", lang, binding=message(f"check.{b.name}", lang), ratio=percent_text(b.ratio)
    )
    others = [c for c in plan.failing if c is not b]
    if not others:
        return sentence
    listed = message("plan.list_separator", lang).join(
        f"{message(f'check.{c.name}', lang)} ({percent_text(c.ratio)})" for c in others
    )
    return sentence + message("plan.also_failing", lang, checks=listed)


def plan_answer(plan: Plan, fixes: list[Fix], lang: str = "en", rate: Rate | None = None) -> str:
    """The Plan's answer in one sentence, first on the page, in the reports and the CLI: the
    verdict and what binds, the cheapest fix that works (with its price; a cheaper one that changes
    the answers named after it), and the figures to quote; prices in Chinese in CNY at ``rate`` (the
    reference rate unless given)."""
    parts = [verdict_sentence(plan, lang)]
    if plan.verdict != "feasible":
        working = [f for f in fixes if f.plan.verdict == "feasible"]
        if not working:
            parts.append(message("answer.plan_no_fix", lang))
        else:
            best = working[0]  # fixes are ranked: same model and quality first, then cheapest
            parts.append(message("answer.plan_fix", lang, fix=_fix_words(best, lang, rate)))
            cheaper = [
                f
                for f in working
                if not f.keeps_quality
                and f.cost_per_hour is not None
                and (best.cost_per_hour is None or f.cost_per_hour < best.cost_per_hour)
            ]
            if best.keeps_quality and cheaper:
                cheapest = min(cheaper, key=lambda f: f.cost_per_hour)
                parts.append(message("answer.plan_cheaper", lang, fix=_fix_words(cheapest, lang, rate)))
    parts.append(operating_point(plan, lang))
    return " ".join(parts)


def _fix_words(fix: Fix, lang: str, rate: Rate | None = None) -> str:
    """ "NVIDIA A100 PCIe 80GB (1 GPU, $1.79/h)"."""
    gpus = message("answer.gpu_count_one" if fix.num_gpus == 1 else "answer.gpu_count_many", lang, count=fix.num_gpus)
    return f"{fix.lever.text(lang)} ({gpus}, {price_text(fix.cost_per_hour, lang, rate)})"


def quoted_ttft_s(plan: Plan) -> float:
    """The TTFT to quote for the plan: the steady state's plus the wait for a slot [s]."""
    return float(plan.state.ttft_s) + plan.queue_wait_s


def quoted_e2e_s(plan: Plan) -> float:
    """The E2E latency to quote for the plan: the steady state's plus the wait for a slot [s]."""
    return float(plan.state.e2e_s) + plan.queue_wait_s


def queue_sentence(plan: Plan, lang: str = "en") -> str | None:
    """What the full engine does to the load: None below the admission ceiling."""
    if plan.unbounded:
        return message("plan.queue_unbounded", lang, running=f"{plan.running:,.0f}")
    if plan.queued:
        return message("plan.queue_waiting", lang, running=f"{plan.running:,.0f}", wait=duration(plan.queue_wait_s))
    return None


def operating_point(plan: Plan, lang: str = "en") -> str:
    """The steady-state figures to quote for this plan (the same sentence on the page, in the
    reports and the CLI): TTFT with any admission wait, TPOT, E2E and the output rate delivered."""
    state = plan.state
    if plan.unbounded or not state.stable:
        return message("plan.steady_unbounded", lang, running=f"{plan.running:,.0f}")
    return message(
        "plan.steady",
        lang,
        running=_count(plan.running),
        ttft=duration(quoted_ttft_s(plan)),
        tpot=duration(float(state.tpot_s)),
        e2e=duration(quoted_e2e_s(plan)),
        rate=rate(plan.output_tokens_per_s / plan.requirement.replicas),
    )


def _count(value: float) -> str:
    """A request count as people read it: 13, 2.4."""
    return f"{value:,.0f}" if abs(value - round(value)) < 0.05 else f"{value:,.1f}"


def cost_sentence(cost: dict[str, Any], lang: str = "en") -> str:
    """The cost line; a users load names the user-month, a load the setup cannot serve says so."""
    million = cost["per_million_output_tokens_usd"]
    text = message(
        "plan.cost_hour_million",
        lang,
        per_hour=f"{cost['per_hour_usd']:,.2f}",
        per_million="∞" if million is None else f"{million:,.3f}",
    )
    if cost["per_user_month_usd"] is not None:
        text += message("plan.cost_user_month", lang, per_user=f"{cost['per_user_month_usd']:,.2f}")
    if not cost.get("achievable", True):
        text += message("plan.cost_not_achievable", lang, share=f"{cost['delivered_share']:.0%}")
    return text


def percent_text(ratio: float) -> str:
    """A need / limit ratio as the verdict and the checks print it: whole percents, or ∞."""
    return "∞" if ratio == float("inf") else f"{ratio:.0%}"


def price_text(cost_per_hour: float | None, lang: str = "en", rate: Rate | None = None) -> str:
    """ "$12.34/h" (in Chinese CNY at ``rate`` first, :func:`core.report.money.money`), or "no catalog price"
    where the GPU has none (enter one to rank it by cost)."""
    return message("plan.no_catalog_price", lang) if cost_per_hour is None else money(cost_per_hour, lang, rate)
