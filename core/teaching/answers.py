"""Each exercise's answer, derived from core for its scenario (one function per exercise id)."""

from __future__ import annotations

from collections.abc import Callable

from core.serving.load_sweep import predicted_rates
from core.spec.catalog import Catalog, load_catalog
from core.teaching import answers_memory, answers_serving, answers_speed
from core.teaching.exercises import Exercise
from core.teaching.text import Answer

DERIVATIONS: dict[str, Callable[[Exercise, Catalog], Answer]] = {
    "kv_gqa": answers_memory.kv_gqa,
    "ceiling": answers_memory.ceiling,
    "knee": answers_speed.knee,
    "quantization": answers_memory.quantization,
    "tensor_parallel": answers_speed.tensor_parallel,
    "pitfall": answers_serving.pitfall,
    "tuning": answers_serving.tuning,
}


def answer(ex: Exercise, catalog: Catalog | None = None) -> Answer:
    """What the tool derives for ``ex`` (its scenario built as the sidebar builds it)."""
    return DERIVATIONS[ex.id](ex, catalog or load_catalog())


def page_inputs(ex: Exercise, catalog: Catalog | None = None) -> dict[str, int | float | str]:
    """Inputs of the answering page beside the sidebar's that the exercise sets, by their keys (also
    their URL parameters): the Load test's traffic for the capacity pitfall; {} for other pages."""
    if ex.page != "load-test":
        return {}
    dep, work = ex.scenario.build(catalog or load_catalog())
    static, _ = predicted_rates(dep, work.input_len, work.output_len)
    return answers_serving.load_test_inputs(ex, static)


def page_query(ex: Exercise, catalog: Catalog | None = None) -> dict[str, str]:
    """:func:`page_inputs` as URL parameters."""
    return {key: str(value) for key, value in page_inputs(ex, catalog).items()}
