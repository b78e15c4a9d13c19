"""A model's ``config.json`` from the Hugging Face Hub, when the machine can reach it.

Only the configuration is read, and where the repo has safetensors weights, their headers (the
first bytes of each shard: tensor names, dtypes and shapes, never the weights), which give the
exact parameter count per dtype. Both go through ``huggingface_hub``: it honours
``HF_TOKEN`` for gated and private repos, ``HF_ENDPOINT`` for a mirror (for example
``https://hf-mirror.com``), ``HF_HUB_OFFLINE=1`` to stay offline, and keeps what it fetched in its
disk cache (``HF_HOME``), so a repo fetched once also resolves offline afterwards. Every failure
becomes a :class:`HubError` whose message says what to do, the offline path included: paste or
upload the repo's config.json, or pass its path.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from core.spec.hf_config import model_from_config, read_config
from core.spec.model import ModelSpec

UNSAFE_ID = re.compile(r"[^a-z0-9._-]+")
REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
TIMEOUT_S = 10.0
OFFLINE_HINT = "paste or upload its config.json (or pass the file's path) to use it offline"


class HubError(ValueError):
    """The Hub could not give this repo's config.json; the message says why and what to do."""


def looks_like_repo_id(ref: str) -> bool:
    """Whether ``ref`` has the shape of a Hub repo id (``owner/name``), not a file path."""
    return bool(REPO_ID.match(ref.strip())) and not Path(ref.strip()).exists()


def fetch_config(repo_id: str, *, endpoint: str | None = None, token: str | None = None) -> dict[str, Any]:
    """The repo's config.json as a dict, from the Hub at ``endpoint`` (default ``HF_ENDPOINT`` or
    huggingface.co) with ``token`` (default ``HF_TOKEN``); raises HubError."""
    repo_id = repo_id.strip()
    if not REPO_ID.match(repo_id):
        raise HubError(f"{repo_id!r} is not a Hugging Face repo id (owner/name)")
    # imported here, not at the top: only a fetch pays for loading it (every CLI run imports this module)
    import huggingface_hub
    from huggingface_hub import constants, errors

    endpoint = endpoint or os.environ.get("HF_ENDPOINT") or constants.ENDPOINT
    where = endpoint.rstrip("/")
    token = token or os.environ.get("HF_TOKEN") or None
    try:
        if not constants.is_offline_mode():  # one request without retries first, so no network fails fast
            url = huggingface_hub.hf_hub_url(repo_id, "config.json", endpoint=endpoint)
            huggingface_hub.get_hf_file_metadata(url, token=token, timeout=TIMEOUT_S, endpoint=endpoint)
        # the latest revision on purpose: only config.json is read, as size-capped JSON (read_config),
        # never code or pickled weights, so an unpinned revision cannot run anything here
        path = huggingface_hub.hf_hub_download(  # nosec B615
            repo_id, "config.json", endpoint=endpoint, token=token, etag_timeout=TIMEOUT_S
        )
    except (errors.OfflineModeIsEnabled, errors.LocalEntryNotFoundError):
        raise HubError(
            f"{repo_id} is not in the local cache and the Hub is not reachable (offline mode or no network); "
            f"{OFFLINE_HINT}"
        ) from None
    except errors.GatedRepoError:
        raise HubError(
            f"{repo_id} is gated on {where}: accept its licence there and set HF_TOKEN, or {OFFLINE_HINT}"
        ) from None
    except errors.RepositoryNotFoundError:
        raise HubError(
            f"{where} has no repo {repo_id} (or it is private: set HF_TOKEN); check the name, or {OFFLINE_HINT}"
        ) from None
    except errors.EntryNotFoundError:
        raise HubError(f"{repo_id} on {where} has no config.json; {OFFLINE_HINT}") from None
    except Exception as err:  # network and HTTP failures of any library version: said, never a traceback
        reason = str(err).splitlines()[0][:200] if str(err) else type(err).__name__
        raise HubError(f"could not fetch {repo_id} from {where} ({reason}); {OFFLINE_HINT}") from None
    return read_config(Path(path))


UNPACKED_DTYPES = frozenset({"F64", "F32", "F16", "BF16", "F8_E4M3", "F8_E5M2"})
"""safetensors dtypes that hold one parameter per element; integer tensors may pack several
(AWQ and GPTQ store eight 4-bit weights in one I32), so their counts are not parameters."""


def fetch_parameter_counts(repo_id: str) -> dict[str, int] | None:
    """Elements per safetensors dtype over all of the repo's shards, read from their headers
    (``HfApi.get_safetensors_metadata``); None when the repo has none or the Hub cannot say."""
    import huggingface_hub

    endpoint = os.environ.get("HF_ENDPOINT") or None
    token = os.environ.get("HF_TOKEN") or None
    try:
        api = huggingface_hub.HfApi(endpoint=endpoint, token=token)
        metadata = api.get_safetensors_metadata(repo_id, timeout=TIMEOUT_S)
    except Exception:  # no safetensors, offline, any HTTP failure: the config alone still answers
        return None
    return {str(dtype): int(count) for dtype, count in sorted(metadata.parameter_count.items())}


def published_total(counts: dict[str, int] | None) -> float | None:
    """The exact parameter count the headers give, or None when a dtype may pack several."""
    if not counts or set(counts) - UNPACKED_DTYPES:
        return None
    return float(sum(counts.values()))


def fetch_model(repo_id: str) -> ModelSpec:
    """The repo's architecture from its config.json on the Hub (:func:`fetch_config`), with id
    ``hub-<owner>-<name>``, the repo as its Hugging Face id and, where its safetensors headers say
    so, the exact parameter count; raises HubError or ConfigError."""
    repo_id = repo_id.strip()
    config = fetch_config(repo_id)
    counts = fetch_parameter_counts(repo_id)
    model_id = "hub-" + UNSAFE_ID.sub("-", repo_id.lower().replace("/", "-"))
    where = (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")
    notes = ""
    if counts:
        dtypes = ", ".join(f"{dtype} {count:,}" for dtype, count in counts.items())
        notes = f"safetensors headers of {repo_id}: {dtypes} elements"
    return model_from_config(
        config,
        id=model_id,
        name=repo_id.split("/")[-1],
        hf_id=repo_id,
        source_url=f"{where}/{repo_id}/blob/main/config.json",
        params_total_published=published_total(counts),
        notes=notes,
    )
