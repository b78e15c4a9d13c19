"""Bounded HTTP for the Hub fetch: one deadline for every request of a fetch, a byte cap on every
body, nothing written to disk.

``huggingface_hub.hf_hub_download`` writes a file into its cache while it reads it and applies its
timeout to each read, so a hostile or broken server could fill the disk before a size check (61 MB
of a 60 MB config.json were kept) or hold a visitor's session for minutes by trickling a byte every
two seconds. Here a fetch's requests all run in one event loop under one deadline
(``asyncio.wait_for``: connecting, DNS, headers and bodies alike), each body is read into memory
only up to its cap (a ``Content-Length`` over the cap is refused before the body is read, and a
missing or lying one cannot lift the cap), and compressed bodies are neither asked for nor decoded.
``httpx`` is what ``huggingface_hub`` itself uses; like it, this honours the proxy variables
(``HTTPS_PROXY``) and drops the ``Authorization`` header on a redirect to another host.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

import httpx

T = TypeVar("T")
MAX_REDIRECTS = 5


class TooLarge(Exception):
    """A body longer than its cap: ``size`` as the server stated it (None when it did not)."""

    def __init__(self, size: int | None, cap: int) -> None:
        super().__init__(f"larger than {cap} bytes")
        self.size, self.cap = size, cap


class DeadlinePassed(Exception):
    """The fetch's deadline passed before its requests finished."""


class Unasked(Exception):
    """The server sent what was not asked for (a compressed body)."""


@dataclass(frozen=True)
class Reply:
    """An answer: the final status and headers, the first response's headers (before redirects:
    the Hub's own ``X-Repo-Commit``, ``X-Linked-Etag``, ``X-Linked-Size``), and the body read."""

    status: int
    headers: Mapping[str, str]
    first: Mapping[str, str]
    body: bytes

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


def run(work: Callable[[httpx.AsyncClient], Awaitable[T]], *, deadline: float, headers: Mapping[str, str]) -> T:
    """``work(client)`` run to completion before ``deadline`` (``time.monotonic()``), with a client
    sending ``headers``; DeadlinePassed when it does not finish in time. Its own event loop, so it
    can be called from any thread without one (a Streamlit callback, the CLI)."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise DeadlinePassed

    async def main() -> T:
        async with httpx.AsyncClient(
            headers={**headers, "Accept-Encoding": "identity"},
            follow_redirects=True,
            max_redirects=MAX_REDIRECTS,
            timeout=remaining,  # per operation; the deadline below bounds them all together
            trust_env=True,
        ) as client:
            return await work(client)

    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(asyncio.wait_for(main(), remaining))
    except TimeoutError:
        raise DeadlinePassed from None
    finally:
        # close() does not wait for a DNS lookup still running in the loop's thread pool
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


async def request(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    cap: int,
    prefix: bool = False,
    headers: Mapping[str, str] | None = None,
) -> Reply:
    """``method`` ``url``, its body read up to ``cap`` bytes. Over the cap: TooLarge, or with
    ``prefix`` the first ``cap`` bytes (a Range read from a server that may ignore the range). An
    error status comes back with an empty body, unread."""
    async with client.stream(method, url, headers=headers) as response:
        first = response.history[0].headers if response.history else response.headers
        if not 200 <= response.status_code < 300 or method == "HEAD":
            return Reply(response.status_code, response.headers, first, b"")
        if response.headers.get("content-encoding", "identity").lower() not in ("identity", ""):
            raise Unasked(
                f"a body compressed as {response.headers['content-encoding'][:20]!r}, which was not asked for"
            )
        stated = stated_size(response.headers.get("content-length"))
        if stated is not None and stated > cap and not prefix:
            raise TooLarge(stated, cap)
        body = bytearray()
        async for chunk in response.aiter_raw():
            body += chunk
            if len(body) > cap:
                if prefix:
                    return Reply(response.status_code, response.headers, first, bytes(body[:cap]))
                raise TooLarge(stated, cap)
        return Reply(response.status_code, response.headers, first, bytes(body))


def stated_size(value: str | None) -> int | None:
    """A size header's value as a number of bytes, None when absent or not a plain number."""
    if value is None or not (value.strip().isascii() and value.strip().isdigit()) or len(value.strip()) > 18:
        return None
    return int(value.strip())
