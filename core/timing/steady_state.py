"""The continuous-batching operating point of one replica with B requests in flight.

A vLLM V1 (SGLang, TensorRT-LLM in-flight batching) step schedules the running decodes first and
fills the rest of the token budget N (max_num_batched_tokens) with prompt chunks, so an arriving
prompt rides in decode steps instead of stopping them (:func:`mixed_step_time`):

t_d(B)      = decode step with B running requests (per emitted token)
t_mix(B, c) = one plain step of B decodes plus a chunk of c prompt tokens (the roofline of the summed work)
k = ceil(I / (N - B)) chunks of c = I / k tokens each (the budget the decodes leave; a prompt's new tokens)
t_p   = k x (t_mix(B, c) - t_mix(B, 0))   the decode time one prompt takes: its chunks' *marginal* cost
t_in  = k x t_mix(B, c)                     the steps that compute the prompt
TTFT = (B - 1) / B x TPOT / 2 + t_in + lambda TPOT t_p / k + (B + 1) / 2 x f
       (a new request waits for the rest of the step in progress, when one of the B - 1 others runs,
       then its k steps, which also carry the chunks of the lambda x TPOT others arriving per step; taken
       at the operating point of TTFT = t_d + t_in, iterated twice; then the API server streams the
       step's B tokens at f each, core.serving.delivery: the last token arrives as late, in E2E)
TPOT = t_d(B) / (1 - lambda t_p)         (arriving prompts' chunks take their share of the time)
E2E  = TTFT + (O - 1) TPOT,  lambda = B / E2E   ->  E2E^2 - (B t_p + a + c) E2E + a B t_p = 0
       with a = TTFT, c = (O - 1) t_d(B); the larger root is the stable one

Data-parallel attention (dp > 1): each rank takes its own arrivals (lambda / dp), but the ranks
step together (every MoE layer's all-to-all joins them; idle ranks run dummy steps), so a step
waits for a prompt chunk on any rank. With the ranks' chunks independent, the share of time no
rank spends on a chunk is (1 - lambda t_p / dp)^dp:
TPOT = t_d(B) / (1 - lambda t_p / dp)^dp    (the formula above at dp = 1)
E2E  = a + c / (1 - B t_p / (dp E2E))^dp    solved by Newton's method (one root above B t_p / dp)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.memory.kv import kv_bytes_per_sequence
from core.memory.request_kv import cached_prompt_tokens
from core.memory.state import state_traffic_bytes
from core.spec.deployment import Deployment, decode_context
from core.spec.engine import Parallelism
from core.timing.phases import decode_step_time, phase_time, side_deployments
from core.timing.roofline import PhaseTime, work_time
from core.timing.work import attention_flops, expert_bytes_read, rank_expert_flops, rank_linear_flops, weight_bytes_read

NEWTON_STEPS = 12  # most safeguarded Newton steps of lockstep_e2e (the search's curves converge in about 8)


@dataclass(frozen=True)
class SteadyState:
    """One replica's operating point with ``batch`` requests in flight [s, requests/s]."""

    batch: float
    prefill_s: float
    """t_p: the decode time one arriving prompt takes, its chunks' marginal cost in mixed steps."""
    decode_step_s: float
    ttft_s: float
    tpot_s: float
    e2e_s: float
    """As the user sees it: the engine's time plus the request overhead before it."""
    engine_e2e_s: float
    """From the engine scheduling the request to its last token: what Little's law counts in flight."""
    request_rate: float
    stable: bool
    prompt_steps_s: float = 0.0
    """t_in: the steps that compute a prompt, k x t_mix(B, c) (what TTFT waits for after the step in progress)."""
    chunks: float = 1.0
    """k: the steps a prompt is split over."""


def mixed_step_time(dep: Deployment, batch, context, chunk, chunk_context) -> PhaseTime:
    """One step of ``batch`` decodes on ``context`` cached tokens each plus one prompt chunk of ``chunk``
    new tokens on ``chunk_context`` cached ones: the roofline of the summed work (arrays broadcast).

    The work is :func:`core.timing.phases.phase_time`'s for each part, added: one weight read for the
    step's B + c tokens, B + 1 sequences scheduled, the decodes' KV and the chunk's own (with dp > 1
    the busiest rank's decodes and the chunk)."""
    par = dep.parallel
    batch = np.asarray(batch, dtype=float)
    chunk = np.asarray(chunk, dtype=float)
    rank = par.rank_sequences(batch)
    has_chunk = (chunk > 0).astype(float)
    tokens = batch + chunk
    per_seq = Parallelism(tp=par.tp)
    kv = rank * kv_bytes_per_sequence(dep.model, dep.kv, per_seq, np.asarray(context) + 1)
    kv = kv + has_chunk * kv_bytes_per_sequence(dep.model, dep.kv, per_seq, np.asarray(chunk_context) + chunk)
    scheduled = rank + has_chunk
    kv = kv + scheduled * state_traffic_bytes(dep.model, par.tp)
    phase = work_time(
        dep,
        linear=rank_linear_flops(dep, batch, 1) + rank_linear_flops(dep, has_chunk, chunk),
        attention=attention_flops(dep.model, rank, 1, context)
        + attention_flops(dep.model, has_chunk, chunk, chunk_context),
        weights=weight_bytes_read(dep, tokens),
        expert_weights=expert_bytes_read(dep, tokens),
        expert_linear=rank_expert_flops(dep, batch, 1) + rank_expert_flops(dep, has_chunk, chunk),
        kv_per_gpu=kv,
        tokens=tokens if par.dp == 1 else rank + chunk,
        steps=np.ones_like(tokens),
        sequence_steps=scheduled,
        frontend_steps=None if par.dp == 1 else batch + has_chunk,
    )
    if dep.engine.backend == "aic":  # the optional measured-kernel backend: its kernels, the rest as above
        from core.timing.aic_backend import aic_mixed

        return aic_mixed(dep, phase, batch, context, chunk, chunk_context)
    return phase


def prompt_in_steps(dep: Deployment, batch, prompt_len: int, answer_len: int):
    """(t_p, t_in, k) of the module docstring for B running requests [s, s, steps] (arrays broadcast)."""
    budget, _ = dep.batch_limits
    batch = np.maximum(np.asarray(batch, dtype=float), 1.0)
    cached = float(cached_prompt_tokens(dep, prompt_len))
    new = max(float(prompt_len) - cached, 1.0)
    room = np.maximum(budget - dep.parallel.rank_sequences(batch), 1.0)  # what the decodes leave of the budget
    k = np.ceil(new / np.minimum(room, new))
    chunk = new / k
    context = decode_context(prompt_len, answer_len)
    mixed = mixed_step_time(dep, batch, context, chunk, cached + chunk * (k - 1) / 2).seconds
    plain = mixed_step_time(dep, batch, context, 0.0, 0.0).seconds
    # models run beside the target (a speculative proposer) prefill the prompt too, in the same steps
    # (what a step of the chunk takes them beyond a step of one token)
    side = sum(
        np.maximum(phase_time(s, 1, chunk, cached, 1).gpu_seconds - phase_time(s, 1, 1, cached, 1).gpu_seconds, 0.0)
        for s in side_deployments(dep)
    )
    extra = np.maximum(mixed - plain, 0.0) + side
    return k * extra, k * (mixed + side), k


def steady_state(dep: Deployment, batch, prompt_len: int, answer_len: int) -> SteadyState:
    """The continuous-batching operating point with ``batch`` requests in flight (module docstring).

    ``batch`` may be a numpy array; every field is then an array of the same shape.
    """
    batch = np.asarray(batch, dtype=float)
    overhead = dep.efficiency.request_delay_s(1.0)  # each request alone through the API server's loop
    dp = dep.parallel.dp
    t_p, t_in, k = prompt_in_steps(dep, batch, prompt_len, answer_len)
    t_d = decode_step_time(dep, np.maximum(batch, 1.0), decode_context(prompt_len, answer_len)).seconds
    busy_share = np.maximum(batch - 1, 0.0) / np.maximum(
        batch, 1.0
    )  # a step is in progress: one of the B - 1 others runs
    # the API server streams a step's B tokens one after another: each reaches its client (B + 1) / 2 x f
    # after the step on average, the first token and the last alike (core.serving.delivery)
    lag = (np.maximum(batch, 1.0) + 1) / 2 * dep.efficiency.frontend_per_token_s
    ttft = t_d + t_in + lag  # a first guess: a whole step in progress, no other prompt in the prompt's step
    for _ in range(2):
        e2e, rate, stable, tpot = _operating_point(batch, t_p, t_d, ttft, answer_len, dp)
        # the rest of the step in progress (on average half of one), then the prompt's steps, which
        # also carry the chunks of the lambda x TPOT others arriving per step (a k-step prompt fills its own)
        ttft = np.where(stable, busy_share * tpot / 2 + t_in + rate * tpot * t_p / k, t_d + t_in) + lag
    e2e, rate, stable, tpot = _operating_point(batch, t_p, t_d, ttft, answer_len, dp)
    return SteadyState(
        batch=_scalar(batch),
        prefill_s=_scalar(t_p),
        decode_step_s=_scalar(t_d),
        ttft_s=_scalar(ttft + overhead),
        tpot_s=_scalar(tpot),
        e2e_s=_scalar(e2e + overhead),
        engine_e2e_s=_scalar(e2e),
        request_rate=_scalar(rate),
        stable=_scalar(stable),
        prompt_steps_s=_scalar(t_in),
        chunks=_scalar(k),
    )


def prompt_ttft(dep: Deployment, state: SteadyState, prompt_len: int, answer_len: int):
    """TTFT [s] of one request with a ``prompt_len`` prompt (a P95 one) at the operating point ``state``
    of the typical requests: the same wait and others' chunks, its own prompt's steps,
    TTFT(I') = TTFT + t_in(I') - t_in(I)."""
    _, steps, _ = prompt_in_steps(dep, state.batch, prompt_len, answer_len)
    return state.ttft_s + steps - state.prompt_steps_s


def _operating_point(batch, t_p, t_d, ttft, answer_len: int, dp: int):
    """(E2E, lambda, stable, TPOT) at a given TTFT (module docstring)."""
    if dp == 1:
        s = batch * t_p + ttft + (answer_len - 1) * t_d
        e2e = (s + np.sqrt(np.maximum(s * s - 4 * ttft * batch * t_p, 0.0))) / 2
    else:
        e2e = lockstep_e2e(batch * t_p, ttft, (answer_len - 1) * t_d, dp)
    rate = batch / e2e
    busy = rate * t_p / dp  # the share of time one rank spends on prompt chunks
    stable = busy < 1
    free = np.where(stable, 1 - busy, 1.0) ** dp  # the share of time no rank spends on a chunk
    return e2e, rate, stable, np.where(stable, t_d / free, np.inf)


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
