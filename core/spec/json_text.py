"""JSON text from outside (a pasted, uploaded or named config.json, the Hub's files) parsed so that
every way it can fail is a ValueError of one line naming the field at fault.

``json.loads`` alone lets through what the rest of the program cannot use: an integer of thousands
of digits raises a ValueError of Python's own ("Exceeds the limit (4300 digits) for integer string
conversion") that names no field, and a lone UTF-16 surrogate (``"\\ud800"``) is read as a string
that cannot be encoded again, so showing or saving it fails later. Here integers longer than
:data:`MAX_INT_DIGITS` digits and lone surrogates are refused with the field's path
(``text_config.hidden_size``, ``layer_types[3]``), and nesting deeper than the caller allows is
refused before anything walks it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from core.spec.json_fields import depth

MAX_INT_DIGITS = 100
"""Longest integer read [digits]: a real config's largest (rope_theta, vocab sizes) have about 10."""
QUOTED = 40  # characters of a key a message quotes


class _LongInteger:
    """An integer literal too long to read: kept only to name where it was."""

    def __init__(self, digits: int) -> None:
        self.digits = digits


def _integer(literal: str) -> int | _LongInteger:
    digits = len(literal.lstrip("-"))
    return _LongInteger(digits) if digits > MAX_INT_DIGITS else int(literal)


def parse_json(text: str, *, what: str, max_depth: int) -> Any:
    """``text`` parsed as JSON; ValueError ``"{what}: ..."`` naming the line, the field or the depth."""
    try:
        data = json.loads(text, parse_int=_integer)
    except json.JSONDecodeError as err:
        raise ValueError(f"{what}: invalid JSON at line {err.lineno} column {err.colno}: {err.msg}") from None
    except RecursionError:
        raise ValueError(f"{what}: nested deeper than {max_depth} levels") from None
    if depth(data) > max_depth:
        raise ValueError(f"{what}: nested deeper than {max_depth} levels")
    for path, value in _leaves(data, ""):
        where = f"invalid field {path!r}" if path else "invalid value"
        if isinstance(value, _LongInteger):
            raise ValueError(f"{what}: {where}: an integer of {value.digits:,} digits (at most {MAX_INT_DIGITS})")
        if isinstance(value, str) and not _encodable(value):
            raise ValueError(f"{what}: {where}: text with a lone UTF-16 surrogate, which is not Unicode")
    return data


def _leaves(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    """(path, value) of every key and scalar in document order; keys are checked as text too."""
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{_key(key)}" if path else _key(key)
            yield where, key
            yield from _leaves(item, where)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, f"{path}[{index}]")
    else:
        yield path, value


def _key(key: str) -> str:
    shown = key if _encodable(key) else key.encode("utf-8", "backslashreplace").decode("ascii", "replace")
    return shown if len(shown) <= QUOTED else f"{shown[: QUOTED - 3]}..."


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
