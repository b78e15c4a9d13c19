"""When each simulated request reaches the engine: open loop (all arrival times drawn up front) or
closed loop (a client sends its next request when its last one finishes, after its think time)."""

from __future__ import annotations

from bisect import bisect_right

import numpy as np

from core.serving.traffic import Traffic, arrival_times


class Arrivals:
    """Arrival times of ``count`` requests [s], released in order as the clock passes them.

    Every request reaches the engine ``delay`` after its user sent it (API server, tokenization).
    """

    def __init__(self, traffic: Traffic, count: int, rng: np.random.Generator, delay: float) -> None:
        self.count, self.rng, self.delay = count, rng, delay
        self.time = np.full(count, np.inf)
        if traffic.mode == "rate":
            self.time[:] = arrival_times(traffic.rate_per_s, count, rng, traffic.burstiness) + delay
        self.clients = {"rate": 0, "concurrency": traffic.concurrency, "users": traffic.users}[traffic.mode]
        self.think = traffic.think_time_s if traffic.mode == "users" else 0.0
        released = min(self.clients, count) if self.clients else count
        if self.clients:
            self.time[:released] = (rng.uniform(0, self.think, released) if self.think else 0.0) + delay
        self.pending = sorted(range(released), key=lambda i: self.time[i])  # released, in arrival order
        self.pending_time = self.time[self.pending].tolist()  # their arrival times
        self.position = 0  # pending[position:] have not arrived yet
        self.next_release = released

    def arrived(self, clock: float) -> list[int]:
        """Requests that have arrived by ``clock`` and were not handed out yet, in arrival order."""
        start = self.position
        self.position = bisect_right(self.pending_time, clock, start)
        return self.pending[start : self.position]

    @property
    def upcoming(self) -> float:
        """Arrival time of the next request not handed out yet; infinity when there is none."""
        return self.pending_time[self.position] if self.position < len(self.pending) else np.inf

    def finished(self, count: int, clock: float) -> None:
        """``count`` requests finished at ``clock``: in a closed loop each client sends its next one."""
        if not self.clients:
            return
        for _ in range(count):
            if self.next_release < self.count:
                request = self.next_release
                self.time[request] = clock + (self.rng.exponential(self.think) if self.think else 0.0) + self.delay
                self._insert_pending(request)
                self.next_release += 1

    def _insert_pending(self, request: int) -> None:
        """Insert a released request into the not-yet-arrived part of ``pending``, keeping arrival order."""
        time = float(self.time[request])
        position = bisect_right(self.pending_time, time, self.position)
        self.pending.insert(position, request)
        self.pending_time.insert(position, time)
