"""Costs of simulator steps: KV blocks held, one step's roofline time, and runs of decode steps.

Everything is evaluated with the core's formulas (core.timing, core.memory); the fast path for
models without sliding-window layers reads its coefficients off them and is tested equal to the
general path.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from core.levers.registry import levers_on, side_deployments
from core.levers.settings import Levers
from core.memory.kv import kv_bytes_per_sequence, kv_bytes_per_token
from core.memory.state import kv_block_size, state_bytes_per_request, state_traffic_bytes
from core.spec.deployment import Deployment
from core.spec.engine import Parallelism
from core.timing.comm import comm_seconds
from core.timing.host_link import host_read_seconds
from core.timing.phases import decode_time_ratio
from core.timing.roofline import work_time
from core.timing.work import attended_pairs, attention_flops, expert_bytes_read, linear_flops, weight_bytes_read


class Blocks:
    """KV blocks a sequence of t cached tokens holds: exact and window-aware, in block units; a
    hybrid's sequences also hold their constant state (in block units) once they have a token."""

    def __init__(self, dep: Deployment) -> None:
        self.dep = dep
        self.size = kv_block_size(dep)
        self.block_bytes = self.size * kv_bytes_per_token(dep.model, dep.kv, dep.parallel)
        self.state = state_bytes_per_request(dep.model, dep.parallel)
        self.uniform = not dep.model.num_sliding_layers and not self.state

    def __call__(self, tokens):
        if self.uniform:
            return np.ceil(np.asarray(tokens, dtype=float) / self.size)
        bytes_ = kv_bytes_per_sequence(self.dep.model, self.dep.kv, self.dep.parallel, tokens, self.size)
        bytes_ = bytes_ + np.where(np.asarray(tokens) > 0, self.state, 0.0)
        return np.asarray(bytes_) / self.block_bytes


class StepModel:
    """Step time from four sums: sequences, tokens, attention pairs and KV tokens touched.

    For models without sliding-window layers every core cost is linear in these sums, so the
    coefficients are read off the core functions once (linear_flops, attention_flops,
    kv_bytes_per_sequence) and the roofline of :func:`core.timing.roofline.work_time` is evaluated on them;
    tests check it equals the general path. Weight reads and all-reduces depend on the token count
    only and are cached per count.
    """

    def __init__(self, dep: Deployment) -> None:
        m, tp = dep.model, dep.parallel.tp
        self.dep = dep
        self.levers = levers_on(dep.levers)
        # a lever whose step work is not linear in the step's sums (LoRA adapters read) takes the general path
        # top-k sparse attention caps each query's keys, so its pairs are not linear in the sums either
        self.exact = (
            not m.num_sliding_layers and m.indexer is None and all(lever.linear_step_work for lever in self.levers)
        )
        own = dataclasses.replace(dep, levers=Levers()) if self.levers else dep  # the model's own work only
        self.per_token = float(linear_flops(m, 1, 2) - linear_flops(m, 1, 1))  # 2 x body params
        self.per_sequence = float(linear_flops(m, 1, 1)) - self.per_token  # 2 x vocab x hidden (LM head)
        self.per_pair = float(attention_flops(m, 1, 1, 0))  # one query-key pair in every layer
        self.kv_per_token = float(kv_bytes_per_sequence(m, dep.kv, Parallelism(tp=tp), 1))
        self.state_traffic = state_traffic_bytes(m, tp)  # per scheduled sequence and step
        self._by_tokens: dict[float, tuple[float, float]] = {}
        # work_time is linear in each kind of work: its unit responses give the scalar path below
        unit = {
            "sequence_steps": 0.0,
            "linear": 0.0,
            "attention": 0.0,
            "weights": 0.0,
            "kv_per_gpu": 0.0,
            "tokens": 1.0,
            "steps": 1.0,
            "comm_s": 0.0,
        }
        self.s_per_flop = float(work_time(own, **{**unit, "linear": 1.0}).compute_s)
        self.s_per_pair = float(work_time(own, **{**unit, "attention": 1.0}).compute_s) * self.per_pair
        self.s_per_weight_byte = float(work_time(own, **{**unit, "weights": 1.0}).memory_s)
        self.s_per_kv_byte = float(work_time(own, **{**unit, "kv_per_gpu": 1.0}).memory_s)
        self.s_per_kv_token = self.s_per_kv_byte * self.kv_per_token
        self.overhead = float(work_time(own, **unit).overhead_s)
        self.s_per_scheduled = float(work_time(own, **{**unit, "sequence_steps": 1.0}).overhead_s) - self.overhead
        self.s_frontend = float(work_time(own, **{**unit, "sequence_steps": 1.0}).frontend_s)

    def _lever_terms(self, tokens: float, sequences: int) -> tuple[float, float, float]:
        """(FLOPs, weight bytes, host-read seconds) the levers add to one step of this size."""
        flops = weight_bytes = host_bytes = 0.0
        for lever in self.levers:
            work = lever.step_work(self.dep, tokens, sequences, 1.0)
            flops += float(np.sum(work.flops))
            weight_bytes += float(np.sum(work.weight_bytes))
            host_bytes += float(np.sum(work.host_bytes))
        return flops, weight_bytes, float(host_read_seconds(self.dep.gpu, self.dep.efficiency, host_bytes))

    def _token_terms(self, tokens: float) -> tuple[float, float]:
        """(weight bytes read, all-reduce seconds) for a step of ``tokens`` tokens; the weight bytes
        are time-equivalent: routed experts count 1 / expert efficiency times."""
        if tokens not in self._by_tokens:
            expert = float(expert_bytes_read(self.dep, tokens))
            self._by_tokens[tokens] = (
                float(weight_bytes_read(self.dep, tokens)) + expert * (1 / self.dep.efficiency.expert - 1),
                float(comm_seconds(self.dep, tokens, 1.0)),
            )
        return self._by_tokens[tokens]

    def seconds(self, sequences: float, tokens: float, pairs, kv_tokens):
        """Step time [s]; ``pairs`` and ``kv_tokens`` may be arrays (a run of decode steps)."""
        weights, comm = self._token_terms(tokens)
        phase = work_time(
            self.dep,
            linear=self.per_token * tokens + self.per_sequence * sequences,
            attention=np.asarray(pairs, dtype=float) * self.per_pair,
            weights=weights,
            kv_per_gpu=np.asarray(kv_tokens, dtype=float) * self.kv_per_token + sequences * self.state_traffic,
            tokens=tokens,
            steps=1.0,
            sequence_steps=sequences,
            comm_s=comm,
        )
        return phase.seconds

    def step(self, new: np.ndarray, cached: np.ndarray) -> float:
        """One step in which sequence i adds new[i] tokens to cached[i] cached ones [s].

        Plain floats on work_time's unit responses: max(compute, memory) + all-reduce + overhead,
        bounded below by the front end's work, as PhaseTime.seconds composes them (tests check both
        paths agree).
        """
        if not self.exact:
            return step_seconds(self.dep, new, cached)
        tokens = float(new.sum())
        weights, comm = self._token_terms(tokens)
        lever_flops, lever_bytes, host_s = self._lever_terms(tokens, len(new)) if self.levers else (0.0, 0.0, 0.0)
        pairs = float(attended_pairs(new, cached).sum())
        linear = self.per_token * tokens + self.per_sequence * len(new) + lever_flops
        compute = linear * self.s_per_flop + pairs * self.s_per_pair
        memory = (weights + lever_bytes) * self.s_per_weight_byte + float((cached + new).sum()) * self.s_per_kv_token
        memory += len(new) * self.state_traffic * self.s_per_kv_byte
        gpu = max(compute, memory) + comm + self.overhead + host_s + len(new) * self.s_per_scheduled
        return max(gpu, len(new) * self.s_frontend)


def step_seconds(dep: Deployment, new: np.ndarray, cached: np.ndarray) -> float:
    """Roofline time of one step in which sequence i adds new[i] tokens to cached[i] cached ones."""
    tokens = float(new.sum())
    kv = kv_bytes_per_sequence(dep.model, dep.kv, Parallelism(tp=dep.parallel.tp), cached + new)
    phase = work_time(
        dep,
        linear=linear_flops(dep.model, len(new), tokens / len(new)),
        attention=float(attention_flops(dep.model, 1, new, cached).sum()),
        weights=weight_bytes_read(dep, tokens),
        expert_weights=expert_bytes_read(dep, tokens),
        kv_per_gpu=float(np.sum(kv)) + len(new) * state_traffic_bytes(dep.model, dep.parallel.tp),
        tokens=tokens,
        steps=1.0,
        sequence_steps=float(len(new)),
    )
    return float(phase.seconds)


MAX_RUN_CELLS = 400_000  # requests x steps evaluated at once in a decode-only run


def decode_run(
    model: StepModel,
    cached: np.ndarray,
    remaining: np.ndarray,
    until_arrival: float,
    blocks,
    held: np.ndarray,
    free: float,
) -> np.ndarray:
    """Durations of the decode-only steps that can run before anything changes [s].

    Stops at the first finish, at the step during which the next request arrives, and before the
    running requests would need more KV blocks than are free. Step j has every request at context
    cached + j, evaluated with the same roofline as a single step.
    """
    n = cached.size
    ones = np.ones(n, dtype=np.int64)
    k = int(min(remaining.min(), max(MAX_RUN_CELLS // n, 1)))
    if np.isfinite(until_arrival):
        # steps only get longer as contexts grow, so the first step's length bounds how many fit
        k = min(k, int(until_arrival / model.step(ones, cached)) + 1)

    def blocks_fit(steps: int) -> bool:
        return float((blocks(cached + steps) - held).sum()) <= free

    if not blocks_fit(k):
        low, high = 1, k  # one step always fits: the caller checked it
        while low < high:
            middle = (low + high + 1) // 2
            low, high = (middle, high) if blocks_fit(middle) else (low, middle - 1)
        k = low
    offsets = np.arange(k)
    if model.exact:
        base = float((cached + 1).sum())  # pairs and KV tokens of the first step; both grow by n a step
        durations = np.asarray(model.seconds(n, float(n), base + n * offsets, base + n * offsets), dtype=float)
    else:
        durations = np.array([step_seconds(model.dep, ones, cached + j) for j in offsets])
    ends = np.cumsum(durations)
    arrives = int(np.searchsorted(ends, until_arrival))  # the step during which it arrives still runs
    return durations[: min(arrives + 1, k)]


class StepTimer:
    """Durations of simulated steps [s]: the roofline of each step's mix of work, the models levers
    run beside the target on prompt chunks, KV read back from host memory beyond the GPU's blocks,
    and a lever's change of what a decode step is (:func:`core.timing.phases.decode_time_ratio`)."""

    def __init__(self, dep: Deployment, gpu_blocks: int, block_bytes: float) -> None:
        self.dep, self.gpu_blocks, self.block_bytes = dep, gpu_blocks, block_bytes
        self.model = StepModel(dep)
        self.sides = tuple(StepModel(side) for side in side_deployments(dep))  # they prefill every prompt too
        self.levers = levers_on(dep.levers)

    def spill_s(self, blocks_used: float) -> float:
        """Reading the KV the levers spill beyond the GPU's blocks from host memory, once per step [s]
        (:meth:`core.levers.base.Lever.spilled_kv_bytes`, the static model's rule)."""
        if blocks_used <= self.gpu_blocks:
            return 0.0
        spilled = sum(
            lever.spilled_kv_bytes(
                self.dep, lambda: blocks_used * self.block_bytes, lambda: self.gpu_blocks * self.block_bytes
            )
            for lever in self.levers
        )
        return float(host_read_seconds(self.dep.gpu, self.dep.efficiency, spilled)) if spilled else 0.0

    def step(self, new: np.ndarray, cached: np.ndarray, chunk_sizes: np.ndarray, chunk_cached: np.ndarray, used: float):
        """One step of decodes and prompt chunks (``new`` tokens on ``cached`` ones per sequence)."""
        duration = self.model.step(new, cached) + self.spill_s(used)
        if chunk_sizes.size:
            for side in self.sides:
                duration += side.step(chunk_sizes, chunk_cached)
        return duration

    def decode_run(self, cached, remaining, until_arrival: float, blocks, held, free: float, used: float):
        """The run of decode-only steps before anything changes (:func:`decode_run`), each scaled by
        the decode time ratio at the run's batch and mean context, plus the KV read from the host."""
        ratio = decode_time_ratio(self.dep, cached.size, float(cached.mean())) if self.levers else 1.0
        durations = decode_run(self.model, cached, remaining, until_arrival / ratio, blocks, held, free)
        return durations * ratio + self.spill_s(used)
