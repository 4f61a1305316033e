"""The registry gate: the only way out of a dependency-resolution sandbox.

A resolution container has no network at all. Its one channel is a Unix socket that the
harness bind-mounts into it, behind which this gate answers plain HTTP on one route per
registry, ``/<route>/<path>``, each forwarding GET and HEAD to one configured upstream (a
public registry by default, or a company mirror). The image's build tool sends every
repository through its route, so a build file that names another repository URL reaches
nothing, and code running in the container cannot open any other connection. Upstream
credentials stay here; the container never sees them.

What a route may do beyond forwarding is its ecosystem's (a ``Route`` each, from the
ecosystem packages, handed in by the composition): release files that never change once
published are kept in a host store and repeats served from it; in offline mode nothing
goes upstream, the store and a route's own folder of the dependency caches (laid out as
its registry) answer, and a miss is ``503``, an infrastructure condition, never a missing
artifact.

A session may answer *as of* a moment (a base commit's date): a route whose metadata is
``dated`` then lists only the versions published by then
(``migration_evals.oracles.sandbox.as_of``), so a build that leaves a plugin's version open
gets the one its authors got.

Each session logs every request (``RegistryFetch``): the resolver names what was fetched,
and what the registry itself said it does not have, from this log, not from anything the
container printed.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import re
import shutil
import socketserver
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import unquote, urlsplit, urlunsplit

import requests

from migration_evals.core.ports import RegistryFetch
from migration_evals.core.serving import ServingThread
from migration_evals.oracles.sandbox.as_of import (
    MetadataRequest,
    PublishDates,
    UpstreamFailed,
    checksum,
    metadata_as_of,
    metadata_request,
    metadata_versions,
)
from migration_evals.oracles.sandbox.routes import Route

__all__ = [
    "GATE_PORT",
    "GATE_SOCKET",
    "GateSession",
    "RegistryGate",
    "Route",
    "Upstream",
    "redact_url",
]

log = logging.getLogger(__name__)

GATE_SOCKET = "gate.sock"
GATE_PORT = 3128  # where the container's forwarder listens on its own loopback
_CHUNK = 1 << 16
_SETTLE_S = 5.0  # how long reading the log waits for requests still being answered
_SAFE_PATH = re.compile(r"\A[A-Za-z0-9._~!+@,=/-]+\Z")
_PASS_HEADERS = ("Content-Type", "Last-Modified", "ETag")


def redact_url(url: str) -> str:
    """``url`` without any user name or password, for logs, evidence and cache keys."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    return urlunsplit(parts._replace(netloc=_host_port(parts)))


@dataclass(frozen=True, slots=True)
class Upstream:
    """One registry a route forwards to; credentials may be in the URL (never logged)."""

    url: str = field(repr=False)

    @property
    def shown(self) -> str:
        return redact_url(self.url)

    def target(self, path: str) -> tuple[str, tuple[str, str] | None]:
        """The upstream URL for ``path`` (credentials apart), and the basic-auth pair."""
        parts = urlsplit(self.url.rstrip("/") + "/" + path)
        auth = None
        if parts.username is not None:
            # Credentials holding "@", ":" or "/" can only be written percent-encoded.
            auth = (unquote(parts.username), unquote(parts.password or ""))
        return urlunsplit(parts._replace(netloc=_host_port(parts))), auth


def _host_port(parts: Any) -> str:
    """The URL's host and port without credentials (an IPv6 host keeps its brackets)."""
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    return f"{host}:{parts.port}" if parts.port else host


@dataclass(frozen=True, slots=True)
class _AsOf:
    """A dated route's metadata request in an as-of session."""

    metadata: MetadataRequest
    dates: PublishDates
    moment: datetime


class RegistryGate:
    """Answers resolution containers on behalf of the configured registries.

    ``upstreams`` maps a route's name to its registry; ``routes`` say what each route
    does beyond forwarding (a route without one only forwards). ``store`` keeps release
    files; ``caches`` is the folder of the dependency caches, where a route's
    ``offline_cache`` is. ``session`` is the HTTP client used upstream (tests pass their
    own).
    """

    def __init__(
        self,
        upstreams: Mapping[str, Upstream],
        *,
        routes: Sequence[Route],
        store: Path,
        caches: Path,
        offline: bool = False,
        session: requests.Session | None = None,
        timeout_s: tuple[float, float] = (10.0, 120.0),
    ) -> None:
        self.upstreams = dict(upstreams)
        self.routes = {route.name: route for route in routes}
        self.store = store
        self.caches = caches
        self.offline = offline
        self.session = session or requests.Session()
        self.timeout_s = timeout_s
        dated = next((route.name for route in routes if route.dated), None)
        # Kept in the store under a name no request can reach (``_safe`` refuses it).
        self.dates = (
            PublishDates(store / ".published", functools.partial(self._ask, dated))
            if dated is not None
            else None
        )

    @property
    def identity(self) -> str:
        """What the gate's answers depend on (credentials left out); part of cache keys."""
        routes = " ".join(f"{name}={up.shown}" for name, up in sorted(self.upstreams.items()))
        return f"registry-gate/2 {'offline' if self.offline else 'online'} {routes}"

    @contextlib.contextmanager
    def session_for_run(
        self, host: str | None = None, *, as_of: datetime | None = None
    ) -> Iterator[GateSession]:
        """A gate listening for one run, closed (and logged) on exit: on a fresh Unix
        socket, or with ``host`` on a fresh TCP port of that address (for an engine that
        cannot mount the harness's folders: the run's container reaches it through a
        network of its own). With ``as_of``, a dated route's metadata lists only the
        versions published by then."""
        gate = GateSession(self, host, as_of=as_of)
        try:
            gate.start()
            yield gate
        finally:
            gate.close()

    # -- answering ---------------------------------------------------------------------

    def answer(
        self, method: str, raw_path: str, reply: _Reply, *, as_of: datetime | None = None
    ) -> RegistryFetch:
        """Serve one request; returns what happened, for the session's log."""
        route, _, path = raw_path.lstrip("/").partition("/")
        # Clients percent-encode what they must (the module proxy's "!" case escapes come
        # as %21); the path is judged and forwarded as what it means.
        path = unquote(path.split("?", 1)[0])
        if route not in self.upstreams or not _safe(path):
            reply.status(404)
            return RegistryFetch(route[:20], path[:300], 404, "refused")
        dates = self.dates if self._route(route).dated else None
        metadata = metadata_request(path) if dates is not None and as_of else None
        if metadata is not None and dates is not None and as_of is not None:
            answer = _AsOf(metadata, dates, as_of)
            return self._metadata_as_of(method, route, path, reply, answer)
        cached = self._cached(route, path)
        if cached is not None:
            reply.file(method, cached)
            return RegistryFetch(route, path, 200, "store")
        if self.offline:
            reply.status(503)
            return RegistryFetch(route, path, 503, "offline")
        return self._forward(method, route, path, reply)

    def _route(self, name: str) -> Route:
        return self.routes.get(name) or Route(name)

    def _cached(self, route: str, path: str) -> Path | None:
        policy = self._route(route)
        if policy.stored(path):
            folder = self.store
        elif policy.offline_cache and self.offline:
            folder = self.caches / policy.offline_cache
        else:
            return None
        found = folder / path
        # Resolution runs write the dependency caches: a symlink they left anywhere on the
        # way (not only the file itself) must not lead outside the folder.
        if not found.is_file() or not found.resolve().is_relative_to(folder.resolve()):
            return None
        return found

    def _forward(self, method: str, route: str, path: str, reply: _Reply) -> RegistryFetch:
        url, auth = self.upstreams[route].target(path)
        try:
            response = self.session.get(url, auth=auth, stream=True, timeout=self.timeout_s)
        except requests.RequestException as exc:
            log.warning("registry %s unreachable for %s: %s", route, path, type(exc).__name__)
            reply.status(502)
            return RegistryFetch(route, path, 502, "upstream-error")
        with response:
            status = response.status_code
            if status in (404, 410):
                reply.status(404)
                return RegistryFetch(route, path, status, "upstream")
            if status != 200:
                reply.status(502)
                return RegistryFetch(route, path, status, "upstream-error")
            keep = self._route(route).stored(path)
            try:
                self._relay(method, response, reply, self.store / path if keep else None)
            except requests.RequestException:
                return RegistryFetch(route, path, 502, "upstream-error")
        return RegistryFetch(route, path, 200, "upstream")

    def _metadata_as_of(
        self,
        method: str,
        route: str,
        path: str,
        reply: _Reply,
        asked: _AsOf,
    ) -> RegistryFetch:
        """An artifact's metadata (or its checksum) without the versions published after
        the session's moment; every failure to read it or date its versions is the
        registry's."""
        metadata = asked.metadata
        if self.offline:
            reply.status(503)
            return RegistryFetch(route, path, 503, "offline")
        url, auth = self.upstreams[route].target(metadata.path)
        try:
            response = self.session.get(url, auth=auth, timeout=self.timeout_s)
        except requests.RequestException as exc:
            log.warning("registry %s unreachable for %s: %s", route, path, type(exc).__name__)
            reply.status(502)
            return RegistryFetch(route, path, 502, "upstream-error")
        if response.status_code in (404, 410):
            reply.status(404)
            return RegistryFetch(route, path, response.status_code, "upstream")
        if response.status_code != 200:
            reply.status(502)
            return RegistryFetch(route, path, response.status_code, "upstream-error")
        body = response.content
        try:
            dates = asked.dates.of(metadata, metadata_versions(body) or [])
        except (UpstreamFailed, requests.RequestException) as exc:
            log.warning("registry %s cannot date the versions of %s: %s", route, path, exc)
            reply.status(502)
            return RegistryFetch(route, path, 502, "upstream-error")
        body = metadata_as_of(body, dates, asked.moment)
        if metadata.checksum:
            body = checksum(body, metadata.checksum)
        reply.start(200, {"Content-Type": "text/xml", "Content-Length": str(len(body))})
        if method != "HEAD":
            reply.write(body)
        return RegistryFetch(route, path, 200, "upstream")

    def _ask(self, route: str, method: str, path: str) -> tuple[int, str | None, bytes]:
        """What ``route``'s registry answers for ``path``: status, Last-Modified, body."""
        url, auth = self.upstreams[route].target(path)
        response = self.session.request(
            method, url, auth=auth, timeout=self.timeout_s, allow_redirects=True
        )
        with response:
            body = response.content if method == "GET" and response.status_code == 200 else b""
            return response.status_code, response.headers.get("Last-Modified"), body

    def _relay(
        self, method: str, response: requests.Response, reply: _Reply, keep: Path | None
    ) -> None:
        """Stream the upstream body to the container, keeping a copy when ``keep``."""
        headers = {
            name: response.headers[name] for name in _PASS_HEADERS if name in response.headers
        }
        # The body is relayed decoded (requests undoes any transfer compression), so the
        # upstream's length does not apply: the body ends when the connection closes.
        reply.start(200, {**headers, "Connection": "close"})
        reply.closing()
        if method == "HEAD":
            return
        sink = _StoreWriter(keep) if keep is not None else None
        try:
            for chunk in response.iter_content(_CHUNK):
                reply.write(chunk)
                if sink is not None:
                    sink.write(chunk)
        except BaseException:
            if sink is not None:
                sink.abandon()
            raise
        if sink is not None:
            sink.commit()


def _safe(path: str) -> bool:
    """A relative path of plain segments: none empty or starting with a dot (``..``, and
    the gate's own files in the store, such as partial downloads and version dates)."""
    if not path or not _SAFE_PATH.match(path):
        return False
    return all(part and not part.startswith(".") for part in path.split("/"))


class _StoreWriter:
    """Writes a fetched file beside its final place and moves it there when complete."""

    def __init__(self, final: Path) -> None:
        self.final = final
        final.parent.mkdir(parents=True, exist_ok=True)
        descriptor, name = tempfile.mkstemp(dir=final.parent, prefix=".part-")
        self.temporary = Path(name)
        self.handle: BinaryIO = os.fdopen(descriptor, "wb")

    def write(self, chunk: bytes) -> None:
        self.handle.write(chunk)

    def commit(self) -> None:
        self.handle.close()
        # Builds read the store through links, as the sandbox's unprivileged user.
        self.temporary.chmod(0o644)
        os.replace(self.temporary, self.final)

    def abandon(self) -> None:
        self.handle.close()
        self.temporary.unlink(missing_ok=True)


class _Reply:
    """The HTTP answer to one request, written through the handler."""

    def __init__(self, handler: BaseHTTPRequestHandler) -> None:
        self.handler = handler

    def start(self, status: int, headers: Mapping[str, str]) -> None:
        self.handler.send_response(status)
        for name, value in headers.items():
            self.handler.send_header(name, value)
        self.handler.end_headers()

    def closing(self) -> None:
        self.handler.close_connection = True

    def status(self, status: int) -> None:
        self.start(status, {"Content-Length": "0"})

    def write(self, chunk: bytes) -> None:
        self.handler.wfile.write(chunk)

    def file(self, method: str, path: Path) -> None:
        self.start(200, {"Content-Length": str(path.stat().st_size)})
        if method != "HEAD":
            with path.open("rb") as handle:
                shutil.copyfileobj(handle, self.handler.wfile, _CHUNK)


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    gate: RegistryGate
    as_of: datetime | None
    fetches: list[RegistryFetch]
    lock: threading.Condition
    active: int  # requests being answered, not yet in ``fetches``


class _TcpServer(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    gate: RegistryGate
    as_of: datetime | None
    fetches: list[RegistryFetch]
    lock: threading.Condition
    active: int


class _Handler(BaseHTTPRequestHandler):
    server: _Server | _TcpServer
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self._answer("GET")

    def do_HEAD(self) -> None:
        self._answer("HEAD")

    def _answer(self, method: str) -> None:
        server = self.server
        with server.lock:
            server.active += 1
        try:
            fetch = server.gate.answer(method, self.path, _Reply(self), as_of=server.as_of)
            with server.lock:
                server.fetches.append(fetch)
        finally:
            with server.lock:
                server.active -= 1
                server.lock.notify_all()

    def address_string(self) -> str:
        return "resolution-sandbox"  # a Unix socket peer has no address

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("registry gate: " + format, *args)


class _TcpHandler(_Handler):
    # An answer's headers and body are written apart: with Nagle's algorithm on, the
    # body would wait for the client's delayed acknowledgement of the headers.
    disable_nagle_algorithm = True


class GateSession:
    """One run's gate: a socket in a private folder (or a TCP port of ``host``), and the
    log of what went through."""

    def __init__(
        self, gate: RegistryGate, host: str | None = None, *, as_of: datetime | None = None
    ) -> None:
        self.gate = gate
        self.host = host
        self.as_of = as_of
        self.folder = Path(tempfile.mkdtemp(prefix="me-gate-"))
        self._server: _Server | _TcpServer | None = None
        self._serving: ServingThread | None = None

    @property
    def socket_path(self) -> Path:
        return self.folder / GATE_SOCKET

    @property
    def address(self) -> tuple[str, int]:
        """Where a TCP session listens."""
        assert isinstance(self._server, _TcpServer)
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def start(self) -> None:
        server: _Server | _TcpServer
        if self.host is not None:
            server = _TcpServer((self.host, 0), _TcpHandler)
        else:
            # The container's user is not the harness's: it must reach the socket.
            self.folder.chmod(0o755)
            server = _Server(str(self.socket_path), _Handler)
            self.socket_path.chmod(0o777)
        server.gate = self.gate
        server.as_of = self.as_of
        server.fetches = []
        server.lock = threading.Condition()
        server.active = 0
        self._server = server
        self._serving = ServingThread(server, name="registry-gate")
        self._serving.start()

    @property
    def fetches(self) -> tuple[RegistryFetch, ...]:
        server = self._server
        if server is None:
            return ()
        with server.lock:
            # A client has its whole answer (a 404, a stored file) before the handler
            # logs it: wait for answers still being logged, or the last one goes missing.
            server.lock.wait_for(lambda: server.active == 0, timeout=_SETTLE_S)
            return tuple(server.fetches)

    def close(self) -> None:
        if self._serving is not None:
            self._serving.stop()
        shutil.rmtree(self.folder, ignore_errors=True)
