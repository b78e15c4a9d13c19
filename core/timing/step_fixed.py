"""Fixed costs of an engine step beside its kernels' work, and the CUDA graphs it runs in.

    step fixed = step overhead + layers x layer overhead                          [s per step]
    graph rows = the smallest capture size >= a decode step's tokens, or the tokens above the largest
    kernels   >= layers x eager layer launch, for a step of more tokens than the largest size    [s]

Every layer's kernels are launched in every step, whatever the pipeline split. An engine replays a
CUDA graph captured for a few batch sizes (:func:`core.spec.engine_defaults.cuda_graph_sizes`): a
decode step of T sequences runs the graph of the next size up, its GEMMs computing the padded rows too
(nothing else: the padded rows have no KV and no logits; steps with prompt chunks are padded too by vLLM's
piecewise graphs, not modelled), and a step above the largest size runs without
graphs: the host launches its kernels one by one, and they cannot run faster than that
(Efficiency.eager_layer_launch_s). Engines whose sizes are not modelled get neither.
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING

import numpy as np

from core.spec.engine_defaults import cuda_graph_sizes

if TYPE_CHECKING:
    from core.spec.deployment import Deployment


def step_fixed_seconds(dep: Deployment) -> float:
    """Fixed cost of one engine step [s] = step overhead + layers x layer overhead (every layer's
    kernels are launched in every step, whatever the pipeline split)."""
    eff = dep.efficiency
    return eff.step_overhead_s + dep.model.num_layers * eff.layer_overhead_s


def graph_sizes(dep: Deployment) -> tuple:
    """The step sizes (tokens) the deployment's engine captures CUDA graphs for, ascending; () when not modelled."""
    budget, max_seqs = dep.batch_limits
    return cuda_graph_sizes(dep.engine.release, max_seqs, budget, dep.gpu, dep.parallel.tp)


class Graphs:
    """A deployment's CUDA-graph sizes: the rows a step's GEMMs run and the launches of a step without graphs."""

    def __init__(self, dep: Deployment | None) -> None:
        """The graphs of ``dep``'s engine; None: no graphs modelled."""
        self.sizes = graph_sizes(dep) if dep is not None else ()
        self.largest = self.sizes[-1] if self.sizes else np.inf
        self.launch_s = dep.model.num_layers * dep.efficiency.eager_layer_launch_s if dep is not None else 0.0

    def padding(self, m, decode=True):
        """Rows the GEMMs of a step of ``m`` tokens compute over the ``m`` the step has (>= 1): for a
        decode step (one token a sequence; ``decode`` may be an array), the next capture size up over m;
        1 above the largest size, with no sizes, for an empty step or a step with prompt tokens."""
        if not self.sizes:
            return 1.0
        if isinstance(m, float | int) and isinstance(decode, bool):
            if m <= 0 or m > self.largest or not decode:
                return 1.0
            return self.sizes[bisect.bisect_left(self.sizes, math_ceil(m))] / m
        m = np.asarray(m, dtype=float)
        sizes = np.asarray(self.sizes, dtype=float)
        index = np.minimum(np.searchsorted(sizes, np.ceil(m)), sizes.size - 1)
        inside = (m > 0) & (m <= self.largest) & np.asarray(decode, dtype=bool)
        return np.where(inside, sizes[index] / np.where(inside, m, 1.0), 1.0)

    def eager_floor(self, m, steps):
        """The least time the kernels of ``steps`` steps of ``m`` tokens each take [s]: the host's launches
        of every layer where the step runs without graphs (above the largest size), else 0."""
        if not self.sizes or not self.launch_s:
            return 0.0
        if isinstance(m, float | int):
            return steps * self.launch_s if m > self.largest else 0.0
        return np.asarray(steps, dtype=float) * np.where(np.asarray(m) > self.largest, self.launch_s, 0.0)


def math_ceil(m: float) -> int:
    """The smallest integer >= m."""
    return -int(-m // 1)
