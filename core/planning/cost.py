"""Money: price per GPU-hour to cost per hour, per million output tokens and per user-month."""

from __future__ import annotations

from dataclasses import dataclass

from core.planning.check import Plan

HOURS_PER_MONTH = 730  # 365 x 24 / 12
SECONDS_PER_HOUR = 3600
TOKENS_PER_MILLION = 1e6


@dataclass(frozen=True)
class Cost:
    per_hour: float
    """All GPUs of all replicas [USD/h]."""
    per_million_output_tokens: float
    """At the plan's steady output rate [USD per 1e6 tokens]; infinite when it produces nothing."""
    per_user_month: float | None
    """For a users load: monthly cost / users [USD]."""


def cost_per_hour(num_gpus: int, price_per_gpu_hour: float | None) -> float | None:
    """All GPUs of all replicas [USD/h] = GPUs x price per GPU-hour; None without a price."""
    return num_gpus * price_per_gpu_hour if price_per_gpu_hour else None


def cost(plan: Plan, price_per_gpu_hour: float) -> Cost:
    """per hour = GPUs x price; per 1M tokens = per hour / (tokens/s x 3600) x 1e6; per user-month =
    per hour x 730 / users."""
    if not price_per_gpu_hour > 0:
        raise ValueError(f"price per GPU-hour must be above 0, got {price_per_gpu_hour!r}")
    per_hour = cost_per_hour(plan.num_gpus, price_per_gpu_hour)
    tokens_per_hour = plan.output_tokens_per_s * SECONDS_PER_HOUR
    per_million = per_hour / tokens_per_hour * TOKENS_PER_MILLION if tokens_per_hour > 0 else float("inf")
    users = plan.requirement.users if plan.requirement.load == "users" else None
    return Cost(
        per_hour=per_hour,
        per_million_output_tokens=per_million,
        per_user_month=per_hour * HOURS_PER_MONTH / users if users else None,
    )
