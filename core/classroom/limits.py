"""Per-session rate limits on the class calls a visitor can repeat: joining, answering, trying a teacher key.

A token bucket: ``capacity`` calls at once, refilled at ``capacity / window_s`` per second. The bucket's state is two
floats the caller keeps (the page keeps them in the session), so the rule stays pure and testable; a refused call
says how long to wait. The limits are sized for a class: a student checks an exercise's boxes a few times a minute,
a nickname is chosen once or twice, a teacher types a key once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["LIMITS", "Bucket", "RateLimit"]


@dataclass(frozen=True)
class Bucket:
    """What is left (``tokens``) at ``at`` [s, the caller's monotonic clock]."""

    tokens: float
    at: float


@dataclass(frozen=True)
class RateLimit:
    capacity: int
    window_s: float

    def take(self, bucket: Bucket | None, now: float) -> tuple[bool, Bucket, float]:
        """(allowed, the bucket after this call, seconds until the next call is allowed: 0 when allowed)."""
        rate = self.capacity / self.window_s
        tokens = (
            self.capacity if bucket is None else min(self.capacity, bucket.tokens + max(0.0, now - bucket.at) * rate)
        )
        if tokens >= 1.0:
            return True, Bucket(tokens - 1.0, now), 0.0
        return False, Bucket(tokens, now), math.ceil((1.0 - tokens) / rate)


LIMITS = {
    "join": RateLimit(capacity=5, window_s=60.0),
    "answer": RateLimit(capacity=20, window_s=60.0),
    "teacher_key": RateLimit(capacity=5, window_s=300.0),
    "create": RateLimit(capacity=3, window_s=600.0),
}
"""Per session: 5 joins a minute (a taken nickname tried again), 20 checks a minute (an exercise has at most five
boxes, checked together), 5 teacher-key tries in 5 minutes, 3 new classes in 10 minutes."""
