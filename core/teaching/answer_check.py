"""A student's typed answer checked against its box (:mod:`answer_boxes`): read (:mod:`answer_parse`),
compared within the box's tolerance and, when wrong, the likely slip named where one of the box's
slips explains the value within that tolerance (stretched by the slip's factor for counts).

The verdict names its exercise so the page can keep the How derivation one click away; it never
shows the expected value on a wrong answer. Messages: ``data/messages/answer_check.toml``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.messages import message
from core.teaching.answer_boxes import Box, box
from core.teaching.answer_parse import Unreadable, read

UNIT_TEXT = {
    "GiB": "gib",
    "bytes": "bytes",
    "requests": "requests",
    "ms": "ms",
    "tok/s": "tok_s",
    "requests/s": "req_s",
}
"""A box's unit -> its message (``answer_check.unit_*``): the unit as shown and typed in each language."""
EXAMPLES = {"GiB": "12.34", "bytes": "12,345", "requests": "17", "ms": "25.3", "tok/s": "1,234", "requests/s": "2.5"}
"""A number in each unit for the messages' examples and the boxes' placeholders: no box's answer nor any slip
of one (tests/test_answer_boxes.py), so a placeholder never gives an answer away."""


def unit_text(unit: str, lang: str = "en") -> str:
    """A box's unit as the student reads and may type it in ``lang`` (read() knows every one)."""
    return message(f"answer_check.unit_{UNIT_TEXT[unit]}", lang)


@dataclass(frozen=True)
class Verdict:
    """What :func:`check` found: ``readable`` (False: ``message`` says why), ``correct``, ``slip``
    (a key of ``answer_check.slip_*`` or None), ``message`` in the language, ``value`` the reading in
    the box's unit (None when unreadable), and the exercise whose How the page links."""

    exercise_id: str
    box: str
    readable: bool
    correct: bool
    slip: str | None
    message: str
    value: float | None = None


def _one_line(typed: str, limit: int = 24) -> str:
    shown = re.sub(r"\s+", " ", typed).strip()
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def _number(value: float) -> str:
    return f"{value:,.6g}" if abs(value) < 1e6 else f"{value:,.0f}" if abs(value) < 1e15 else f"{value:.3g}"


def slip_of(b: Box, value: float) -> str | None:
    """The first of the box's slips that explains ``value`` [SI] within the tolerance, or None."""
    if b.tolerance.allows(value, b.expected):
        return None
    for slip in b.slips:
        if b.expected and b.tolerance.allows(value, slip.value, slip.value / b.expected):
            return slip.key
    return None


def check(exercise_id: str, box_name: str, typed: str, lang: str = "en") -> Verdict:
    """``typed`` checked against the box (unknown exercise or box: ValueError; any text: a verdict)."""
    b = box(exercise_id, box_name)
    label = message(b.label, lang)
    unit = unit_text(b.unit, lang)
    example = f"{EXAMPLES[b.unit]} {unit}"
    try:
        reading = read(typed)
    except Unreadable as why:
        text = message(
            f"answer_check.{why.key}", lang, box=label, typed=_one_line(str(typed)), example=example, **why.fields
        )
        return Verdict(b.exercise_id, b.name, False, False, None, text)
    if reading.dimension is not None and reading.dimension != b.dimension:
        text = message("answer_check.wrong_unit", lang, box=label, unit=unit, typed_unit=reading.unit, example=example)
        return Verdict(b.exercise_id, b.name, False, False, None, text)
    value = reading.value if reading.dimension else reading.value * b.scale
    shown = f"{_number(value / b.scale)} {unit}"
    if b.tolerance.allows(value, b.expected):
        return Verdict(
            b.exercise_id, b.name, True, True, None, message("answer_check.correct", lang, value=shown), value / b.scale
        )
    slip = slip_of(b, value)
    if slip is None:
        text = message("answer_check.wrong", lang, value=shown, tolerance=message(b.tolerance.reason, lang))
    else:
        fields = dict(next(s for s in b.slips if s.key == slip).fields)
        text = message(
            "answer_check.wrong_slip", lang, value=shown, slip=message(f"answer_check.slip_{slip}", lang, **fields)
        )
    return Verdict(b.exercise_id, b.name, True, False, slip, text, value / b.scale)
