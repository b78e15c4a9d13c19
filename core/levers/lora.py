"""Multi-LoRA serving: adapter size, how many fit beside the KV cache, and the per-step cost.

A rank-r adapter on a linear layer of d_in inputs and d_out outputs adds A (r x d_in) and
B (d_out x r): r (d_in + d_out) parameters. Per decoder layer, with standard attention:

    q: hidden -> heads x head_dim          k, v: hidden -> kv_heads x head_dim
    o: heads x head_dim -> hidden          gate, up: hidden -> ffn;  down: ffn -> hidden

``attention`` targets q, k, v, o; ``all-linear`` adds gate, up and down (PEFT's "all-linear").
Adapters are kept in 16-bit, and an engine like vLLM preallocates ``max_loras`` slots of the
largest rank, so GPU memory = adapters x bytes per adapter. Each step runs batched adapter kernels
(Punica's SGMV, vLLM's punica ops): 2 x r x (d_in + d_out) FLOPs per token and module, and it
reads every adapter that some sequence in the step uses; with N adapters picked uniformly by B
sequences, N (1 - (1 - 1/N)^B) distinct ones are expected.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from core.levers.base import Lever, PartLabel
from core.levers.settings import Lora
from core.memory.budget import MemoryPart
from core.spec.model import ModelSpec
from core.spec.precision import ACTIVATION_PRECISION
from core.timing.roofline import StepWork

if TYPE_CHECKING:
    from core.spec.deployment import Deployment


def lora_module_shapes(model: ModelSpec, targets: str) -> tuple[tuple[int, int], ...]:
    """(d_in, d_out) of each targeted linear layer in one decoder layer."""
    if model.mla is not None:
        raise ValueError(f"LoRA sizes for multi-head latent attention ({model.name}) are not modelled")
    if model.is_hybrid:
        raise ValueError(
            f"LoRA sizes for {model.name}'s Gated DeltaNet / Mamba2 layers are not modelled (its layers differ in kind)"
        )
    q_out = model.num_heads * model.head_dim
    kv_out = model.num_kv_heads * model.head_dim
    h = model.hidden_size
    shapes = [(h, q_out), (h, kv_out), (h, kv_out), (q_out, h)]
    if targets == "all-linear":
        if model.moe is not None:
            raise ValueError(
                f"LoRA on the experts of a mixture-of-experts model ({model.name}) is not modelled; target attention"
            )
        f = model.ffn_size
        shapes += [(h, f), (h, f), (f, h)]
    return tuple(shapes)


def lora_params_per_adapter(model: ModelSpec, lora: Lora) -> int:
    """Parameters of one adapter [count] = layers x sum over targeted modules of r (d_in + d_out)."""
    per_layer = sum(d_in + d_out for d_in, d_out in lora_module_shapes(model, lora.targets))
    return model.num_layers * lora.rank * per_layer


def lora_bytes_per_adapter(model: ModelSpec, lora: Lora) -> float:
    """One adapter's weights in 16-bit [bytes]."""
    return lora_params_per_adapter(model, lora) * ACTIVATION_PRECISION.bytes_per_element


def lora_memory_bytes(model: ModelSpec, lora: Lora, tp: int) -> float:
    """GPU memory of the resident adapter slots on one GPU [bytes] (sharded like the base layers)."""
    return lora.adapters * lora_bytes_per_adapter(model, lora) / tp


def lora_flops(model: ModelSpec, lora: Lora, tokens):
    """Adapter FLOPs of a step on the whole replica [FLOP] = 2 x adapter params x tokens."""
    return 2 * lora_params_per_adapter(model, lora) * np.asarray(tokens, dtype=float)  # a multiply-add is 2 FLOPs


def active_adapters(adapters: int, sequences):
    """Expected distinct adapters among ``sequences`` requests that pick uniformly [count]."""
    s = np.asarray(sequences, dtype=float)
    return adapters * (1 - (1 - 1 / adapters) ** s)


def lora_bytes_read(model: ModelSpec, lora: Lora, sequences_per_step, steps):
    """Adapter weights a phase reads on the whole replica [bytes] = steps x active x adapter bytes."""
    per_step = active_adapters(lora.adapters, sequences_per_step) * lora_bytes_per_adapter(model, lora)
    return np.asarray(steps, dtype=float) * per_step


def max_adapters_beside_kv(model: ModelSpec, lora: Lora, tp: int, kv_budget_without: float, kv_needed: float) -> int:
    """Most adapters whose slots leave ``kv_needed`` bytes of KV budget on one GPU [count]."""
    spare = kv_budget_without - kv_needed
    if spare <= 0:
        return 0
    return int(spare // (lora_bytes_per_adapter(model, lora) / tp))


class LoraLever(Lever):
    """Multi-LoRA as memory and time terms: the resident adapter slots, and each step's adapter
    FLOPs and reads of the adapters its sequences use (not linear in the batch)."""

    name = "lora"
    part_labels = (PartLabel("lora", "LoRA adapters"),)

    def validate(self, dep: Deployment) -> None:
        lora_module_shapes(dep.model, dep.levers.lora.targets)  # raises for what is not modelled

    def memory_parts(self, dep: Deployment, max_num_batched_tokens: int) -> tuple[MemoryPart, ...]:
        return (MemoryPart("lora", lora_memory_bytes(dep.model, dep.levers.lora, dep.parallel.tp), "gpu_static"),)

    def step_work(self, dep: Deployment, tokens, sequences_per_step, steps) -> StepWork:
        lora = dep.levers.lora
        return StepWork(
            flops=lora_flops(dep.model, lora, tokens),
            weight_bytes=lora_bytes_read(dep.model, lora, sequences_per_step, steps),
        )


LEVER = LoraLever()
