"""A local stand-in for the Hugging Face Hub: serves config.json files over HTTP the way the Hub's
``/{repo}/resolve/{revision}/{file}`` endpoint does, so tests reach "the Hub" through HF_ENDPOINT
without the network. Gated repos answer 401 with the Hub's error code unless the token is right.

Hostile modes (``hostile``: ``"owner/name/file"`` -> mode) answer one file as a broken or hostile
server would: ``huge`` states and sends :attr:`HubStandIn.big` bytes; ``unsized`` states a small
size in its HEAD answer, then sends the big body with no Content-Length (ended by closing);
``trickle`` sends its headers, then one byte every :attr:`HubStandIn.interval` seconds; ``silent``
reads the request and never answers. :attr:`HubStandIn.sent` counts each path's body bytes written."""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COMMIT = "0" * 40


class HubStandIn:
    def __init__(
        self,
        repos: dict[str, dict | bytes],
        gated: dict[str, str] | None = None,
        files: dict[str, dict[str, bytes]] | None = None,
        hostile: dict[str, str] | None = None,
        big: int = 50_000_000,
        interval: float = 0.2,
    ) -> None:
        self.repos, self.gated, self.files, self.hostile = repos, gated or {}, files or {}, hostile or {}
        self.big, self.interval = big, interval
        self.seen: list[tuple[str, str, str]] = []  # (method, path, authorization)
        self.sent: Counter[str] = Counter()
        self.stop = threading.Event()
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def _answer(self, body: bool) -> None:
                hub.seen.append((self.command, self.path, self.headers.get("authorization", "")))
                parts = self.path.split("?")[0].strip("/").split("/")
                repo = "/".join(parts[:2])
                filename = "/".join(parts[4:]) if len(parts) > 4 and parts[2] == "resolve" else ""
                if repo not in hub.repos:
                    return self._error(404, "RepoNotFound")
                if repo in hub.gated and self.headers.get("authorization") != f"Bearer {hub.gated[repo]}":
                    return self._error(401, "GatedRepo")
                if mode := hub.hostile.get(f"{repo}/{filename}"):
                    return self._hostile(mode, body)
                if filename == "config.json":
                    config = hub.repos[repo]  # a dict, or raw bytes (text json.dumps cannot write)
                    data = config if isinstance(config, bytes) else json.dumps(config).encode()
                elif filename in hub.files.get(repo, {}):
                    data = hub.files[repo][filename]  # served whole; a Range request reads its head
                else:
                    return self._error(404, "EntryNotFound")
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
                self.send_header("X-Repo-Commit", COMMIT)
                self.end_headers()
                if body:
                    self.wfile.write(data)

            def _hostile(self, mode: str, body: bool) -> None:
                if mode == "silent":
                    hub.stop.wait()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("X-Repo-Commit", COMMIT)
                if mode == "huge":
                    self.send_header("Content-Length", str(hub.big))
                elif mode in ("unsized", "trickle") and not body:
                    self.send_header("Content-Length", "1000")  # a small size: the body then says otherwise
                self.end_headers()
                if not body:
                    return
                start = b'{"model_type": "llama", "pad": "'
                chunk, step = (b" " * 65536, 0.0) if mode != "trickle" else (b" ", hub.interval)
                try:
                    self.wfile.write(start)
                    while hub.sent[self.path] < hub.big and not hub.stop.is_set():
                        self.wfile.write(chunk)
                        hub.sent[self.path] += len(chunk)
                        if step:
                            hub.stop.wait(step)
                except OSError:  # the client gave up (its refusal): the test checks when
                    pass

            def _error(self, status: int, code: str) -> None:
                data = json.dumps({"error": code}).encode()
                self.send_response(status)
                self.send_header("X-Error-Code", code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command == "GET":
                    self.wfile.write(data)

            def do_HEAD(self) -> None:
                self._answer(body=False)

            def do_GET(self) -> None:
                self._answer(body=True)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


def safetensors_header(tensors: dict[str, tuple[str, list[int]]]) -> bytes:
    """The head of a safetensors file (8-byte little-endian length, then the JSON header) for
    tensors given as name -> (dtype, shape); the data the offsets point at is left out."""
    header, offset = {}, 0
    for name, (dtype, shape) in tensors.items():
        size = 2
        for dim in shape:
            size *= dim
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    return len(raw).to_bytes(8, "little") + raw
