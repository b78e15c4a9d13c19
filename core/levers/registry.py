"""The registry of levers: every lever's model, in the order their parts and notices are listed.

A new lever is a settings field (:mod:`core.levers.settings`), a module with a :class:`~core.levers.base.Lever`
subclass, and one entry here; a deployment hands the models of the levers that are on
(:func:`levers_on`) to memory and timing (:attr:`core.spec.deployment.Deployment.lever_models`).
"""

from __future__ import annotations

from core.levers import attention_kernel, lora, offload, prefix, speculative
from core.levers.base import Lever, PartLabel
from core.levers.settings import Levers

LEVERS: tuple[Lever, ...] = (speculative.LEVER, prefix.LEVER, lora.LEVER, attention_kernel.LEVER, offload.LEVER)
"""Order: validation, memory parts (report rows and chart segments) and notices follow it."""


def levers_on(levers: Levers) -> tuple[Lever, ...]:
    """The models of the levers that are on in ``levers``."""
    active = levers.active
    return tuple(lever for lever in LEVERS if lever.name in active) if active else ()


def memory_part_labels() -> tuple[PartLabel, ...]:
    """Every memory part any lever can add, in report order."""
    return tuple(label for lever in LEVERS for label in lever.part_labels)
