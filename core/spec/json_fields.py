"""Reading untrusted JSON (a hand-edited link, a pasted file) into typed fields: every refusal is
a ValueError whose message starts with the path of the field at fault ("engine.max_num_seqs: must
be an integer, got 'x'"), never another exception type.

A schema maps each key an object may hold to its kind: "int" (up to :data:`MAX_INT`), "float"
(finite; an integer is taken as a float), "str" (1 to :data:`MAX_TEXT` characters) or "object"; a
trailing "?" also allows null. Keys a schema does not list are refused, so a typo is not silently ignored.

:func:`pack` and :func:`unpack` carry JSON in a URL: compact JSON, zlib, base64url without padding.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import math
import re
import zlib
from collections.abc import Callable, Iterator
from typing import Any

MAX_TEXT = 200
MAX_INT = 10**18  # larger than any count a spec takes; bounds what a message quotes
QUOTED = 40  # characters of a refused value a message quotes
TOKEN_ALPHABET = re.compile(r"[A-Za-z0-9_-]+")


def show(value: Any) -> str:
    """A refused value as messages quote it: its repr, cut short, or its JSON type."""
    if isinstance(value, (dict, list)):
        return "an object" if isinstance(value, dict) else "a list"
    text = repr(value)
    return text if len(text) <= QUOTED else f"{text[: QUOTED - 3]}..."


def typed(raw: Any, kind: str, path: str) -> Any:
    """``raw`` checked to be of ``kind``; ValueError naming ``path`` otherwise."""
    base = kind.rstrip("?")
    if raw is None and kind.endswith("?"):
        return None
    if base == "object":
        if not isinstance(raw, dict):
            raise ValueError(f"{path}: must be an object, got {show(raw)}")
        return raw
    if base == "str":
        if not isinstance(raw, str) or not 0 < len(raw) <= MAX_TEXT:
            raise ValueError(f"{path}: must be text of 1 to {MAX_TEXT} characters, got {show(raw)}")
        return raw
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or (base == "int" and isinstance(raw, float)):
        raise ValueError(f"{path}: must be {'an integer' if base == 'int' else 'a number'}, got {show(raw)}")
    if base == "int":
        if abs(raw) > MAX_INT:
            raise ValueError(f"{path}: must be an integer of at most {len(str(MAX_INT)) - 1} digits, got {show(raw)}")
        return raw
    try:
        number = float(raw)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise ValueError(f"{path}: must be a finite number, got {show(raw)}")
    return number


def join(path: str, key: str) -> str:
    """``key`` under ``path`` ("" is the top)."""
    return f"{path}.{key}" if path else key


def fields(raw: Any, schema: dict[str, str], path: str, top: str = "top") -> dict[str, Any]:
    """The entries of the JSON object ``raw`` at ``path`` ("" for the top, named ``top`` in a
    message), each checked to be of its kind in ``schema``; a key the schema does not list is refused."""
    if not isinstance(raw, dict):
        raise ValueError(f"{path or top}: must be an object, got {show(raw)}")
    for key in raw:
        if key not in schema:
            raise ValueError(f"{join(path, str(key)[:QUOTED])}: unknown field")
    return {key: typed(item, schema[key], join(path, key)) for key, item in raw.items()}


@contextlib.contextmanager
def field(path: str) -> Iterator[None]:
    """Name ``path`` in the ValueError (or TypeError) a spec's own check raises inside: a ValueError."""
    try:
        yield
    except (TypeError, ValueError) as err:
        raise ValueError(f"{path}: {err}") from None


def depth(value: Any) -> int:
    """How deeply ``value``'s lists and objects nest (a scalar: 0)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def built(factory: Callable[..., Any], values: dict[str, Any], path: str = "", top: str = "top") -> Any:
    """``factory(**values)`` for a spec that checks its own fields: each value is first tried alone
    (the others at their defaults), so a range error names its own field's path."""
    for key, item in values.items():
        with field(join(path, key)):
            factory(**{key: item})
    with field(path or top):
        return factory(**values)


def pack(data: Any, max_chars: int, path: str = "token") -> str:
    """``data`` as compact JSON, zlib-compressed (level 9), in base64url without padding;
    ValueError when that is longer than ``max_chars``."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    token = base64.urlsafe_b64encode(zlib.compress(text.encode(), 9)).rstrip(b"=").decode("ascii")
    if len(token) > max_chars:
        raise ValueError(f"{path}: {len(token)} characters, more than the {max_chars} a link may carry")
    return token


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number JSON allows")


def unpack(token: Any, max_chars: int, max_bytes: int, max_depth: int, path: str = "token") -> Any:
    """What :func:`pack` packed; ValueError naming ``path`` for text longer than ``max_chars``, not
    base64url, zlib (or inflating past ``max_bytes``) or JSON (NaN and Infinity refused), or nested
    deeper than ``max_depth``."""
    if not isinstance(token, str):
        raise ValueError(f"{path}: must be text, got {show(token)}")
    if len(token) > max_chars:
        raise ValueError(f"{path}: {len(token)} characters, more than the {max_chars} a link may carry")
    if not TOKEN_ALPHABET.fullmatch(token) or len(token) % 4 == 1:
        raise ValueError(f"{path}: not base64url text (A-Z, a-z, 0-9, - and _)")
    try:
        inflater = zlib.decompressobj()
        text = inflater.decompress(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)), max_bytes)
    except (binascii.Error, zlib.error):
        raise ValueError(f"{path}: not zlib-compressed data") from None
    if inflater.unconsumed_tail:
        raise ValueError(f"{path}: inflates to more than {max_bytes} bytes")
    if not inflater.eof or inflater.unused_data:
        raise ValueError(f"{path}: the compressed data is cut short or followed by other bytes")
    try:
        data = json.loads(text.decode("utf-8"), parse_constant=_refuse_constant)
    except (UnicodeDecodeError, RecursionError, ValueError):  # JSONDecodeError is a ValueError
        raise ValueError(f"{path}: not JSON text") from None
    if depth(data) > max_depth:
        raise ValueError(f"{path}: nested deeper than {max_depth} levels")
    return data
