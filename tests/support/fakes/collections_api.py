"""A fake of the collections API for the client's tests: scripted failures in front of a
collection that advances one page per poll.

Every request is recorded (method, path, query, headers, JSON body). ``script`` holds canned
answers, each taken by the first request whose method and path it matches (a 429 with
``Retry-After``, a 503, a 402…); everything else is answered by a minimal collection: created
by ``POST /collections`` with ``total`` pages, one page more done at each ``GET`` (never done
with ``endless``), cancelled by ``POST …/cancel``, exported as CSV/JSON Lines/JSON.
"""

from __future__ import annotations

import gzip
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

BASE = "/api/service/v1"
ID = "col_0123456789abcdef01234567"


@dataclass
class Canned:
    method: str
    path: str  # without the base path
    status: int
    body: Any = None  # JSON unless bytes
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any


def error(status: int, code: str, message: str, **extra: Any) -> dict[str, Any]:
    """The contract's error shape (docs/api.md, Errors)."""
    return {"code": status, "status": "", "error": code, "message": message,
            "request_id": "req_fake", "errors": {}, **extra}


class FakeCollectionsApi(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, total: int = 3, endless: bool = False):
        self.total, self.endless = total, endless
        self.script: list[Canned] = []
        self.seen: list[Seen] = []
        self.done, self.status = 0, "queued"
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)
        threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def requests(self, method: str, path: str) -> list[Seen]:
        return [s for s in self.seen if s.method == method and s.path == path]

    def collection(self) -> dict[str, Any]:
        return {"id": ID, "mode": "batch", "extract": "page", "status": self.status,
                "stop_reason": None, "created_at": "2026-11-21T08:30:00Z",
                "started_at": "2026-11-21T08:30:01Z", "finished_at": None,
                "expires_at": None,
                "progress": {"total": self.total, "done": self.done, "succeeded": self.done,
                             "failed": 0, "robots_blocked": 0},
                "credits_used": self.done}

    def answer(self, seen: Seen) -> tuple[int, Any, dict[str, str]]:
        with self.lock:
            self.seen.append(seen)
            for canned in self.script:
                if (canned.method, canned.path) == (seen.method, seen.path):
                    self.script.remove(canned)
                    return canned.status, canned.body, canned.headers
            return self._collection_answer(seen)

    def _collection_answer(self, seen: Seen) -> tuple[int, Any, dict[str, str]]:
        path = seen.path
        if (seen.method, path) == ("POST", "/collections"):
            return 202, self.collection(), {}
        if not path.startswith(f"/collections/{ID}"):
            return 404, error(404, "not_found", "No such collection."), {}
        if path.endswith("/cancel"):
            if self.status in ("completed", "failed"):
                return 409, error(409, "conflict", "This collection is completed already."), {}
            self.status = "cancelled"
            return 200, self.collection(), {}
        if path.endswith("/export"):
            return 200, *self._export(seen)
        if self.status in ("queued", "running"):
            self.status = "running"
            if not self.endless:
                self.done = min(self.total, self.done + 1)
                self.status = "completed" if self.done == self.total else "running"
        return 200, self.collection(), {}

    def _export(self, seen: Seen) -> tuple[bytes, dict[str, str]]:
        rows = [{"url": f"https://example.com/{n}", "status": "succeeded"}
                for n in range(self.done)]
        fmt = seen.query.get("format")
        kept = seen.query.get("fields", "url,status").split(",")  # the API's `fields`
        rows = [{name: row[name] for name in kept} for row in rows]
        if fmt == "csv":
            text = ",".join(kept) + "\n" + "".join(",".join(r.values()) + "\n" for r in rows)
        elif fmt == "jsonl":
            text = "".join(json.dumps(r) + "\n" for r in rows)
        else:
            text = json.dumps(rows)
        body = text.encode()
        headers = {"Content-Disposition": f'attachment; filename="{ID}.{fmt}"'}
        if "gzip" in seen.headers.get("accept-encoding", ""):
            body = gzip.compress(body)
            headers["Content-Encoding"] = "gzip"
        return body, headers


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: FakeCollectionsApi

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        seen = Seen(self.command, parts.path.removeprefix(BASE), dict(parse_qsl(parts.query)),
                    {k.lower(): v for k, v in self.headers.items()},
                    json.loads(raw) if raw else None)
        status, body, headers = self.server.answer(seen)
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        if "Content-Type" not in headers:
            self.send_header("Content-Type", "application/json" if not isinstance(body, bytes)
                             else "text/plain")
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
