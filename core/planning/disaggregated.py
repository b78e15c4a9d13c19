"""Disaggregated xPyD candidates of one shape: x prefill and y decode instances of it, the KV
moved between them (:mod:`core.planning.search`, module docstring)."""

from __future__ import annotations

import math

import numpy as np

from core.planning.curves import Curves, columns, invert, users_and_think
from core.planning.requirement import Requirement
from core.spec.cluster import GPUS_PER_NODE, INTER_NODE_LINKS
from core.spec.deployment import Deployment

MAX_PREFILL_INSTANCES, MAX_DECODE_INSTANCES = 8, 16
FIXED_POINT_STEPS = 6  # lambda iterations of a users load
SPLITS = tuple(
    a.ravel() for a in np.meshgrid(np.arange(1, MAX_PREFILL_INSTANCES + 1.0), np.arange(1, MAX_DECODE_INSTANCES + 1.0))
)
"""(prefill, decode) instances of every split, as two flat arrays."""


def disaggregated(index: int, dep: Deployment, req: Requirement, c: Curves, space) -> dict:
    """Every xPyD split within ``space.max_gpus``: an M/D/1 prefill queue per prefill rank (x
    instances of dp ranks each prefill their own prompts), the KV transfer, decode-only steps."""
    per = dep.parallel.num_gpus
    fits = (SPLITS[0] + SPLITS[1]) * per <= space.max_gpus
    x, y = SPLITS[0][fits], SPLITS[1][fits]
    one_node = (x + y) * per <= GPUS_PER_NODE
    eff = dep.efficiency
    link = np.where(one_node, dep.gpu.link_bandwidth, INTER_NODE_LINKS[dep.inter_node]) * eff.link
    transfer = eff.allreduce_latency_s + c.transfer_bytes / link
    servers = x * dep.parallel.dp  # prefill ranks: each prefills the prompts sent to it
    # decode instances: lambda / y = B / ((O - 1) t_d(B)), t_d without prefill chunks in its steps
    decode_only = c.decode_s
    decode_rate = c.batch / (max(req.answer_len - 1, 1) * decode_only)

    def at(rate):
        rho = rate * c.prefill_s / servers
        wait = np.where(rho < 1, rho * c.prefill_s / (2 * np.maximum(1 - rho, 1e-12)), math.inf)
        b = invert(rate / y, decode_rate, c.batch)
        step = np.interp(np.minimum(b, c.batch[-1]), c.batch, decode_only)
        ttft = c.prefill_p95_s + wait + transfer + step + c.overhead_s
        return b, step, ttft, (rho < 1) & np.isfinite(b) & (b <= c.ceiling)

    if req.load == "rate":
        rate = np.full_like(x, req.rate_per_s)
        b, tpot, ttft, ok = at(rate)
    else:
        users, think = users_and_think(req)
        # start from the fastest possible cycle (most load), then follow E2E(lambda)
        rate = np.full_like(x, users / (think + c.prefill_s + req.answer_len * float(decode_only[0])))
        for _ in range(FIXED_POINT_STEPS):
            b, tpot, ttft, ok = at(rate)
            e2e = np.where(ok, ttft + (req.answer_len - 1) * tpot, math.inf)
            rate = np.where(ok, users / (think + e2e), rate)
        b, tpot, ttft, ok = at(rate)
    tpot, ttft = np.where(ok, tpot, math.inf), np.where(ok, ttft, math.inf)
    b = np.where(ok, b, c.batch[-1])
    # power per GPU: prefill ranks busy a share rho of the time (idle otherwise), decode ranks at B
    rho = np.minimum(rate * c.prefill_s / servers, 1.0)
    prefill_w = rho * c.power_prefill_w + (1 - rho) * c.idle_w
    power = (x * prefill_w + y * np.interp(b, c.batch, c.power_decode_w)) / (x + y)
    return columns(index, 1, dep, req, x + y, x, y, b, ttft, tpot, np.where(ok, rate, 0.0), ok, power)
