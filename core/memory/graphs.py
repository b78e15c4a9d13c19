"""CUDA-graph memory from the graphs vLLM captures: capture sizes by release, and a fitted size.

vLLM captures one decode graph per batch size in its capture list; their memory pool grows with the
layers each graph replays and the number of graphs:

    graphs [GiB] = a + b x layers per GPU x capture sizes / 1000

Capture sizes by release, for max = min(2 x max_num_seqs, 512) (read in the release sdists):

- vLLM 0.11.0 and older: 1, 2, 4, then 8, 16, ... up to max in steps of 8, those <= max_num_batched_tokens
  (vllm/config/__init__.py:589-606 in 0.11.0; scheduler.py:222-227 sets max);
- vLLM 0.11.1 to 0.33: 1, 2, 4, 8-248 in steps of 8, 256-max in steps of 16, max capped at
  max_num_batched_tokens and that size added when below the cap (vllm/config/vllm.py:2450-2600 in
  0.33.0; the 16-step is in 0.11.1's config/vllm.py, not 0.11.0's). 0.33 raises the cap to 1024 on
  Blackwell (capability family 100), not modelled here.

a and b are fitted on the start-up logs of data/validation that print "Graph capturing finished in X
secs, took Y GiB" (:data:`GRAPH_FIT`; the fit and its held-out check: bench/memory_validation.py
--graphs). Not charged in the budget yet: :attr:`core.spec.engine.EngineConfig.cuda_graph_bytes` is
still the flat 0.9 GiB; :func:`graph_bytes` is the candidate rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.spec import units
from core.spec.release import Release

if TYPE_CHECKING:
    from core.spec.deployment import Deployment

MAX_CAPTURE_SIZE = 512  # vLLM's default ceiling of the capture list (non-Blackwell)
STEP_16_FROM = (0, 11, 1)  # sizes from 256 up go in steps of 16 (vllm/config/vllm.py in 0.11.1)
GRAPH_FIT = (0.246, 0.151)
"""(a [GiB], b [GiB per 1000 layer-graphs]): least squares on the 11 logged graph pools of
data/validation (vLLM 0.7.2-0.31, 0.20-1.06 GiB). A weak fit: the same x gives 0.69 and 1.06 GiB
(Qwen3-30B-A3B on an H100 and an RTX 3090), Qwen2.5-1.5B logs 0.20-0.28 GiB against 0.46."""


def capture_sizes(release: Release, max_num_seqs: int, max_num_batched_tokens: int) -> tuple[int, ...]:
    """The batch sizes vLLM captures a decode CUDA graph for, ascending (see the module docstring)."""
    top = min(2 * max_num_seqs, MAX_CAPTURE_SIZE)
    if release.engine == "vllm" and not release.at_least(STEP_16_FROM):
        sizes = [1, 2, 4, *range(8, top + 1, 8)]
        return tuple(s for s in sizes if s <= max_num_batched_tokens)
    top = min(top, max_num_batched_tokens)
    sizes = {s for s in (1, 2, 4) if s <= top} | set(range(8, min(top + 1, 256), 8)) | set(range(256, top + 1, 16))
    if max_num_batched_tokens <= top:
        sizes.add(max_num_batched_tokens)
    return tuple(sorted(sizes))


def layer_graphs(dep: Deployment) -> float:
    """Layers per GPU x capture sizes / 1000, the fit's variable [thousand layer-graphs]."""
    tokens, seqs = dep.batch_limits
    layers = dep.model.num_layers / dep.parallel.pp
    return layers * len(capture_sizes(dep.engine.release, seqs, tokens)) / 1000


def graph_bytes(dep: Deployment, fit: tuple[float, float] = GRAPH_FIT) -> float:
    """CUDA-graph memory on one GPU [bytes] = (a + b x layer graphs) GiB."""
    a, b = fit
    return (a + b * layer_graphs(dep)) * units.GiB
