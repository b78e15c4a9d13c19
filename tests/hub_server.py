"""A local stand-in for the Hugging Face Hub: serves config.json files over HTTP the way the Hub's
``/{repo}/resolve/{revision}/{file}`` endpoint does, so tests reach "the Hub" through HF_ENDPOINT
without the network. Gated repos answer 401 with the Hub's error code unless the token is right."""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COMMIT = "0" * 40


class HubStandIn:
    def __init__(self, repos: dict[str, dict], gated: dict[str, str] | None = None) -> None:
        self.repos, self.gated = repos, gated or {}
        self.seen: list[tuple[str, str, str]] = []  # (method, path, authorization)
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
                if filename != "config.json":
                    return self._error(404, "EntryNotFound")
                data = json.dumps(hub.repos[repo]).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
                self.send_header("X-Repo-Commit", COMMIT)
                self.end_headers()
                if body:
                    self.wfile.write(data)

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
        self.server.shutdown()
        self.server.server_close()
