"""The continuous-batching operating point of one replica with B requests in flight.

t_p = prefill of one typical prompt,  t_d(B) = decode step with B running requests
TTFT = t_p + t_d(B)                     (a new request joins the next step, then prefills)
TPOT = t_d(B) / (1 - lambda t_p)         (prefills of arriving requests take their share of steps)
E2E  = TTFT + (O - 1) TPOT,  lambda = B / E2E   ->  E2E^2 - (B t_p + a + c) E2E + a B t_p = 0
       with a = TTFT, c = (O - 1) t_d(B); the larger root is the stable one

Data-parallel attention (dp > 1): each rank prefills its own arrivals (lambda / dp), but the ranks
step together (every MoE layer's all-to-all joins them; idle ranks run dummy steps), so a step
waits for a prefill chunk on any rank. With the ranks' prefills independent, the share of steps no
rank prefills in is (1 - lambda t_p / dp)^dp:
TPOT = t_d(B) / (1 - lambda t_p / dp)^dp    (the formula above at dp = 1)
E2E  = a + c / (1 - B t_p / (dp E2E))^dp    solved by Newton's method (one root above B t_p / dp)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.spec.deployment import Deployment, decode_context
from core.timing.phases import decode_step_time, prefill_time

NEWTON_STEPS = 12  # most safeguarded Newton steps of lockstep_e2e (the search's curves converge in about 8)


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


def steady_state(dep: Deployment, batch, prompt_len: int, answer_len: int, prefill_s=None) -> SteadyState:
    """The continuous-batching operating point with ``batch`` requests in flight (module docstring).

    ``batch`` may be a numpy array; every field is then an array of the same shape. ``prefill_s``
    may pass t_p when it is already known.
    """
    batch = np.asarray(batch, dtype=float)
    overhead = dep.efficiency.request_overhead_s
    dp = dep.parallel.dp
    t_p = float(prefill_time(dep, 1, prompt_len).seconds) if prefill_s is None else prefill_s
    t_d = decode_step_time(dep, np.maximum(batch, 1.0), decode_context(prompt_len, answer_len)).seconds
    ttft = t_p + t_d
    if dp == 1:
        s = batch * t_p + ttft + (answer_len - 1) * t_d
        e2e = (s + np.sqrt(np.maximum(s * s - 4 * ttft * batch * t_p, 0.0))) / 2
    else:
        e2e = lockstep_e2e(batch * t_p, ttft, (answer_len - 1) * t_d, dp)
    rate = batch / e2e
    busy = rate * t_p / dp  # the share of time one rank prefills
    stable = busy < 1
    free = np.where(stable, 1 - busy, 1.0) ** dp  # the share of steps no rank prefills in
    tpot = np.where(stable, t_d / free, np.inf)
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


def lockstep_e2e(prefill_work, ttft, decode_s, dp: int):
    """E2E [s] solving E = a + c / (1 - W / (dp E))^dp with W = B t_p (``prefill_work``), a = TTFT,
    c = (O - 1) t_d (arrays broadcast).

    The root lies between the quadratic roots of two bounds: (1 - x)^dp <= 1 - x puts it above the
    root of E = a + c / (1 - W / (dp E)), and Bernoulli's (1 - x)^dp >= 1 - dp x below that of
    E = a + c / (1 - W / E) (the dp = 1 case). Within, Newton's method on the smooth increasing
    (E - a)^(1/dp) (1 - W / (dp E)) - c^(1/dp), kept in the bracket by bisection, converges to
    machine precision in a dozen steps.
    """
    work, a, c = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (prefill_work, ttft, decode_s)))
    low, high = _larger_root(work / dp, a, c), _larger_root(work, a, c)
    k, target = work / dp, c ** (1 / dp)
    e = high
    with np.errstate(divide="ignore", invalid="ignore"):  # c = 0 (one-token answers): E = low
        for _ in range(NEWTON_STEPS):
            free = 1 - k / e
            root = (e - a) ** (1 / dp)
            gap = root * free - target
            step = e - gap / (root * (free / (dp * (e - a)) + k / (e * e)))
            above = gap > 0
            high, low = np.where(above, e, high), np.where(above, low, e)
            done = np.all(np.abs(step - e) <= 1e-15 * e)
            e = np.where((step >= low) & (step <= high), step, (low + high) / 2)
            if done:
                break
    return np.where(c > 0, e, low)


def _larger_root(work, a, c):
    """The larger root of E^2 - (W + a + c) E + a W = 0, i.e. of E = a + c / (1 - W / E)."""
    s = work + a + c
    return (s + np.sqrt(np.maximum(s * s - 4 * a * work, 0.0))) / 2


def _scalar(value):
    value = np.asarray(value)
    return value.item() if value.ndim == 0 else value
