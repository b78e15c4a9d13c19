"""What a typed name that resolved to no single catalog entry may have meant: the closest names by
edit distance (:func:`closest`, for models and GPUs alike), offered and never taken, and the one-line
error that lists them (:class:`UnknownName`)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import TypeVar

from core.messages import alternatives, message

T = TypeVar("T")
SUGGESTIONS = 3
MAX_TYPED = 200
"""The longest text read as a model or GPU name (the model search box takes as many); a longer one names
nothing and is not read at all: a link's ``model=`` or ``gpu=`` may carry 500 KB (issue 29)."""
SHOWN_TYPED = 60
"""The most of a typed name a message quotes (then "…"): a message stays one line whatever was typed."""
"""At most this many catalog names are offered for a name that did not resolve."""
LIKENESS_CUTOFF = 0.6
"""difflib's ratio (2 x matching characters / both lengths, 0-1) below which a name is not offered:
``lama 3.1 8b`` against ``llama 3.1 8b`` is 0.96, against ``gemma 2 9b`` 0.5."""
LIKENESS_MARGIN = 0.2
"""Names this much less alike than the closest one are not offered beside it (``mi300``: mi300x
at 0.91, not b300 at 0.67)."""


def likeness(typed: str, key: str) -> float:
    """How alike two names are by edit distance: difflib's ratio of their characters (0-1)."""
    return difflib.SequenceMatcher(None, typed, key).ratio()


def closest(typed: str, entries: Iterable[tuple[T, Iterable[str]]], limit: int = SUGGESTIONS) -> list[T]:
    """The entries whose keys are most like ``typed``, best first (stable for equals), at most
    ``limit``: a key holding ``typed`` whole (or held by it) first, then by :func:`likeness`, none
    below :data:`LIKENESS_CUTOFF` or :data:`LIKENESS_MARGIN` under the best, unless held whole."""
    if not typed:
        return []
    scored = []
    for item, keys in entries:
        keys = list(keys)
        if keys:
            held = any(typed in k or k in typed for k in keys)
            scored.append((held, max(likeness(typed, k) for k in keys), item))
    scored.sort(key=lambda s: (not s[0], -s[1]))
    best = max((score for _, score, _ in scored), default=0.0)
    keep = [
        item for held, score, item in scored if held or (score >= LIKENESS_CUTOFF and score >= best - LIKENESS_MARGIN)
    ]
    return keep[:limit]


class UnknownName(ValueError):
    """A typed model or GPU name that names no single catalog entry: the entries that fit it equally
    (``ambiguous``), or the closest ones to offer; at most :data:`SUGGESTIONS` of either. Its text is
    one line, as the CLI prints it."""

    def __init__(
        self,
        kind: str,
        typed: str,
        ids: Sequence[str],
        *,
        ambiguous: bool,
        known: int,
        labels: Sequence[str] | None = None,
    ) -> None:
        self.kind = kind
        """'model' or 'gpu'."""
        typed = typed.strip()
        self.typed = typed if len(typed) <= SHOWN_TYPED else typed[:SHOWN_TYPED] + "…"
        """What was typed, as the message quotes it (at most :data:`SHOWN_TYPED` characters)."""
        self.ambiguous = ambiguous
        self.more = max(len(ids) - SUGGESTIONS, 0) if ambiguous else 0
        """Further entries that fit as well, not listed."""
        self.ids = tuple(ids[:SUGGESTIONS])
        """Catalog ids to offer, best first."""
        self.labels = tuple(labels[:SUGGESTIONS]) if labels is not None else self.ids
        """How each id is shown (a model's with its Hugging Face id)."""
        self.known = known
        """Catalog entries of this kind."""
        super().__init__(self.text())

    def text(self, lang: str = "en") -> str:
        """The one-line message: ambiguous, unknown with the closest ids, or unknown with none close."""
        options = alternatives(self.labels, lang)
        if self.more:
            options = message("names.more", lang, options=options, count=self.more)
        if self.ambiguous:
            text = message(f"names.ambiguous_{self.kind}", lang, typed=self.typed, options=options)
        elif self.ids:
            text = message(f"names.suggest_{self.kind}", lang, typed=self.typed, options=options)
        else:
            text = message(f"names.unknown_{self.kind}", lang, typed=self.typed)
        return text + message(f"names.list_{self.kind}", lang, count=self.known)
