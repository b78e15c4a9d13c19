"""A fetched config.json kept in huggingface_hub's disk cache, so the repo resolves offline later.

The layout is huggingface_hub's (``HF_HUB_CACHE``, under ``HF_HOME``): ``models--owner--name/``
with the file's bytes in ``blobs/<etag>``, ``snapshots/<commit>/config.json`` pointing at the blob
and ``refs/main`` holding the commit, which ``huggingface_hub.try_to_load_from_cache`` and
``hf_hub_download(..., local_files_only=True)`` read. Only a file already read whole, within its
size cap and parsed, is written (:mod:`core.spec.hub`), each part written to a temporary name and
renamed into place, so a refused or interrupted fetch leaves nothing behind. The commit and the
ETag come from the server and become file names: anything but hexadecimal is not used (a commit
that is not 40 hex digits: nothing is cached; an ETag that is not: the blob is named by the
SHA-256 of its bytes).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
from pathlib import Path

COMMIT = re.compile(r"^[0-9a-f]{40}$")
ETAG = re.compile(r"^[0-9a-f]{40,64}$")


def cached_file(repo_id: str, filename: str) -> Path | None:
    """The cached copy of ``filename`` at the repo's ``main``, or None (nothing is fetched)."""
    from huggingface_hub import constants, try_to_load_from_cache

    try:
        found = try_to_load_from_cache(repo_id, filename, cache_dir=constants.HF_HUB_CACHE)
    except OSError:  # a cache folder this process may not read: as if nothing were cached
        return None
    return Path(found) if isinstance(found, str) else None


def store(repo_id: str, filename: str, body: bytes, *, commit: str, etag: str) -> bool:
    """Keep ``body`` as the repo's ``filename`` at ``commit`` (the state of ``main``); False when the
    commit is not a commit hash or the cache cannot be written (the fetch still answered)."""
    from huggingface_hub import constants
    from huggingface_hub.file_download import repo_folder_name

    if not COMMIT.match(commit):
        return False
    tag = etag.removeprefix("W/").strip('"')
    blob_name = tag if ETAG.match(tag) else hashlib.sha256(body).hexdigest()
    repo = Path(constants.HF_HUB_CACHE) / repo_folder_name(repo_id=repo_id, repo_type="model")
    blob = repo / "blobs" / blob_name
    pointer = repo / "snapshots" / commit / filename
    try:
        for folder in (blob.parent, pointer.parent, repo / "refs"):
            folder.mkdir(parents=True, exist_ok=True)
        _replace(blob, body)
        _link(pointer, blob)
        _replace(repo / "refs" / "main", commit.encode())
    except OSError:
        return False
    return True


def _replace(path: Path, data: bytes) -> None:
    """``path`` holding ``data``, written to a temporary name in its folder and renamed over it."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".incoming-")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _link(pointer: Path, blob: Path) -> None:
    """``pointer`` a relative symbolic link to ``blob`` (as huggingface_hub makes them), or a copy
    where links cannot be made."""
    temporary = pointer.with_name(f".incoming-{pointer.name}")
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()
    try:
        temporary.symlink_to(os.path.relpath(blob, pointer.parent))
        os.replace(temporary, pointer)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink()
        _replace(pointer, blob.read_bytes())
