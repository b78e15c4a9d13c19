"""The time of engine work on one replica, kernel class by kernel class, and a phase split into its terms.

The kernels of a step run one after another, so each class is bounded by its own roofline and the
classes add up (a KV read does not hide under a GEMM's compute):

    dense GEMMs  = max(F_dense / (P x compute eff.), W_dense / (BW x bandwidth eff.))
    MoE experts  = max(F_exp / (P x compute eff.), W_exp / (BW x bandwidth eff. x expert eff.))
                   + steps x MoE layers x MoE layer overhead
    attention    = max(F_attn / (P_attn x compute eff.), KV / (BW x bandwidth eff.))
    kernels  = max(dense GEMMs + MoE experts + attention, eager launches)
    GPU time = kernels
               + communication (all-reduces, logits gather) + steps x (step overhead + layers x layer overhead)
               + (sequence, step) pairs x host overhead per sequence
               + host-link reads + time of models run beside the target (side_s)
    delivery = max(GPU time, (sequence, step) pairs x front-end work per token)   (what the client observes)

F_dense and W_dense are the matmul FLOPs (over the rows of the step's CUDA graph, :mod:`core.timing.step_fixed`)
and weight bytes outside the routed experts (attention projections, dense and shared-expert FFNs, the LM head),
F_exp and W_exp those of the routed experts the step's tokens touch (the grouped GEMMs: their own kernels,
reading the experts at the expert efficiency's share of the dense bandwidth rate), F_attn the score and value
FLOPs and KV the cache bytes read and written. The MoE layer overhead is the fixed cost of each MoE layer's
routing, top-k, token sort and combine kernels in each step.

The front end (API server: detokenizing, streaming) runs in its own process: it does not slow the
engine, it delays delivery; a step's tokens reach the clients no faster than it streams them. The
static estimate takes the longer of the two per step (what bursts and closed loops settle to); the
simulator runs the engine on GPU time and the front end's queue beside it (:mod:`core.serving.delivery`).

Work is per GPU: tensor parallel divides FLOPs and weight bytes by tp (KV bytes per GPU follow
the head split); with data-parallel attention the work passed in is one rank's. The levers that
are on (:attr:`core.spec.deployment.Deployment.lever_models`) add their own work (:class:`StepWork`:
FLOPs, bytes, host reads) to the dense GEMMs through :meth:`core.levers.base.Lever.step_work`; this
module never names a lever and never imports :mod:`core.levers`. Every function accepts numpy arrays
and broadcasts them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from core.spec.precision import ACTIVATION_PRECISION
from core.spec.support import matmul_peak as matmul_peak_for
from core.timing.comm import comm_seconds, logits_gather_seconds
from core.timing.host_link import host_read_seconds
from core.timing.kernel_speed import kernel_speed
from core.timing.phase_parts import PhaseTime, StepWork  # noqa: F401  (StepWork: re-exported)
from core.timing.step_fixed import Graphs, step_fixed_seconds

if TYPE_CHECKING:
    from core.spec.deployment import Deployment


def work_time(dep: Deployment, graphs: bool = False, **work) -> PhaseTime:
    """The roofline of given work on one replica (:meth:`Roofline.__call__`, whose keywords
    ``work`` takes) for a deployment timed once; ``graphs``: steps of whole tokens in the engine's
    CUDA graphs (:class:`Roofline`)."""
    return Roofline(dep, graphs)(**work)


class Roofline:
    """:func:`work_time` of one deployment, its peaks and efficiencies read once, and
    :meth:`step_times` for the simulator's runs of steps. With ``graphs`` (the simulator's steps, of
    whole tokens) a step runs in the engine's CUDA graphs (:mod:`core.timing.step_fixed`); without (the
    static estimate, whose running batch is a mean the real one fluctuates around) its curves stay
    smooth in the batch."""

    def __init__(self, dep: Deployment, graphs: bool = False) -> None:
        self.dep, self.gpu, self.eff, self.tp = dep, dep.gpu, dep.efficiency, dep.parallel.tp
        self.matmul_peak, _ = matmul_peak_for(dep.gpu, dep.weights)
        self.attention_peak, _ = dep.gpu.flops_for(ACTIVATION_PRECISION)
        self.levers = dep.lever_models
        self.step_fixed_s = step_fixed_seconds(dep)
        self.graphs = Graphs(dep if graphs else None)
        self.moe_layer_s = dep.model.num_moe_layers * dep.efficiency.moe_layer_overhead_s
        eff = dep.efficiency
        self.rates = (
            self.matmul_peak * eff.compute,
            self.attention_peak * eff.compute,
            dep.gpu.memory_bandwidth * eff.bandwidth,
        )
        """(matmul FLOP/s, attention FLOP/s, bytes/s) the kernels reach at the constant efficiencies."""
        self.speed = kernel_speed(dep)
        moe = dep.model.moe
        self.expert_tokens = moe.experts_per_token / moe.num_experts if moe is not None else 0.0

    def gemm_parts(self, dense_f, dense_b, expert_f, expert_b, m, decode=True) -> tuple:
        """(dense GEMMs' compute, their weight reads, the MoE kernels' compute, their expert reads) [s]
        for per-GPU FLOPs and bytes of steps of ``m`` tokens (``decode``: one a sequence, padded to the CUDA
        graph's rows): at the measured rates where a table
        applies (:mod:`core.timing.kernel_speed`), else at the constant efficiencies (the MoE
        kernels read the experts at the expert efficiency's share of the dense bandwidth rate)."""
        compute_rate, _, read_rate = self.rates
        padding = self.graphs.padding(m, decode)  # a CUDA graph's padded rows: their GEMM FLOPs only
        dense_f = dense_f * padding
        if self.speed.gemm is not None:
            flops_rate, bytes_rate = self.speed.gemm(m * padding)
            dense = (dense_f / flops_rate, dense_b / bytes_rate)
        else:
            dense = (dense_f / compute_rate, dense_b / read_rate)
        if not self.expert_tokens:
            return (*dense, 0.0, 0.0)
        if self.speed.moe is not None:
            flops_rate, bytes_rate = self.speed.moe(np.asarray(m, dtype=float) * self.expert_tokens)
            return (*dense, expert_f / flops_rate, expert_b / bytes_rate)
        return (*dense, expert_f / compute_rate, expert_b / read_rate / self.eff.expert)

    def __call__(
        self,
        *,
        linear,
        attention,
        weights,
        kv_per_gpu,
        tokens,
        steps,
        sequence_steps=0.0,
        comm_s=None,
        host_bytes=0.0,
        expert_weights=0.0,
        expert_linear=0.0,
        frontend_steps=None,
    ) -> PhaseTime:
        """The time of given work on one replica: FLOPs and weight bytes of the whole replica (split
        over tp GPUs), KV bytes per GPU, tokens through the all-reduces, and the number of engine steps.
        ``sequence_steps`` counts (sequence, step) pairs for the per-sequence host overhead and the
        logits gather (one row each); ``comm_s``
        may pass :func:`comm_seconds` of the same tokens and steps when it is already known;
        ``host_bytes`` are bytes per GPU read from host memory; ``expert_weights`` and ``expert_linear``
        are the routed-expert parts of ``weights`` and ``linear``, run as the MoE kernels;
        ``frontend_steps`` the (sequence, step) pairs the API server streams when they are not
        ``sequence_steps`` (with dp > 1 the work is one rank's, the front end streams every rank's).
        The levers that are on add their work to the dense GEMMs."""
        dep, gpu, eff, tp = self.dep, self.gpu, self.eff, self.tp
        linear, weights, host = self._with_levers(linear, weights, host_bytes, tokens, sequence_steps, steps)
        expert_f = np.asarray(expert_linear, dtype=float) / tp
        expert_b = np.asarray(expert_weights, dtype=float) / tp
        dense_f = np.asarray(linear, dtype=float) / tp - expert_f
        dense_b = np.asarray(weights, dtype=float) / tp - expert_b
        attention = np.asarray(attention, dtype=float) / tp
        _, attention_rate, read_rate = self.rates
        steps = np.asarray(steps, dtype=float)
        per_step = np.asarray(tokens, dtype=float) / steps  # the GEMMs' M
        decode = np.asarray(sequence_steps, dtype=float) == np.asarray(tokens, dtype=float)  # one token a sequence
        gemm_f, gemm_b, expert_fs, expert_bs = self.gemm_parts(dense_f, dense_b, expert_f, expert_b, per_step, decode)
        attention_f, kv_b = attention / attention_rate, kv_per_gpu / read_rate
        moe_s = np.maximum(expert_fs, expert_bs) + steps * self.moe_layer_s
        attention_s = np.maximum(attention_f, kv_b)
        kernels = attention_s + (np.maximum(gemm_f, gemm_b) + moe_s)
        kernels = np.maximum(kernels, self.graphs.eager_floor(per_step, steps))  # launched one by one
        return PhaseTime(
            compute_s=gemm_f + attention_f + expert_fs,
            memory_s=gemm_b + kv_b + expert_bs,
            comm_s=comm_seconds(dep, tokens, steps, sequence_steps) if comm_s is None else comm_s,
            overhead_s=steps * self.step_fixed_s
            + np.asarray(sequence_steps, dtype=float) * eff.per_sequence_overhead_s,
            flops=dense_f * self.graphs.padding(per_step, decode) + expert_f + attention,
            bytes_moved=dense_b + expert_b + kv_per_gpu,
            kv_bytes=kv_per_gpu,
            host_s=host_read_seconds(gpu, eff, host),
            frontend_s=np.asarray(sequence_steps if frontend_steps is None else frontend_steps, dtype=float)
            * eff.frontend_per_token_s,
            kernels_s=kernels,
            moe_s=moe_s,
            attention_s=attention_s,
            attention_flops=attention,
            expert_flops=expert_f,
            expert_bytes=expert_b,
            gather_s=logits_gather_seconds(dep, sequence_steps, steps),
        )

    def _with_levers(self, linear, weights, host_bytes, tokens, sequence_steps, steps):
        """(linear FLOPs, weight bytes, host bytes) with the work of the levers that are on added."""
        if self.levers:
            per_step = np.asarray(sequence_steps, dtype=float) / np.asarray(steps, dtype=float)
            for lever in self.levers:
                work = lever.step_work(self.dep, tokens, per_step, steps)
                linear = np.asarray(linear, dtype=float) + work.flops
                weights = np.asarray(weights, dtype=float) + work.weight_bytes
                host_bytes = work.host_bytes + host_bytes
        return linear, weights, host_bytes

    def step_terms(
        self,
        *,
        linear: float,
        weights: float,
        expert_linear: float,
        expert_weights: float,
        tokens: float,
        comm_s: float,
    ) -> tuple:
        """The scalar parts of one step of ``tokens`` sequences of one new token each, for
        :meth:`step_times`: (dense GEMMs and MoE experts seconds, seconds added to the kernels,
        the kernels' least time), with the levers' work."""
        eff, tp = self.eff, self.tp
        linear, weights, host_bytes = self._with_levers(linear, weights, 0.0, tokens, tokens, 1.0)
        gemm_f, gemm_b, expert_fs, expert_bs = self.gemm_parts(
            float(linear) / tp - expert_linear / tp,
            float(weights) / tp - expert_weights / tp,
            expert_linear / tp,
            expert_weights / tp,
            tokens,
        )
        dense = max(gemm_f, gemm_b)
        experts = max(expert_fs, expert_bs) + self.moe_layer_s
        added = (
            comm_s,
            self.step_fixed_s + tokens * eff.per_sequence_overhead_s,
            host_read_seconds(self.gpu, eff, host_bytes),
        )
        return dense + experts, added, self.graphs.eager_floor(tokens, 1.0)

    def step_times(self, attention: np.ndarray, kv_per_gpu: np.ndarray, terms: tuple) -> np.ndarray:
        """``self(..., steps=1.0, sequence_steps=tokens, comm_s=comm_s).gpu_seconds`` (the engine's step) of the
        work that gave ``terms`` (:meth:`step_terms`), one step per entry of ``attention`` and ``kv_per_gpu``
        [s]: the same arithmetic, in place on the two arrays (which it uses up), without the other
        parts of a PhaseTime and without adding terms that are exactly zero (the simulator evaluates
        it for every run of decode steps)."""
        gemms_s, added, least_s = terms
        _, attention_rate, read_rate = self.rates
        seconds, memory = attention, kv_per_gpu
        if self.tp != 1:
            seconds /= self.tp
        seconds /= attention_rate
        memory /= read_rate
        np.maximum(seconds, memory, out=seconds)
        seconds += gemms_s
        if least_s:
            np.maximum(seconds, least_s, out=seconds)
        for term in added:
            if term:
                seconds += term
        return seconds
