"""The Workshop: exercises that follow the source chapters (data/workshop.toml), each answer derived
from core for the exercise's scenario, and a printable handout of them in either language.

``answers_memory``, ``answers_speed`` and ``answers_serving`` are the derivations, used through
``answers``.
"""

__all__ = [
    "answer_boxes",  # Box, Tolerance, Slip, boxes, box, all_boxes: each exercise's answer boxes
    "answer_check",  # check, Verdict: a typed answer checked, the likely slip named
    "answer_parse",  # read, Reading, Unreadable: what a student types, read as a number in SI units
    "answers",  # answer(): an exercise's answer, derived for its scenario
    "exercises",  # Exercise, Scenario, load_exercises, exercise, app_root, is_loopback, room_root: exercises, links
    "handout",  # the handout as Markdown and self-contained HTML
    "text",  # Answer, Table, Text: an answer's steps in either language
]
