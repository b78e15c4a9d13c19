"""A model's ``config.json`` from the Hugging Face Hub, when the machine can reach it.

Only the configuration is read, and where the repo has safetensors weights, their headers (the
first bytes of each shard: tensor names, dtypes and shapes, never the weights), which give the
exact parameter count per dtype (:mod:`core.spec.hub_safetensors`). Requests send ``HF_TOKEN`` (or
the token ``huggingface-cli login`` stored) for gated and private repos and go to ``HF_ENDPOINT``
when set (a mirror, for example ``https://hf-mirror.com``); ``HF_HUB_OFFLINE=1`` stays offline. A
fetched config.json is kept in huggingface_hub's disk cache (``HF_HOME``,
:mod:`core.spec.hub_cache`), so a repo fetched once also resolves offline afterwards.

A fetch is bounded (:mod:`core.spec.hub_http`): one deadline, :data:`DEADLINE_S`, for the whole of
it (config.json, then the safetensors headers with what time is left); the config's size is asked
first and one over :data:`~core.spec.hf_config.MAX_CONFIG_BYTES` is refused before its body is
read; the body is read into memory within that cap whatever ``Content-Length`` says, and only a
file read whole and parsed is written to the cache, so a refused fetch leaves nothing on disk.
Every failure becomes a :class:`HubError` (or the config's :class:`ConfigError`) whose message says
what to do, the offline path included: paste or upload the repo's config.json, or pass its path.

Repo ids are judged from their text alone (:func:`looks_like_repo_id`), so nothing a dashboard
visitor types touches the server's files. The CLI, which runs on its operator's own machine, also
takes a path to a config.json; it looks for that file before it asks the Hub
(:func:`core.spec.catalog.resolve`), a separate step this module never takes.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any

import httpx

from core.spec.hf_config import MAX_CONFIG_BYTES, model_from_config, read_config
from core.spec.hub_cache import cached_file, store
from core.spec.hub_http import DeadlinePassed, Reply, TooLarge, Unasked, request, run, stated_size
from core.spec.hub_safetensors import parameter_counts
from core.spec.model import ModelSpec
from core.spec.names import REPO_ID

UNSAFE_ID = re.compile(r"[^a-z0-9._-]+")
DEADLINE_S = 15.0
"""The most a fetch may take [s], everything included: config.json from a nearby Hub takes under
a second, the headers of a 163-shard checkpoint a few seconds."""
OFFLINE_HINT = "paste or upload its config.json (or pass the file's path) to use it offline"
NETWORK_ERRORS = (httpx.HTTPError, httpx.InvalidURL, OSError, Unasked)
"""What a request can raise besides the deadline and the cap: the network's and the server's failures."""


class HubError(ValueError):
    """The Hub could not give this repo's config.json; the message says why and what to do."""


def looks_like_repo_id(ref: str) -> bool:
    """Whether ``ref`` has the shape of a Hub repo id (``owner/name``), judged from the text alone."""
    return bool(REPO_ID.match(ref.strip()))


def _endpoint(endpoint: str | None = None) -> str:
    from huggingface_hub import constants

    return (endpoint or os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")


def _headers(token: str | None) -> dict[str, str]:
    from huggingface_hub.utils import build_hf_headers

    return build_hf_headers(token=token or os.environ.get("HF_TOKEN") or None)


def _url(endpoint: str, repo_id: str, filename: str) -> str:
    from huggingface_hub import hf_hub_url

    return hf_hub_url(repo_id, filename, endpoint=endpoint)


def _offline() -> bool:
    from huggingface_hub import constants

    return constants.is_offline_mode()


def fetch_config(
    repo_id: str, *, endpoint: str | None = None, token: str | None = None, deadline_s: float | None = None
) -> dict[str, Any]:
    """The repo's config.json as a dict, from the Hub at ``endpoint`` (default ``HF_ENDPOINT`` or
    huggingface.co) with ``token`` (default ``HF_TOKEN``) within ``deadline_s`` seconds (default
    :data:`DEADLINE_S`), or from the cache in offline mode; raises HubError or ConfigError."""
    repo_id = repo_id.strip()
    if not REPO_ID.match(repo_id):
        raise HubError(f"{repo_id[:100]!r} is not a Hugging Face repo id (owner/name)")
    if _offline():
        path = cached_file(repo_id, "config.json")
        if path is None:
            raise HubError(
                f"{repo_id} is not in the local cache and the Hub is not reachable (offline mode or no network); "
                f"{OFFLINE_HINT}"
            )
        return read_config(path)
    where = _endpoint(endpoint)
    deadline_s = DEADLINE_S if deadline_s is None else deadline_s
    try:
        url = _url(where, repo_id, "config.json")
    except ValueError as err:  # huggingface_hub's own checks of the id, should they outgrow REPO_ID
        raise HubError(f"{repo_id!r} is not a Hugging Face repo id ({_reason(err)})") from None

    async def both(client: httpx.AsyncClient) -> tuple[Reply, Reply | None]:
        head = await request(client, "HEAD", url, cap=0)
        if not head.ok:
            return head, None
        size = stated_size(head.first.get("x-linked-size")) or stated_size(head.headers.get("content-length"))
        if size is not None and size > MAX_CONFIG_BYTES:
            raise TooLarge(size, MAX_CONFIG_BYTES)
        # the latest revision on purpose: only config.json is read, as size-capped JSON, never code
        # or pickled weights, so an unpinned revision cannot run anything here
        return head, await request(client, "GET", url, cap=MAX_CONFIG_BYTES)

    try:
        head, body = run(both, deadline=time.monotonic() + deadline_s, headers=_headers(token))
    except DeadlinePassed:
        raise HubError(
            f"could not fetch {repo_id} from {where} (no complete answer within {deadline_s:g} s); {OFFLINE_HINT}"
        ) from None
    except TooLarge as err:
        what = (
            f"is {err.size:,} bytes, over the {err.cap:,} a config.json may have: refused before downloading"
            if err.size is not None
            else f"ran past the {err.cap:,} bytes a config.json may have: refused"
        )
        raise HubError(f"{repo_id}'s config.json on {where} {what}, nothing kept") from None
    except NETWORK_ERRORS as err:
        if (path := cached_file(repo_id, "config.json")) is not None:  # no network: the copy fetched before
            return read_config(path)
        raise HubError(f"could not fetch {repo_id} from {where} ({_reason(err)}); {OFFLINE_HINT}") from None
    reply = body if body is not None else head
    if not reply.ok:
        raise HubError(_refusal(reply, repo_id, where))
    config = read_config(reply.body)
    commit = head.first.get("x-repo-commit") or reply.first.get("x-repo-commit") or ""
    etag = head.first.get("x-linked-etag") or head.first.get("etag") or ""
    store(repo_id, "config.json", reply.body, commit=commit, etag=etag)
    return config


def _reason(err: BaseException) -> str:
    """A failure in a few words: its message's first line, else its type."""
    text = str(err).strip()
    return text.splitlines()[0][:200] if text else type(err).__name__


def _refusal(reply: Reply, repo_id: str, where: str) -> str:
    """What an error status means, as the Hub marks it (``X-Error-Code``), and what to do."""
    code = reply.headers.get("x-error-code", "")
    if code == "GatedRepo":
        return f"{repo_id} is gated on {where}: accept its licence there and set HF_TOKEN, or {OFFLINE_HINT}"
    if code == "RepoNotFound" or reply.status == 401:
        return f"{where} has no repo {repo_id} (or it is private: set HF_TOKEN); check the name, or {OFFLINE_HINT}"
    if code == "EntryNotFound" or reply.status == 404:
        return f"{repo_id} on {where} has no config.json; {OFFLINE_HINT}"
    return f"could not fetch {repo_id} from {where} (HTTP {reply.status}); {OFFLINE_HINT}"


UNPACKED_DTYPES = frozenset({"F64", "F32", "F16", "BF16", "F8_E4M3", "F8_E5M2"})
"""safetensors dtypes that hold one parameter per element; integer tensors may pack several
(AWQ and GPTQ store eight 4-bit weights in one I32), so their counts are not parameters."""


def fetch_parameter_counts(repo_id: str, *, deadline_s: float | None = None) -> dict[str, int] | None:
    """Elements per safetensors dtype over all of the repo's shards, read from their headers within
    ``deadline_s`` seconds (:mod:`core.spec.hub_safetensors`); None when the repo has none, the
    machine is offline or the Hub cannot say in time."""
    if _offline():
        return None
    where = _endpoint()
    try:
        return run(
            lambda client: parameter_counts(client, lambda name: _url(where, repo_id, name)),
            deadline=time.monotonic() + (DEADLINE_S if deadline_s is None else deadline_s),
            headers=_headers(None),
        )
    except (DeadlinePassed, TooLarge, *NETWORK_ERRORS):  # the config alone still answers
        return None


def published_total(counts: dict[str, int] | None) -> float | None:
    """The exact parameter count the headers give, or None when a dtype may pack several."""
    if not counts or set(counts) - UNPACKED_DTYPES:
        return None
    return float(sum(counts.values()))


def fetch_model(repo_id: str, *, deadline_s: float | None = None) -> ModelSpec:
    """The repo's architecture from its config.json on the Hub (:func:`fetch_with_config`)."""
    return fetch_with_config(repo_id, deadline_s=deadline_s)[0]


def fetch_with_config(repo_id: str, *, deadline_s: float | None = None) -> tuple[ModelSpec, dict[str, Any]]:
    """The repo's architecture from its config.json on the Hub (:func:`fetch_config`), with id
    ``hub-<owner>-<name>``, the repo as its Hugging Face id and, where its safetensors headers say
    so within the same deadline, the exact parameter count; and the config it was read from (for
    what it holds that was not understood). Raises HubError or ConfigError."""
    repo_id = repo_id.strip()
    deadline_s = DEADLINE_S if deadline_s is None else deadline_s
    deadline = time.monotonic() + deadline_s
    config = fetch_config(repo_id, deadline_s=deadline_s)
    counts = fetch_parameter_counts(repo_id, deadline_s=deadline - time.monotonic())
    model_id = "hub-" + UNSAFE_ID.sub("-", repo_id.lower().replace("/", "-"))
    where = _endpoint()
    notes = ""
    if counts:
        dtypes = ", ".join(f"{dtype} {count:,}" for dtype, count in counts.items())
        notes = f"safetensors headers of {repo_id}: {dtypes} elements"
    model = model_from_config(
        config,
        id=model_id,
        name=repo_id.split("/")[-1],
        hf_id=repo_id,
        source_url=f"{where}/{repo_id}/blob/main/config.json",
        params_total_published=published_total(counts),
        notes=notes,
    )
    return model, config
