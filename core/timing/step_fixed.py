"""Fixed costs of an engine step, beside its kernels' work.

    step fixed = step overhead + layers x layer overhead            [s per step]

Every layer's kernels are launched in every step, whatever the pipeline split.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.spec.deployment import Deployment


def step_fixed_seconds(dep: Deployment) -> float:
    """Fixed cost of one engine step [s] = step overhead + layers x layer overhead (every layer's
    kernels are launched in every step, whatever the pipeline split)."""
    eff = dep.efficiency
    return eff.step_overhead_s + dep.model.num_layers * eff.layer_overhead_s
