"""A requirement: the load (N users with a think time, N requests in flight, or a request rate),
the request lengths (typical and P95) and the SLOs one deployment must meet."""

from __future__ import annotations

from dataclasses import dataclass

LOAD_KINDS = ("users", "in_flight", "rate")
DEFAULT_TTFT_SLO_S = 1.0
"""The TTFT limit a check uses unless one is given (Plan, Load test, ``check``, ``search``,
``simulate``; 0 turns it off): "no multi-second stalls", the chapters' high-concurrency API
(data/presets.toml, api)."""
DEFAULT_TPOT_SLO_S = 0.05
"""The TPOT limit used unless one is given: 20 tokens/s per user, faster than people read (the
chapters' "TPOT tens of ms", data/presets.toml, chat)."""


@dataclass(frozen=True, kw_only=True)
class Requirement:
    """The load and the service levels one deployment must meet (lengths in tokens, times in s)."""

    load: str = "users"
    users: int = 50
    think_time_s: float = 30.0
    in_flight: int = 16
    rate_per_s: float = 1.0
    prompt_len: int = 1500
    answer_len: int = 300
    prompt_len_p95: int | None = None
    answer_len_p95: int | None = None
    ttft_slo_s: float | None = None
    tpot_slo_s: float | None = None
    replicas: int = 1
    shared_prefix_len: int = 0
    """Leading prompt tokens every request shares (system prompt, few-shot block); prefix caching
    (a lever of the deployment) computes and holds them once."""

    def __post_init__(self) -> None:
        if self.load not in LOAD_KINDS:
            raise ValueError(f"load must be one of {', '.join(LOAD_KINDS)}, got {self.load!r}")
        for name, high in (
            ("users", 10_000_000),
            ("in_flight", 10_000_000),
            ("prompt_len", 10_000_000),
            ("answer_len", 10_000_000),
            ("replicas", 100_000),
        ):
            _int(name, getattr(self, name), 1, high)
        if isinstance(self.shared_prefix_len, bool) or not isinstance(self.shared_prefix_len, int):
            raise ValueError(f"shared_prefix_len must be an integer, got {self.shared_prefix_len!r}")
        if not 0 <= self.shared_prefix_len <= self.prompt_len:
            raise ValueError(
                f"shared_prefix_len must be from 0 to prompt_len ({self.prompt_len}), got {self.shared_prefix_len!r}"
            )
        for name in ("prompt_len_p95", "answer_len_p95"):
            if getattr(self, name) is not None:
                _int(name, getattr(self, name), 1, 10_000_000)
        if not 0 <= self.think_time_s <= 86_400:
            raise ValueError(f"think_time_s must be between 0 and 86400 s, got {self.think_time_s!r}")
        if not 0 < self.rate_per_s <= 1_000_000:
            raise ValueError(f"rate_per_s must be above 0 and at most 1e6, got {self.rate_per_s!r}")
        for name in ("ttft_slo_s", "tpot_slo_s"):
            value = getattr(self, name)
            if value is not None and not 0 < value <= 3600:
                raise ValueError(f"{name} must be above 0 and at most 3600 s, got {value!r}")

    @property
    def p95_prompt(self) -> int:
        return max(self.prompt_len_p95 or self.prompt_len, self.prompt_len)

    @property
    def p95_answer(self) -> int:
        return max(self.answer_len_p95 or self.answer_len, self.answer_len)

    @property
    def longest_request(self) -> int:
        return self.p95_prompt + self.p95_answer


def _int(name: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer from {low} to {high}, got {value!r}")
