"""What a simulation returns: per-request times, engine time series, and the statistics read off them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SimResult:
    """Per-request times [s] (arrays indexed by request) and engine time series."""

    arrival: np.ndarray
    first_token: np.ndarray
    finish: np.ndarray
    prompt: np.ndarray
    answer: np.ndarray
    itl: np.ndarray
    """Every gap between consecutive tokens of a request [s]."""
    preemptions: int
    steps: int
    series_time: np.ndarray
    series_waiting: np.ndarray
    series_running: np.ndarray
    series_kv_used: np.ndarray
    """Share of the KV blocks in use at each recorded step (0-1)."""
    time_in_system: float
    """Integral over time of requests waiting or running [request x s] (for Little's law), of the replica."""
    ranks: int = 1
    """Data-parallel attention ranks the replica runs (dp); the per-request arrays are one rank's, the
    throughputs and :attr:`time_in_system` the replica's (ranks x the rank's)."""

    @property
    def ttft(self) -> np.ndarray:
        return self.first_token - self.arrival

    @property
    def e2e(self) -> np.ndarray:
        return self.finish - self.arrival

    @property
    def tpot(self) -> np.ndarray:
        """(E2E - TTFT) / (answer - 1) for answers longer than one token."""
        many = self.answer > 1
        return (self.finish[many] - self.first_token[many]) / (self.answer[many] - 1)

    @property
    def duration_s(self) -> float:
        return float(self.finish.max() - self.arrival.min())

    @property
    def output_tokens_per_s(self) -> float:
        return float(self.answer.sum() / self.duration_s) * self.ranks

    @property
    def request_throughput_per_s(self) -> float:
        return len(self.arrival) / self.duration_s * self.ranks

    def goodput(self, ttft_slo_s: float | None, tpot_slo_s: float | None) -> float:
        """Share of requests that met both SLOs (None = no limit)."""
        ok = np.ones(len(self.arrival), dtype=bool)
        if ttft_slo_s is not None:
            ok &= self.ttft <= ttft_slo_s
        if tpot_slo_s is not None:
            per_token = np.zeros(len(self.arrival))
            many = self.answer > 1
            per_token[many] = self.tpot
            ok &= per_token <= tpot_slo_s
        return float(ok.mean())


def little_law_gap(result: SimResult) -> float:
    """|L - lambda W| / L: time-averaged requests in system against throughput x mean E2E."""
    span = float(result.finish.max() - result.arrival.min())
    average_in_system = result.time_in_system / span
    predicted = result.request_throughput_per_s * float(result.e2e.mean())
    return abs(average_in_system - predicted) / average_in_system if average_in_system else 0.0
