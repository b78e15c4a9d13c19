"""Exact parameter counts from a repo's safetensors headers, read under the Hub fetch's deadline.

A safetensors file starts with 8 bytes (little-endian length n) and n bytes of JSON: each tensor's
dtype and shape. The counts come from those headers alone, never the weights: ``model.safetensors``
when the repo has one (asked with a HEAD request), else every shard
``model.safetensors.index.json`` names. Each header is read with a Range request for its first
100 kB (a second one when the header is longer), and at most that much of the answer is read even
where a server ignores the range (:mod:`core.spec.hub_http`). Everything stays in memory within
caps (:data:`MAX_INDEX_BYTES`, :data:`MAX_HEADER_BYTES` each and :data:`MAX_HEADERS_BYTES`
together, :data:`MAX_SHARDS`); whatever is missing, refused or malformed makes the count unknown
(None), never an error: the config alone still answers.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

import httpx

from core.spec.hub_http import request
from core.spec.json_text import parse_json

SINGLE = "model.safetensors"
INDEX = "model.safetensors.index.json"
FIRST_READ = 100_000  # bytes of a shard read first: huggingface_hub's choice, most headers fit
MAX_HEADER_BYTES = 25_000_000  # huggingface_hub's SAFETENSORS_MAX_HEADER_LENGTH
MAX_HEADERS_BYTES = 64_000_000  # all shards' headers together
MAX_INDEX_BYTES = 32_000_000  # DeepSeek-V3's index is about 9 MB
MAX_SHARDS = 512
PARALLEL = 8  # shard headers read at once
MAX_DIM = 2**40
MAX_TOTAL = 10**15  # parameters: far above any model
DTYPE = re.compile(r"^[A-Z][A-Z0-9_]{0,15}$")
SHARD = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}\.safetensors$")


class NoCount(Exception):
    """The headers cannot give a count (missing, refused, malformed or over a cap)."""


async def parameter_counts(client: httpx.AsyncClient, url_of: Callable[[str], str]) -> dict[str, int] | None:
    """Elements per safetensors dtype over the repo's shards (``url_of(filename)`` is a file's
    address); None when the repo has no safetensors files or a header cannot be read."""
    budget = [MAX_HEADERS_BYTES]
    try:
        single = await request(client, "HEAD", url_of(SINGLE), cap=0)  # as huggingface_hub asks: is there one file
        if single.ok:
            header = await _header(client, url_of(SINGLE), budget)
            return _sorted(_count(header)) if header is not None else None
        index = await request(client, "GET", url_of(INDEX), cap=MAX_INDEX_BYTES)
        if not index.ok:
            return None
        shards = _shards(parse_json(_text(index.body), what=INDEX, max_depth=4))
        limit = asyncio.Semaphore(PARALLEL)

        async def one(name: str) -> dict[str, int]:
            async with limit:
                header = await _header(client, url_of(name), budget)
            if header is None:
                raise NoCount(f"{name}: missing")
            return _count(header)

        totals: dict[str, int] = {}
        for counts in await asyncio.gather(*(one(name) for name in shards)):
            for dtype, count in counts.items():
                totals[dtype] = totals.get(dtype, 0) + count
        return _sorted(totals)
    except (NoCount, ValueError):
        return None


async def _header(client: httpx.AsyncClient, url: str, budget: list[int]) -> dict[str, Any] | None:
    """The JSON header of the safetensors file at ``url``, None when there is no such file."""
    head = await request(
        client, "GET", url, cap=FIRST_READ + 1, prefix=True, headers={"Range": f"bytes=0-{FIRST_READ}"}
    )
    if not head.ok:
        if head.status == 404:
            return None
        raise NoCount(f"HTTP {head.status}")
    if len(head.body) < 8:
        raise NoCount("shorter than 8 bytes")
    size = int.from_bytes(head.body[:8], "little")
    if size > MAX_HEADER_BYTES or size > budget[0]:
        raise NoCount("header over its cap")
    budget[0] -= size
    raw = head.body[8 : 8 + size]
    if len(raw) < size:
        rest = await request(client, "GET", url, cap=size, prefix=True, headers={"Range": f"bytes=8-{size + 7}"})
        if not rest.ok or len(rest.body) < size:
            raise NoCount("header cut short")
        raw = rest.body[:size]
    header = parse_json(_text(raw), what="safetensors header", max_depth=4)
    if not isinstance(header, dict):
        raise NoCount("header is not an object")
    return header


def _text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise NoCount("not UTF-8") from None


def _shards(index: Any) -> list[str]:
    """The shard files an index's ``weight_map`` names, each once, in order."""
    weight_map = index.get("weight_map") if isinstance(index, dict) else None
    if not isinstance(weight_map, dict) or not weight_map:
        raise NoCount("no weight_map")
    names = list(dict.fromkeys(weight_map.values()))
    if len(names) > MAX_SHARDS or not all(isinstance(n, str) and SHARD.match(n) for n in names):
        raise NoCount("shard names")
    return names


def _count(header: dict[str, Any]) -> dict[str, int]:
    """Elements per dtype in one header (its ``__metadata__`` entry skipped)."""
    counts: dict[str, int] = {}
    for name, tensor in header.items():
        if name == "__metadata__":
            continue
        dtype = tensor.get("dtype") if isinstance(tensor, dict) else None
        shape = tensor.get("shape") if isinstance(tensor, dict) else None
        if not isinstance(dtype, str) or not DTYPE.match(dtype) or not isinstance(shape, list):
            raise NoCount(f"tensor {name[:40]!r}")
        elements = 1
        for dim in shape:
            if type(dim) is not int or not 0 <= dim <= MAX_DIM:
                raise NoCount(f"tensor {name[:40]!r}")
            elements *= dim
            if elements > MAX_TOTAL:
                raise NoCount("implausibly many parameters")
        counts[dtype] = counts.get(dtype, 0) + elements
        if counts[dtype] > MAX_TOTAL:
            raise NoCount("implausibly many parameters")
    return counts


def _sorted(counts: dict[str, int]) -> dict[str, int] | None:
    if not counts or sum(counts.values()) > MAX_TOTAL:
        return None
    return dict(sorted(counts.items()))
