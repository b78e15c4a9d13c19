"""A file the operator names on the command line (``--model config.json``, ``--lengths-csv``), read
with a one-line ValueError for each way a path can fail.

``Path.is_file()`` raises on a name of 256 characters (``OSError: [Errno 36] File name too long``)
and on a directory it cannot search (permission denied); ``open()`` on a FIFO waits for a writer
forever, and ``/dev/zero`` never ends. Here the path is looked at (``stat``) before it is opened:
only a regular file is read, and never more than ``max_bytes`` + 1 bytes of it, so a file that grows
while it is read is refused too. Only the command line reads files by name; nothing a dashboard
visitor types reaches this module (:mod:`core.spec.hub` decides repo ids from the text alone).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

SHOWN = 80  # characters of a path a message quotes


def shown_path(text: str | os.PathLike[str]) -> str:
    """A path as a message quotes it: cut to :data:`SHOWN` characters, control characters escaped."""
    raw = str(text)
    cut = raw if len(raw) <= SHOWN else f"{raw[: SHOWN - 3]}..."
    return cut.encode("unicode_escape").decode("ascii") if not cut.isprintable() else cut


def read_local_file(path: str | os.PathLike[str], what: str, max_bytes: int) -> bytes:
    """The bytes of the regular file at ``path``; ValueError ``"{what}: ..."`` naming what is wrong
    (no such file, a directory, not a regular file, permission denied, too long a name, larger
    than ``max_bytes``)."""
    name = shown_path(path)
    if "\x00" in str(path):  # os.stat would raise "embedded null byte"
        raise ValueError(f"{what}: the path {name} holds a NUL character")
    try:
        info = os.stat(path)
        if stat.S_ISREG(info.st_mode) and info.st_size <= max_bytes:
            with open(path, "rb") as handle:
                data = handle.read(max_bytes + 1)
    except OSError as err:
        raise ValueError(f"{what}: {_reason(err)}: {name}") from None
    if stat.S_ISDIR(info.st_mode):
        raise ValueError(f"{what}: {name} is a directory, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{what}: {name} is not a regular file (a device, pipe or socket)")
    if info.st_size > max_bytes or len(data) > max_bytes:
        raise ValueError(f"{what}: file is larger than {max_bytes} bytes")
    return data


def _reason(err: OSError) -> str:
    """Why the path could not be read, in the words the CLI's messages use."""
    if err.errno in (errno.ENOENT, errno.ENOTDIR):
        return "no such file"
    if err.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if err.errno == errno.ENAMETOOLONG:
        return "file name too long"
    return f"cannot read the file ({err.strerror or type(err).__name__})"


def is_local_file(text: str) -> bool:
    """Whether ``text`` names an existing regular file (False for any path that cannot be looked at)."""
    try:
        return Path(text).is_file()
    except (OSError, ValueError):
        return False
