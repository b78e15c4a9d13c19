"""When each simulated request reaches the engine: open loop (all arrival times drawn up front) or
closed loop (a client sends its next request when its last one finishes, after its think time).

Between the user and the engine is the API server (:func:`ingested`): a fixed delay per request
(network, tokenization, hand-over to the engine) and, where the server does part of every request's
work on its one event loop (vLLM before 0.19 renders the chat template there, synchronously), a
serial cost per request in arrival order. The loop runs every request handler that is ready before
the callbacks that submit finished ones, so a request reaches the engine only once the loop has
rendered every request that arrived while it was being rendered:

    rendered_i  = max(sent_i, rendered_(i-1)) + serial
    submitted_i = rendered_j + delay,  j = the last request sent by rendered_i

A burst of N requests sent together therefore reaches the engine after N x serial, all of it at once
(an offset on every request's TTFT); requests spaced wider than ``serial`` each wait ``serial``.
"""

from __future__ import annotations

from bisect import bisect_right

import numpy as np

from core.serving.traffic import Traffic, arrival_times


def ingested(sent: np.ndarray, serial: float) -> np.ndarray:
    """When the API server's event loop lets each request go on to the engine, ``serial`` seconds of
    loop work per request (module docstring) [s]; ``sent`` in any order."""
    if not serial or sent.size == 0:
        return sent.copy()
    order = np.argsort(sent, kind="stable")
    ordered = sent[order]
    k = np.arange(ordered.size) * serial
    rendered = np.maximum.accumulate(ordered - k) + k + serial  # Lindley's recursion, in closed form
    last = np.searchsorted(ordered, rendered, side="right") - 1
    out = np.empty_like(sent)
    out[order] = rendered[last]
    return out


class Arrivals:
    """Arrival times of ``count`` requests [s], released in order as the clock passes them.

    Every request reaches the engine ``delay`` after the API server's event loop has done its
    ``serial`` work on it and on those that arrived meanwhile (:func:`ingested`).
    """

    def __init__(
        self, traffic: Traffic, count: int, rng: np.random.Generator, delay: float, serial: float = 0.0
    ) -> None:
        self.count, self.rng, self.delay, self.serial = count, rng, delay, serial
        self.loop_free = 0.0  # when the event loop is done with the requests sent so far
        self.time = np.full(count, np.inf)
        self.sent = np.full(count, np.inf)
        """When each request's user sent it [s] (what TTFT is counted from)."""
        if traffic.mode == "rate":
            self.sent[:] = arrival_times(traffic.rate_per_s, count, rng, traffic.burstiness)
            self.time[:] = self._ingest(self.sent) + delay
        self.clients = {"rate": 0, "concurrency": traffic.concurrency, "users": traffic.users}[traffic.mode]
        self.think = traffic.think_time_s if traffic.mode == "users" else 0.0
        released = min(self.clients, count) if self.clients else count
        if self.clients:
            self.sent[:released] = rng.uniform(0, self.think, released) if self.think else 0.0
            self.time[:released] = self._ingest(self.sent[:released]) + delay
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
                sent = clock + (self.rng.exponential(self.think) if self.think else 0.0)
                self.sent[request] = sent
                if self.serial:  # one more request on the loop, after those it is still busy with
                    self.loop_free = max(sent, self.loop_free) + self.serial
                    sent = self.loop_free
                self.time[request] = sent + self.delay
                self._insert_pending(request)
                self.next_release += 1

    @property
    def ingest_seconds(self) -> float:
        """Time the requests spent between their users and the engine, summed [s]."""
        return float(np.sum(self.time - self.sent))

    def _ingest(self, sent: np.ndarray) -> np.ndarray:
        """The requests known up front through the event loop (:func:`ingested`), noting when it is free."""
        through = ingested(sent, self.serial)
        if self.serial and sent.size:
            self.loop_free = float(through.max())
        return through

    def _insert_pending(self, request: int) -> None:
        """Insert a released request into the not-yet-arrived part of ``pending``, keeping arrival order."""
        time = float(self.time[request])
        position = bisect_right(self.pending_time, time, self.position)
        self.pending.insert(position, request)
        self.pending_time.insert(position, time)
