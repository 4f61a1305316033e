"""The GitHub cassette stand-in: a loopback HTTP server that answers like the GitHub API.

PyGithub builds its own ``requests`` session inside its connection class and offers no
way to hand it one, so the seam is the wire: point ``Github(base_url=...)`` at this
server. The provider's code path is then exactly the live one (PyGithub, requests,
pagination by ``Link`` headers, rate-limit headers), with only the far end replaced.

* **replay** (no upstream): each request is answered from ``cassettes/github/<key>.json``.
* **record** (an ``Upstream``): each request is forwarded to the real API, and the answer
  is scrubbed, written as a cassette and passed back.

The key is the request's method, path and query (relative to the API root), ``Accept``
header, body, and how many times the same request came before (its *occurrence*): a
rate-limited request and its retry are two recordings, replayed in order; further
repeats replay the last one. Credentials are never part of a key or a recording. A server
made with ``body_in_key=False`` keys requests without their bodies (the GitHub App's
writes carry timestamps and trial ids that differ on every run): repeated writes to one
path are then told apart by their occurrence alone.
Absolute API URLs in bodies and ``Link`` headers are stored as ``{{base_url}}``, so
cassettes recorded against github.com replay for any server address.

A request with no recording is answered ``404`` with a body carrying the fabricated mark
(``{"message": ..., "fabricated": {...}}``); the provider turns it into a
``ChangesetProviderError`` naming the missing cassette. An HTTP API has no harmless
default (an empty page would read as "no pull requests"), so a miss is loud instead.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlencode, urlsplit

import requests

from migration_evals.core.cassette import CassetteLibrary
from migration_evals.core.errors import CassetteError
from migration_evals.core.model import FabricatedMark

__all__ = [
    "BASE_URL_MARK",
    "PORT",
    "GitHubCassetteServer",
    "RequestsUpstream",
    "Upstream",
    "UpstreamResponse",
]

log = logging.getLogger(__name__)

PORT = "github"
BASE_URL_MARK = "{{base_url}}"
FABRICATED_HEADER = "X-Migration-Evals-Fabricated"

# Request headers that reach GitHub; everything else (cookies, proxies' additions) stays.
_FORWARDED = ("accept", "authorization", "user-agent", "content-type", "x-github-api-version")
# Response headers worth keeping: what clients act on (pagination, rate limits, types).
_KEPT = (
    "content-type",
    "link",
    "retry-after",
    "x-ratelimit-limit",
    "x-ratelimit-remaining",
    "x-ratelimit-reset",
    "x-ratelimit-used",
    "x-ratelimit-resource",
)


@dataclass(frozen=True, slots=True)
class UpstreamResponse:
    status: int
    headers: Mapping[str, str]
    body: bytes


class Upstream(Protocol):
    """The real API, as the recorder reaches it."""

    @property
    def base_url(self) -> str: ...

    def send(
        self, method: str, path: str, headers: Mapping[str, str], body: bytes | None
    ) -> UpstreamResponse: ...


class RequestsUpstream:
    """Forwards over a ``requests`` session the caller owns (proxies, CA bundles, retries)."""

    def __init__(self, session: requests.Session, base_url: str, *, timeout_s: float = 60.0):
        self.session = session
        self._base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s

    @property
    def base_url(self) -> str:
        return self._base_url

    def send(
        self, method: str, path: str, headers: Mapping[str, str], body: bytes | None
    ) -> UpstreamResponse:
        response = self.session.request(
            method,
            self._base_url + path,
            headers=dict(headers),
            data=body,
            timeout=self.timeout_s,
            allow_redirects=False,
        )
        return UpstreamResponse(response.status_code, dict(response.headers), response.content)


def _canonical_path(target: str) -> str:
    """Path plus query with the parameters sorted, so parameter order never splits a key."""
    parts = urlsplit(target)
    query = urlencode(sorted(parse_qsl(parts.query, keep_blank_values=True)))
    return parts.path + (f"?{query}" if query else "")


@dataclass
class _Occurrences:
    counts: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next(self, key: str) -> int:
        with self.lock:
            seen = self.counts.get(key, 0)
            self.counts[key] = seen + 1
            return seen


class GitHubCassetteServer:
    """Serves GitHub API answers from cassettes, or records them from ``upstream``.

    Use as a context manager; ``base_url`` is what ``Github(base_url=...)`` takes.
    """

    def __init__(
        self,
        cassettes: CassetteLibrary,
        *,
        upstream: Upstream | None = None,
        recorded_by: str = "migration-evals github recorder",
        host: str = "127.0.0.1",
        body_in_key: bool = True,
    ) -> None:
        self.cassettes = cassettes
        self.upstream = upstream
        self.body_in_key = body_in_key
        self.recorded_by = recorded_by
        self.misses: list[FabricatedMark] = []
        self._occurrences = _Occurrences()
        self._httpd = ThreadingHTTPServer((host, 0), _handler_for(self))
        self._httpd.daemon_threads = True
        # Keep-alive connections from a client still open must not hold up closing.
        self._httpd.block_on_close = False
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> GitHubCassetteServer:
        # A short poll interval: closing the server should not cost half a second.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="github-cassettes",
            daemon=True,
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _value: BaseException | None,
        _tb: TracebackType | None,
    ) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()

    # -- answering ----------------------------------------------------------------------

    def answer(
        self, method: str, target: str, headers: Mapping[str, str], body: bytes | None
    ) -> UpstreamResponse:
        """The response to one request (called on the server's threads)."""
        request: dict[str, Any] = {
            "method": method,
            "path": _canonical_path(target),
            "accept": headers.get("accept", ""),
            "body": body.decode("utf-8", "replace") if body and self.body_in_key else None,
        }
        base_key = CassetteLibrary.key(request)
        occurrence = self._occurrences.next(base_key)
        if self.upstream is not None:
            stored = self._record(request, occurrence, target, headers, body)
        else:
            stored = self._replay(request, occurrence)
        return self._decode(stored)

    def _replay(self, request: dict[str, Any], occurrence: int) -> Mapping[str, Any]:
        first_miss: FabricatedMark | None = None
        for earlier in range(occurrence, -1, -1):
            found = self.cassettes.replay(PORT, {**request, "occurrence": earlier})
            if found.response is not None:
                return found.response
            first_miss = first_miss or found.miss
        assert first_miss is not None
        self.misses.append(first_miss)
        log.warning("GitHub cassette miss: %s", first_miss.reason)
        where = f"{request['method']} {request['path']}"
        body = {"message": f"Not Found: {first_miss.reason} ({where})"}
        return {
            "status": 404,
            "headers": {"content-type": "application/json", FABRICATED_HEADER.lower(): "1"},
            "json": {**body, "fabricated": first_miss.to_dict()},
        }

    def _record(
        self,
        request: dict[str, Any],
        occurrence: int,
        target: str,
        headers: Mapping[str, str],
        body: bytes | None,
    ) -> Mapping[str, Any]:
        assert self.upstream is not None
        forwarded = {k: v for k, v in headers.items() if k in _FORWARDED}
        try:
            live = self.upstream.send(request["method"], target, forwarded, body)
        except requests.RequestException as exc:
            raise CassetteError(f"recording: cannot reach {self.upstream.base_url}: {exc}") from exc
        stored = self._encode(live, self.upstream.base_url)
        self.cassettes.record(
            PORT, {**request, "occurrence": occurrence}, stored, recorded_by=self.recorded_by
        )
        return stored

    @staticmethod
    def _encode(live: UpstreamResponse, upstream_base: str) -> dict[str, Any]:
        """A recording: kept headers, and the body as JSON when it is (so keys get scrubbed)."""
        headers = {k.lower(): v for k, v in live.headers.items() if k.lower() in _KEPT}
        headers = {k: v.replace(upstream_base, BASE_URL_MARK) for k, v in headers.items()}
        text = live.body.decode("utf-8", "replace").replace(upstream_base, BASE_URL_MARK)
        stored: dict[str, Any] = {"status": live.status, "headers": headers}
        try:
            stored["json"] = json.loads(text) if text else None
        except json.JSONDecodeError:
            stored["text"] = text
        return stored

    def _decode(self, stored: Mapping[str, Any]) -> UpstreamResponse:
        base = self.base_url
        headers = {k: str(v).replace(BASE_URL_MARK, base) for k, v in stored["headers"].items()}
        if "text" in stored:
            text = str(stored["text"])
        else:
            text = "" if stored.get("json") is None else json.dumps(stored["json"])
        return UpstreamResponse(
            int(stored["status"]), headers, text.replace(BASE_URL_MARK, base).encode()
        )


def _handler_for(server: GitHubCassetteServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {k.lower(): v for k, v in self.headers.items()}
            try:
                response = server.answer(self.command, self.path, headers, body)
            except CassetteError as exc:
                log.error("%s", exc)
                response = UpstreamResponse(
                    502,
                    {"content-type": "application/json"},
                    json.dumps({"message": str(exc)}).encode(),
                )
            self.send_response(response.status)
            for name, value in response.headers.items():
                if name not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(response.body)))
            self.end_headers()
            self.wfile.write(response.body)

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("github cassettes: " + format, *args)

    return Handler
