"""Two ways B requests reach a server, and the batch the engine actually runs.

- **Arriving together** (a burst, ``estimate``'s headline): B prompts at once. The engine admits
  R = min(B, max_num_seqs, requests the KV cache holds at this length); the rest wait for a whole
  round to finish, so with k = ceil(B / R) rounds the last request's first token comes after
  TTFT = (k - 1) x E2E(R) + TTFT(R), and tokens/s = B x O / (TTFT + (O - 1) x TPOT(R)).
- **B clients in a closed loop** (what ``vllm bench serve --max-concurrency B`` measures): each
  client sends its next request when the last one ends. At steady state R run at once
  (:func:`core.timing.steady_state.steady_state`: arriving prompts take their share of the steps)
  and the other B - R wait; by Little's law a client's cycle is B / R times the engine's, the wait
  adding to TTFT.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.spec.deployment import Deployment, Workload
from core.timing.steady_state import steady_state


@dataclass(frozen=True)
class ClosedLoop:
    """B clients, each sending its next request when the last one ends, at steady state [s, tokens/s]."""

    clients: int
    running: int
    ttft_s: float
    tpot_s: float
    e2e_s: float
    output_tokens_per_s: float
    stable: bool
    """False when arriving prompts alone would keep the engine busy (no steady state)."""


def admitted_batch(batch, kv_fit, max_num_seqs):
    """Requests the engine runs at once: the batch, capped by max_num_seqs and the KV cache (at least
    1); arrays broadcast, scalars stay ints."""
    running = np.maximum(1, np.minimum(np.minimum(batch, max_num_seqs), kv_fit))
    return int(running) if np.ndim(running) == 0 else running


def rounds(batch, running):
    """Rounds B requests arriving together take when R run at once: ceil(B / R)."""
    return np.ceil(np.asarray(batch, dtype=float) / running)


def admission_wait(clients: float, think_time_s: float, running: float, engine_e2e_s: float) -> float:
    """Seconds a request waits for a slot when ``clients`` closed-loop users, each thinking
    ``think_time_s`` between requests, share an engine whose ``running`` slots are all taken [s].

    The full engine finishes R / E2E_engine requests a second, so by Little's law a client's cycle
    is U x E2E_engine / R; what it spends beyond thinking and its own engine time is waiting:
    W = max(0, U x E2E_engine / R - Z - E2E_engine). With no think time, W = (U / R - 1) x E2E_engine.
    """
    return max(0.0, clients * engine_e2e_s / running - think_time_s - engine_e2e_s)


def closed_loop(dep: Deployment, workload: Workload, running: int) -> ClosedLoop:
    """The steady state of B = workload.batch closed-loop clients with R = ``running`` in flight."""
    state = steady_state(dep, running, workload.input_len, workload.output_len)
    clients = workload.batch
    # a client's cycle: B / R of the engine's (Little's law); the extra is spent waiting for admission
    wait = admission_wait(clients, 0.0, running, state.engine_e2e_s) if state.stable else math.inf
    e2e = state.e2e_s + wait
    return ClosedLoop(
        clients=clients,
        running=running,
        ttft_s=state.ttft_s + wait,
        tpot_s=state.tpot_s,
        e2e_s=e2e,
        output_tokens_per_s=clients * workload.output_len / e2e if state.stable else 0.0,
        stable=bool(state.stable),
    )
