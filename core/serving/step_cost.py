"""Costs of simulator steps: KV blocks held, one step's roofline time, and runs of decode steps.

Everything is evaluated with the core's formulas (core.timing, core.memory); the fast path for models without
sliding-window layers reads its coefficients off them and is tested equal to the general path.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from core.levers.settings import Levers
from core.memory.kv import kv_bytes_per_sequence, kv_bytes_per_token
from core.memory.request_kv import request_state_reserved_bytes
from core.memory.state import kv_block_size, state_traffic_bytes
from core.spec.deployment import Deployment
from core.spec.engine import Parallelism
from core.timing.aic_backend import AicStepModel
from core.timing.comm import comm_seconds
from core.timing.host_link import host_read_seconds
from core.timing.phases import decode_time_ratio, side_deployments
from core.timing.roofline import Roofline, work_time
from core.timing.work import (
    attention_flops,
    expert_bytes_read,
    linear_flops,
    routed_expert_flops,
    weight_bytes_read,
)


class Blocks:
    """KV blocks a sequence of t cached tokens holds: exact and window-aware, in block units; a
    hybrid's sequences also hold their constant state's pages (in block units) once they have a token."""

    def __init__(self, dep: Deployment) -> None:
        self.dep = dep
        self.size = kv_block_size(dep)
        self.block_bytes = self.size * kv_bytes_per_token(dep.model, dep.kv, dep.parallel)
        self.state = request_state_reserved_bytes(dep)  # with the pages prefix caching reserves, by release
        self.uniform = not dep.model.num_sliding_layers and not self.state

    def __call__(self, tokens):
        if self.uniform:  # one sequence's (an int): the float np.ceil gives, without numpy's overhead
            return float(-(-tokens // self.size)) if type(tokens) is int else np.ceil(np.asarray(tokens) / self.size)
        bytes_ = kv_bytes_per_sequence(self.dep.model, self.dep.kv, self.dep.parallel, tokens, self.size)
        return np.asarray(bytes_ + np.where(np.asarray(tokens) > 0, self.state, 0.0)) / self.block_bytes

    def most_added(self, sequences: int, tokens: int) -> float:
        """The most blocks ``sequences`` sequences that hold their blocks add with ``tokens`` more
        tokens each: a block per ``size`` tokens started; infinity when windows or state make the
        count the only bound."""
        return sequences * -(-tokens // self.size) if self.uniform else np.inf


class StepModel:
    """Step time from four sums: sequences, tokens, attention pairs and KV tokens touched.

    Each kernel class's roofline is evaluated on them and the classes add up, as
    :class:`core.timing.roofline.Roofline` composes them (dense GEMMs, MoE experts, attention).

    For models without sliding-window layers every core cost is linear in these sums, so the
    coefficients are read off the core functions once (linear_flops, attention_flops,
    kv_bytes_per_sequence) and the roofline of :func:`core.timing.roofline.work_time` is evaluated on them;
    tests check it equals the general path. Weight reads and all-reduces depend on the token count
    only and are cached per count. A step is given as the contexts of its decoding sequences and
    its prompt chunks (:meth:`batch_step`), or as arrays of new and cached tokens (:meth:`step`).
    """

    def __init__(self, dep: Deployment) -> None:
        m, tp = dep.model, dep.parallel.tp
        self.dep = dep
        self.levers = dep.lever_models
        # a lever whose step work depends on more than the step's token and sequence counts takes the general path
        # top-k sparse attention caps each query's keys, so its pairs are not linear in the sums either
        self.exact = (
            not m.num_sliding_layers and m.indexer is None and all(lever.linear_step_work for lever in self.levers)
        )
        own = dataclasses.replace(dep, levers=Levers()) if self.levers else dep  # the model's own work only
        self.per_token = float(linear_flops(m, 1, 2) - linear_flops(m, 1, 1))  # 2 x body params
        self.per_sequence = float(linear_flops(m, 1, 1)) - self.per_token  # 2 x vocab x hidden (LM head)
        self.per_expert_token = float(routed_expert_flops(m, 1))  # the routed experts' part of per_token
        self.per_pair = float(attention_flops(m, 1, 1, 0))  # one query-key pair in every layer
        self.kv_per_token = float(kv_bytes_per_sequence(m, dep.kv, Parallelism(tp=tp), 1))
        self.state_traffic = state_traffic_bytes(m, tp)  # per scheduled sequence and step
        self._by_tokens: dict[tuple[float, float], tuple[float, float, float]] = {}
        dense = (float(weight_bytes_read(dep, 1.0)), 0.0)  # a dense model reads all its weights whatever the tokens
        self._dense_weights = dense if m.moe is None else None
        self._by_size: dict[tuple[float, int], tuple[float, float, float, float]] = {}  # _size_parts
        self.roofline = Roofline(dep, graphs=True)
        self._decode_terms: dict[int, tuple] = {}  # Roofline.step_terms of a decode step, per batch size
        # work_time is linear in each kind of work: its unit responses give the scalar path below
        unit = dict.fromkeys(("sequence_steps", "linear", "attention", "weights", "kv_per_gpu", "comm_s"), 0.0)
        unit.update(tokens=1.0, steps=1.0)
        self.s_per_flop = float(work_time(own, **{**unit, "linear": 1.0}).compute_s)
        self.s_per_pair = float(work_time(own, **{**unit, "attention": 1.0}).compute_s) * self.per_pair
        self.s_per_weight_byte = float(work_time(own, **{**unit, "weights": 1.0}).memory_s)
        self.s_per_kv_byte = float(work_time(own, **{**unit, "kv_per_gpu": 1.0}).memory_s)
        self.s_per_kv_token = self.s_per_kv_byte * self.kv_per_token
        self.overhead = float(work_time(own, **unit).overhead_s)
        self.s_per_scheduled = float(work_time(own, **{**unit, "sequence_steps": 1.0}).overhead_s) - self.overhead
        self.tp, self.moe_layer_s = tp, self.roofline.moe_layer_s

    def _lever_terms(self, tokens: float, sequences: int) -> tuple[float, float, float]:
        """(FLOPs, weight bytes, host-read seconds) the levers add to one step of this size."""
        flops = weight_bytes = host_bytes = 0.0
        for lever in self.levers:
            work = lever.step_work(self.dep, tokens, sequences, 1.0)
            flops += float(np.sum(work.flops))
            weight_bytes += float(np.sum(work.weight_bytes))
            host_bytes += float(np.sum(work.host_bytes))
        return flops, weight_bytes, float(host_read_seconds(self.dep.gpu, self.dep.efficiency, host_bytes))

    def _token_terms(self, tokens: float, sequences: float | None = None) -> tuple[float, float, float]:
        """(weight bytes read, the routed experts' part of them, communication seconds) for a step of ``tokens``
        tokens of ``sequences`` sequences whose logits are gathered (``tokens`` when None: a decode step)."""
        key = (tokens, tokens if sequences is None else sequences)
        if key not in self._by_tokens:
            dep = self.dep
            w = self._dense_weights or (float(weight_bytes_read(dep, tokens)), float(expert_bytes_read(dep, tokens)))
            comm = float(comm_seconds(dep, tokens, 1.0, key[1])) if dep.parallel.num_gpus > 1 else 0.0
            self._by_tokens[key] = (*w, comm)
        return self._by_tokens[key]

    def decode_step(self, cached: np.ndarray, context: int) -> float:
        """One step in which every sequence decodes one token on its ``cached`` tokens, ``context`` =
        sum(cached + 1) of them: the pairs its tokens score and the KV tokens it touches [s]."""
        if not self.exact:
            return step_seconds(self.dep, np.ones(cached.size, dtype=np.int64), cached)
        return self._summed_step(cached.size, float(cached.size), float(context), float(context))

    def decode_steps(self, cached: np.ndarray, context: int, steps: int) -> np.ndarray:
        """Durations of ``steps`` steps of :meth:`decode_step`, the j-th on cached + j cached tokens
        [s]; on the fast path with the roofline of :func:`core.timing.roofline.work_time`
        (:meth:`core.timing.roofline.Roofline.step_times`)."""
        n = cached.size
        if not self.exact:
            ones = np.ones(n, dtype=np.int64)
            return np.array([step_seconds(self.dep, ones, cached + j) for j in range(steps)])
        context = np.arange(context, context + n * steps, n, dtype=float)  # pairs and KV tokens grow by n a step
        kv_per_gpu = context * self.kv_per_token
        if self.state_traffic:
            kv_per_gpu += n * self.state_traffic
        return self.roofline.step_times(context * self.per_pair, kv_per_gpu, self._decode_step_terms(n))

    def _decode_step_terms(self, n: int) -> tuple:
        """The scalar terms of a decode step of ``n`` sequences (:meth:`Roofline.step_terms`)."""
        if n not in self._decode_terms:
            weights, expert_weights, comm = self._token_terms(float(n))
            self._decode_terms[n] = self.roofline.step_terms(
                linear=self.per_token * n + self.per_sequence * n,
                weights=weights,
                expert_linear=self.per_expert_token * n,
                expert_weights=expert_weights,
                tokens=float(n),
                comm_s=comm,
            )
        return self._decode_terms[n]

    def step(self, new: np.ndarray, cached: np.ndarray) -> float:
        """One step in which sequence i adds new[i] tokens to cached[i] cached ones [s]."""
        chunks = list(zip(np.asarray(new).tolist(), np.asarray(cached).tolist(), strict=True))
        return self.batch_step(np.zeros(0, dtype=np.int64), chunks)

    def batch_step(self, decoding: np.ndarray, chunks: Sequence[tuple[int, int]]) -> float:
        """One step of one token for sequences on ``decoding`` cached tokens each, and prompt chunks
        of (new, cached) tokens [s].

        Plain floats on work_time's unit responses: max(compute, memory) + all-reduce + overhead, the
        engine's step as PhaseTime.gpu_seconds composes them (the front end delays delivery, not the step:
        :mod:`core.serving.delivery`; tests check both
        paths agree). The sums are exact integers: a sequence's new tokens attend to its cached ones
        and to each other, new x cached + new (new + 1) / 2 pairs
        (:func:`core.timing.work.attended_pairs`).
        """
        if not self.exact:
            new = np.array([1] * decoding.size + [size for size, _ in chunks], dtype=np.int64)
            cached = np.concatenate((decoding, np.array([context for _, context in chunks], dtype=np.int64)))
            return step_seconds(self.dep, new, cached)
        decoded = (sum(decoding.tolist()) if decoding.size <= FEW else int(decoding.sum())) + decoding.size  # pairs, KV
        return self._summed_step(
            decoding.size + len(chunks),
            float(decoding.size + sum(size for size, _ in chunks)),
            float(decoded + sum(size * context + size * (size + 1) // 2 for size, context in chunks)),
            float(decoded + sum(size + context for size, context in chunks)),
        )

    def _summed_step(self, sequences: int, tokens: float, pairs: float, kv_tokens: float) -> float:
        """The fast path's step from its four sums [s] (:meth:`batch_step`), its size's parts evaluated once."""
        key = (tokens, sequences)
        if (parts := self._by_size.get(key)) is None:
            parts = self._by_size[key] = self._size_parts(sequences, tokens)
        gemms, least, comm, host_s = parts
        kv = kv_tokens * self.s_per_kv_token + sequences * self.state_traffic * self.s_per_kv_byte
        kernels = max(max(pairs * self.s_per_pair, kv) + gemms, least)
        return kernels + comm + self.overhead + host_s + sequences * self.s_per_scheduled

    def _size_parts(self, sequences: int, tokens: float) -> tuple[float, float, float, float]:
        """(GEMMs and MoE kernels, the eager launches' floor, communication, host reads) of a step [s]."""
        weights, expert_weights, comm = self._token_terms(tokens, float(sequences))
        lever_flops, lever_bytes, host_s = self._lever_terms(tokens, sequences) if self.levers else (0.0, 0.0, 0.0)
        expert_flops = self.per_expert_token * tokens
        linear = self.per_token * tokens + self.per_sequence * sequences + lever_flops
        gemm_f, gemm_b, expert_fs, expert_bs = self.roofline.gemm_parts(
            linear / self.tp - expert_flops / self.tp,
            (weights + lever_bytes) / self.tp - expert_weights / self.tp,
            expert_flops / self.tp,
            expert_weights / self.tp,
            tokens,
            tokens == sequences,
        )
        gemms = max(gemm_f, gemm_b)
        if expert_weights or self.moe_layer_s:
            gemms += max(expert_fs, expert_bs) + self.moe_layer_s
        return gemms, self.roofline.graphs.eager_floor(tokens, 1.0), comm, host_s


def step_seconds(dep: Deployment, new: np.ndarray, cached: np.ndarray) -> float:
    """Roofline time of one step in which sequence i adds new[i] tokens to cached[i] cached ones."""
    tokens = float(new.sum())
    kv = kv_bytes_per_sequence(dep.model, dep.kv, Parallelism(tp=dep.parallel.tp), cached + new)
    phase = work_time(
        dep,
        graphs=True,
        linear=linear_flops(dep.model, len(new), tokens / len(new)),
        attention=float(attention_flops(dep.model, 1, new, cached).sum()),
        weights=weight_bytes_read(dep, tokens),
        expert_weights=expert_bytes_read(dep, tokens),
        expert_linear=routed_expert_flops(dep.model, tokens),
        kv_per_gpu=float(np.sum(kv)) + len(new) * state_traffic_bytes(dep.model, dep.parallel.tp),
        tokens=tokens,
        steps=1.0,
        sequence_steps=float(len(new)),
    )
    return float(phase.gpu_seconds)  # the engine's step; the front end delays delivery (core.serving.delivery)


MAX_RUN_CELLS = 400_000  # requests x steps evaluated at once in a decode-only run
FEW = 16  # integer arrays up to this size are reduced in Python: the same integers, without numpy's call overhead


def decode_run(model: StepModel, cached: np.ndarray, remaining: np.ndarray, until_arrival: float) -> np.ndarray:
    """Durations of the decode-only steps that run before a request finishes or the next one arrives [s] (the step
    during which it arrives still runs). Step j has every request at context cached + j, evaluated with the same
    roofline as a single step. The KV blocks they need are the engine's to check
    (:meth:`core.serving.scheduler.Engine.decode_steps_that_fit`)."""
    few = cached.size <= FEW
    k = min(min(remaining.tolist()) if few else int(remaining.min()), MAX_RUN_CELLS // cached.size or 1)
    context = (sum(cached.tolist()) if few else int(cached.sum())) + cached.size  # the first step's pairs and KV tokens
    if math.isfinite(until_arrival):
        # steps only get longer as contexts grow, so the first step's length bounds how many fit
        k = min(k, int(until_arrival / model.decode_step(cached, context)) + 1)
    durations = model.decode_steps(cached, context, k)
    arrives = int(durations.cumsum().searchsorted(until_arrival))
    return durations[: min(arrives + 1, k)]


class StepTimer:
    """Durations of simulated steps [s]: each step's roofline, the models levers run beside the target on prompt
    chunks, KV read back from host memory beyond the GPU's blocks, and a lever's change of what a decode step is."""

    def __init__(self, dep: Deployment, gpu_blocks: int, block_bytes: float) -> None:
        self.dep, self.gpu_blocks, self.block_bytes = dep, gpu_blocks, block_bytes
        self.model = AicStepModel(dep) if dep.engine.backend == "aic" else StepModel(dep)
        self.sides = tuple(StepModel(side) for side in side_deployments(dep))  # they prefill every prompt too
        self.levers = dep.lever_models

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

    def step(self, decoding: np.ndarray, chunks: Sequence[tuple[int, int]], used: float) -> float:
        """One step of decodes on ``decoding`` cached tokens and prompt chunks of (new, cached) tokens
        (:meth:`StepModel.batch_step`), with ``used`` KV blocks in use."""
        duration = self.model.batch_step(decoding, chunks) + self.spill_s(used)
        if chunks:
            for side in self.sides:
                duration += side.batch_step(decoding[:0], chunks)
        return duration

    def decode_run(self, cached: np.ndarray, remaining: np.ndarray, until_arrival: float, used: float) -> np.ndarray:
        """The run of decode-only steps before a request finishes or arrives (:func:`decode_run`), each scaled by
        the decode time ratio at the run's batch and mean context, plus the host's KV reads at ``used`` blocks."""
        if not self.levers:
            return decode_run(self.model, cached, remaining, until_arrival)
        ratio = decode_time_ratio(self.dep, cached.size, float(cached.mean()))
        durations = decode_run(self.model, cached, remaining, until_arrival / ratio)
        return durations * ratio + self.spill_s(used)
