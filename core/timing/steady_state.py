"""The continuous-batching operating point of one replica with B requests in flight.

t_p = prefill of one typical prompt,  t_d(B) = decode step with B running requests
TTFT = t_p + t_d(B)                     (a new request joins the next step, then prefills)
TPOT = t_d(B) / (1 - lambda t_p)         (prefills of arriving requests take their share of steps)
E2E  = TTFT + (O - 1) TPOT,  lambda = B / E2E   ->  E2E^2 - (B t_p + a + c) E2E + a B t_p = 0
       with a = TTFT, c = (O - 1) t_d(B); the larger root is the stable one
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.spec.deployment import Deployment, decode_context
from core.timing.phases import decode_step_time, prefill_time


@dataclass(frozen=True)
class SteadyState:
    """One replica's operating point with ``batch`` requests in flight [s, requests/s]."""

    batch: float
    prefill_s: float
    decode_step_s: float
    ttft_s: float
    tpot_s: float
    e2e_s: float
    """As the user sees it: the engine's time plus the request overhead before it."""
    engine_e2e_s: float
    """From the engine scheduling the request to its last token: what Little's law counts in flight."""
    request_rate: float
    stable: bool


def steady_state(dep: Deployment, batch, prompt_len: int, answer_len: int) -> SteadyState:
    """The continuous-batching operating point with ``batch`` requests in flight (module docstring).

    ``batch`` may be a numpy array; every field is then an array of the same shape.
    """
    batch = np.asarray(batch, dtype=float)
    overhead = dep.efficiency.request_overhead_s
    t_p = float(prefill_time(dep, 1, prompt_len).seconds)
    t_d = decode_step_time(dep, np.maximum(batch, 1.0), decode_context(prompt_len, answer_len)).seconds
    ttft = t_p + t_d
    s = batch * t_p + ttft + (answer_len - 1) * t_d
    e2e = (s + np.sqrt(np.maximum(s * s - 4 * ttft * batch * t_p, 0.0))) / 2
    rate = batch / e2e
    busy = rate * t_p
    stable = busy < 1
    tpot = np.where(stable, t_d / np.where(stable, 1 - busy, 1.0), np.inf)
    return SteadyState(
        batch=_scalar(batch),
        prefill_s=t_p,
        decode_step_s=_scalar(t_d),
        ttft_s=_scalar(ttft + overhead),
        tpot_s=_scalar(tpot),
        e2e_s=_scalar(e2e + overhead),
        engine_e2e_s=_scalar(e2e),
        request_rate=_scalar(rate),
        stable=_scalar(stable),
    )


def _scalar(value):
    value = np.asarray(value)
    return value.item() if value.ndim == 0 else value
