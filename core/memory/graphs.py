"""CUDA-graph memory from the graphs vLLM captures: capture sizes by release, and a fitted size.

vLLM captures one decode graph per batch size in its capture list; their memory pool grows with the
layers each graph replays and the number of graphs:

    graphs [GiB] = a + b x layers per GPU x capture sizes / 1000

The capture sizes are the engine's, by release (:func:`core.spec.engine_defaults.cuda_graph_sizes`, the
one rule the simulator's padding uses too).

a and b are fitted on the start-up logs of data/validation that print "Graph capturing finished in X
secs, took Y GiB" (:data:`GRAPH_FIT`; the fit and its held-out check: bench/memory_validation.py
--graphs). Not charged in the budget yet: :attr:`core.spec.engine.EngineConfig.cuda_graph_bytes` is
still the flat 0.9 GiB; :func:`graph_bytes` is the candidate rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.spec import units
from core.spec.engine_defaults import cuda_graph_sizes

if TYPE_CHECKING:
    from core.spec.deployment import Deployment

GRAPH_FIT = (0.246, 0.151)
"""(a [GiB], b [GiB per 1000 layer-graphs]): least squares on the 11 logged graph pools of
data/validation (vLLM 0.7.2-0.31, 0.20-1.06 GiB). A weak fit: the same x gives 0.69 and 1.06 GiB
(Qwen3-30B-A3B on an H100 and an RTX 3090), Qwen2.5-1.5B logs 0.20-0.28 GiB against 0.46."""


def layer_graphs(dep: Deployment) -> float:
    """Layers per GPU x capture sizes / 1000, the fit's variable [thousand layer-graphs]."""
    tokens, seqs = dep.batch_limits
    layers = dep.model.num_layers / dep.parallel.pp
    sizes = cuda_graph_sizes(dep.engine.release, seqs, tokens, dep.gpu, dep.parallel.tp)
    return layers * len(sizes) / 1000


def graph_bytes(dep: Deployment, fit: tuple[float, float] = GRAPH_FIT) -> float:
    """CUDA-graph memory on one GPU [bytes] = (a + b x layer graphs) GiB."""
    a, b = fit
    return (a + b * layer_graphs(dep)) * units.GiB
