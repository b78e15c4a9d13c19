"""A deployment (model on GPUs with formats and engine settings) and a workload to estimate.

Both are frozen, keyword-only and validated at creation, so every formula downstream can trust
its inputs; messages name the field and the allowed range.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.levers.registry import levers_on
from core.levers.settings import Levers
from core.spec.cluster import DEFAULT_INTER_NODE, INTER_NODE_LINKS
from core.spec.efficiency import Efficiency, class_efficiency, default_efficiency, resolved
from core.spec.engine import EngineConfig, Parallelism, tensor_split_error
from core.spec.gpu import GpuSpec
from core.spec.model import ModelSpec
from core.spec.precision import Precision
from core.spec.support import attention_problem, kv_problem, weights_problem

if TYPE_CHECKING:
    from core.levers.base import Lever

MAX_TOKENS = 100_000_000
MAX_BATCH = 10_000_000
DECODE_CONTEXT_MIDPOINT = 2  # decode runs from context I to I + O; its mean is I + O / 2


@dataclass(frozen=True, kw_only=True)
class Deployment:
    """One replica: a model on tp x pp GPUs of one type, with weight and KV formats."""

    model: ModelSpec
    gpu: GpuSpec
    weights: Precision
    kv: Precision
    parallel: Parallelism = field(default_factory=Parallelism)
    engine: EngineConfig = field(default_factory=EngineConfig)
    levers: Levers = field(default_factory=Levers)
    """What-if levers (speculative decoding, prefix caching, offloading, LoRA, attention kernel)."""
    inter_node: str = DEFAULT_INTER_NODE
    """The link between servers (:data:`core.spec.cluster.INTER_NODE_LINKS`), used where the replica
    spans more than :data:`core.spec.cluster.GPUS_PER_NODE` GPUs (:mod:`core.timing.comm`)."""

    def __post_init__(self) -> None:
        tp, pp = self.parallel.tp, self.parallel.pp
        if self.inter_node not in INTER_NODE_LINKS:
            raise ValueError(f"inter-node link must be one of {', '.join(INTER_NODE_LINKS)}, got {self.inter_node!r}")
        if (problem := tensor_split_error(self.model, tp)) is not None:
            raise ValueError(problem)
        if (problem := weights_problem(self.gpu, self.weights)) is not None:
            raise ValueError(problem)
        if (problem := kv_problem(self.gpu, self.kv, self.model)) is not None:
            raise ValueError(problem)
        if (problem := attention_problem(self.gpu, self.model)) is not None:
            raise ValueError(problem)
        if pp > self.model.num_layers:
            raise ValueError(f"pp ({pp}) must not exceed the number of layers ({self.model.num_layers})")
        if self.parallel.num_gpus > 1 and self.gpu.link_bandwidth_bidirectional <= 0:
            raise ValueError(f"{self.gpu.name} has no GPU-to-GPU link in the catalog; use one GPU")
        if self.engine.max_model_len is not None and self.engine.max_model_len > self.model.max_context:
            raise ValueError(
                f"max_model_len ({self.engine.max_model_len}) exceeds the model's maximum context "
                f"({self.model.max_context})"
            )

        for lever in self.lever_models:
            lever.validate(self)

    @property
    def lever_models(self) -> tuple[Lever, ...]:
        """The models of the levers that are on (:func:`core.levers.registry.levers_on`), in registry
        order: memory and timing take the levers from here, so they never import :mod:`core.levers`."""
        return levers_on(self.levers)

    @functools.cached_property
    def efficiency(self) -> Efficiency:
        """The engine's efficiency factors, or the default for this GPU's memory class, with the
        release's and endpoint's rules (worked out once per deployment: the solvers ask thousands of times)."""
        if self.engine.efficiency is not None:
            return resolved(self.engine.efficiency, self.engine.release, self.engine.endpoint)
        return default_efficiency(self.gpu.memory_type, self.engine.release, self.engine.endpoint)

    @property
    def max_model_len(self) -> int:
        return self.engine.max_model_len or self.model.max_context

    @property
    def batch_limits(self) -> tuple[int, int]:
        """(max_num_batched_tokens, max_num_seqs): as set, or the engine's default for this GPU."""
        return self.engine.batch_limits(self.gpu.memory_bytes, self.gpu.name, self.parallel.tp, self.max_model_len)

    @property
    def memory_fraction(self) -> float:
        """The engine's memory-fraction flag in effect (vLLM gpu_memory_utilization, SGLang
        mem_fraction_static, TensorRT-LLM kv_cache_free_gpu_memory_fraction)."""
        return self.engine.memory_fraction(
            self.gpu.memory_bytes, self.parallel, self.model.mla is not None, self.gpu.vendor
        )

    # single changes, validated like any deployment (a change this deployment cannot take raises)

    def with_engine(self, **fields) -> Deployment:
        """This deployment with engine settings changed (names as :class:`EngineConfig`'s fields)."""
        return dataclasses.replace(self, engine=dataclasses.replace(self.engine, **fields))

    def with_efficiency(self, **fields) -> Deployment:
        """This deployment with efficiency factors changed, starting from the ones in effect."""
        base = self.engine.efficiency or class_efficiency(self.gpu.memory_type)  # release rules still apply
        return self.with_engine(efficiency=dataclasses.replace(base, **fields))

    def with_levers(self, **fields) -> Deployment:
        """This deployment with levers changed (names as :class:`Levers`' fields)."""
        return dataclasses.replace(self, levers=dataclasses.replace(self.levers, **fields))

    def with_tp(self, tp: int) -> Deployment:
        """This deployment split over ``tp`` GPUs per pipeline stage."""
        return dataclasses.replace(self, parallel=Parallelism(tp=tp, pp=self.parallel.pp, dp=self.parallel.dp))


@dataclass(frozen=True, kw_only=True)
class Workload:
    """A batch of identical requests: prompt and answer lengths [tokens] and how many run at once."""

    input_len: int = 1024
    output_len: int = 256
    batch: int = 1

    def __post_init__(self) -> None:
        for name, high in (("input_len", MAX_TOKENS), ("output_len", MAX_TOKENS), ("batch", MAX_BATCH)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
                raise ValueError(f"{name} must be an integer from 1 to {high}, got {value!r}")

    @property
    def request_len(self) -> int:
        return self.input_len + self.output_len

    @property
    def decode_context(self) -> float:
        """Mean context of this workload's decode steps [tokens] (:func:`decode_context`)."""
        return decode_context(self.input_len, self.output_len)


def decode_context(input_len, output_len):
    """Mean context a decode step attends to [tokens] = I + O / 2 (array-friendly): decode runs
    from I cached tokens to I + O, and step cost is linear in the context."""
    return input_len + output_len / DECODE_CONTEXT_MIDPOINT


def check_fits_context(deployment: Deployment, workload: Workload) -> None:
    """Raise when one request is longer than the engine would accept."""
    if workload.request_len > deployment.max_model_len:
        raise ValueError(
            f"input_len + output_len ({workload.request_len}) exceeds max_model_len "
            f"({deployment.max_model_len}); raise max_model_len or shorten the request"
        )
