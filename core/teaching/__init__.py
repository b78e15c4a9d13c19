"""The Workshop: exercises that follow the source chapters (data/workshop.toml), each answer derived
from core for the exercise's scenario, and a printable handout of them in either language.

``answers_memory``, ``answers_speed`` and ``answers_serving`` are the derivations, used through
``answers``.
"""

__all__ = [
    "answers",  # answer(): an exercise's answer, derived for its scenario
    "exercises",  # Exercise, Scenario, load_exercises, exercise, app_root, is_loopback, room_root: exercises, links
    "handout",  # the handout as Markdown and self-contained HTML
    "text",  # Answer, Table, Text: an answer's steps in either language
]
