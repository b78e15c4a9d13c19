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
    delivered_share: float = 1.0
    """Output tokens/s the setup delivers over what the load asks for (at most 1): below 1 the
    load is not served as asked, and the cost per 1M tokens is at what the setup delivers."""

    @property
    def achievable(self) -> bool:
        """The setup delivers the output rate the load asks for."""
        return self.delivered_share >= 1.0


def cost_per_hour(num_gpus: int, price_per_gpu_hour: float | None) -> float | None:
    """All GPUs of all replicas [USD/h] = GPUs x price per GPU-hour; None without a price."""
    return num_gpus * price_per_gpu_hour if price_per_gpu_hour else None


def cost(plan: Plan, price_per_gpu_hour: float) -> Cost:
    """per hour = GPUs x price; per 1M tokens = per hour / (tokens/s x 3600) x 1e6 at the output rate
    the setup delivers (a full engine delivers less than a load above its ceiling asks for, which
    :attr:`Cost.delivered_share` states); per user-month = per hour x 730 / users."""
    if not price_per_gpu_hour > 0:
        raise ValueError(f"price per GPU-hour must be above 0, got {price_per_gpu_hour!r}")
    per_hour = cost_per_hour(plan.num_gpus, price_per_gpu_hour)
    tokens_per_hour = plan.output_tokens_per_s * SECONDS_PER_HOUR
    per_million = per_hour / tokens_per_hour * TOKENS_PER_MILLION if tokens_per_hour > 0 else float("inf")
    users = plan.requirement.users if plan.requirement.load == "users" else None
    share = 1.0
    demand = next((c.need for c in plan.checks if c.name == "throughput"), None)  # per replica
    if plan.queued and demand:  # a full engine: it delivers its ceiling's rate, not the demand
        share = min(plan.output_tokens_per_s / plan.requirement.replicas / demand, 1.0)
    return Cost(
        per_hour=per_hour,
        per_million_output_tokens=per_million,
        per_user_month=per_hour * HOURS_PER_MONTH / users if users else None,
        delivered_share=share,
    )
