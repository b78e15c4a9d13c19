"""The one interface through which a what-if lever changes memory and time.

Levers sit above memory and timing: a lever module may import their formulas, and memory and
timing never import :mod:`core.levers`. They take the models of the levers that are on from the
deployment they are given (:attr:`core.spec.deployment.Deployment.lever_models`, which the
registry fills, :func:`core.levers.registry.levers_on`), ask each for its terms and add them up:

- memory: :meth:`Lever.memory_parts`, named parts of one GPU's memory
  (:class:`core.memory.budget.MemoryPart`), each charged where it belongs (beside the weights, in
  the activation peak, or moved to host memory);
- KV: :meth:`Lever.kv_bytes_per_token` and :meth:`Lever.sequence_kv_bytes` (KV a token and a
  sequence hold beside the target's),
  :meth:`Lever.shared_tokens` (prompt tokens held once for the whole batch) and
  :meth:`Lever.cached_tokens` (prompt tokens that skip prefill);
- time: :meth:`Lever.step_work` (FLOPs, GPU bytes and host bytes a phase adds,
  :class:`core.timing.roofline.StepWork`), :meth:`Lever.spilled_kv_bytes` (KV read over the host
  link), :meth:`Lever.side_deployment` (a model that runs beside the target and prefills every
  prompt) and :meth:`Lever.decode_step` (a lever that changes what one decode step is, as
  speculative decoding does);
- notices: :meth:`Lever.notices`, the costs the reader of an estimate should be told.

A lever that times a phase calls the phase roofline itself (:func:`core.timing.phases.phase_time`).
Every hook has a default that contributes nothing; a lever overrides what it changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.timing.roofline import StepWork

if TYPE_CHECKING:
    from core.memory.budget import MemoryPart
    from core.messages import Notice
    from core.spec.deployment import Deployment, Workload


@dataclass(frozen=True)
class PartLabel:
    """A memory part a lever may add, with its label in the text report."""

    name: str
    label: str


NO_WORK = StepWork()


class Lever:
    """A lever's model. ``name`` is its key in :attr:`core.levers.settings.Levers.active`."""

    name: str = ""
    part_labels: tuple[PartLabel, ...] = ()
    """Every memory part this lever can add, in report order."""
    linear_step_work: bool = True
    """False when :meth:`step_work` is not a function of a step's token and sequence counts alone (the
    simulator then takes its general path). The fast path evaluates a lever's work once per step size
    (tokens, sequences), so work that is not linear in them but depends on nothing else, such as the
    LoRA adapters a step reads (at most one per sequence), takes the fast path exactly."""

    def validate(self, dep: Deployment) -> None:
        """Raise ValueError when the lever cannot be modelled for this deployment."""

    def memory_parts(self, dep: Deployment, max_num_batched_tokens: int) -> tuple[MemoryPart, ...]:
        return ()

    def sequence_kv_bytes(self, dep: Deployment, tokens, block_size: int):
        """KV one sequence of ``tokens`` tokens holds beside the target's, on one GPU [bytes]."""
        return 0.0

    def kv_bytes_per_token(self, dep: Deployment) -> float:
        """Full-attention KV per token beside the target's, on one GPU [bytes]."""
        return 0.0

    def shared_tokens(self, dep: Deployment, input_len):
        """Prompt tokens whose KV the whole batch holds once [tokens]."""
        return 0.0

    def cached_tokens(self, dep: Deployment, input_len):
        """Prompt tokens found in the cache, which prefill skips [tokens]."""
        return 0.0

    def step_work(self, dep: Deployment, tokens, sequences_per_step, steps) -> StepWork:
        return NO_WORK

    def spilled_kv_bytes(self, dep: Deployment, kv_in_use: Callable[[], Any], kv_budget: Callable[[], float]):
        """KV bytes per GPU a step reads from host memory; the callables give the batch's KV and the
        GPU's KV budget only when they are needed (they cost a memory evaluation)."""
        return 0.0

    def side_deployment(self, dep: Deployment) -> Deployment | None:
        """A model that runs beside the target on the same GPUs and prefills every prompt."""
        return None

    def decode_step(self, dep: Deployment, sequences, context):
        """Decode time per emitted token when this lever changes what a step is, else None."""
        return None

    def notices(self, dep: Deployment, workload: Workload, memory) -> Iterator[Notice]:
        return iter(())
