"""The cassettes as transports of the GitHub client, and an in-memory one for tests.

* ``ReplayingTransport`` answers each request from ``cassettes/github/<key>.json``;
* ``RecordingTransport`` wraps another transport (the live one) and writes each answer
  as a cassette before handing it back;
* ``MockTransport`` answers from a function (httpx's ``MockTransport`` is the model).

The key is the request's method, path and query (relative to the API root, parameters
sorted), ``Accept`` header, body, and how many times the same request came before (its
*occurrence*): a rate-limited request and its retry are two recordings, replayed in
order; further repeats replay the last one. Credentials are never part of a key or a
recording. ``body_in_key=False`` keys requests without their bodies (the App's writes
carry timestamps and trial ids that differ on every run): repeated writes to one path are
then told apart by their occurrence alone. Absolute API URLs in bodies and headers are
stored as ``{{base_url}}``, so a cassette recorded against one API root replays for any.

A request with no recording raises ``GitHubCassetteMiss`` naming the request and the
cassette it looked for. An HTTP API has no harmless default (an empty page would read as
"no pull requests"), so a miss is loud instead.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from migration_evals.core.cassette import CassetteLibrary
from migration_evals.core.errors import GitHubCassetteMiss
from migration_evals.core.github.api import GitHubRequest, GitHubResponse, Transport
from migration_evals.core.model import FabricatedMark

__all__ = [
    "BASE_URL_MARK",
    "PORT",
    "MockTransport",
    "RecordingTransport",
    "ReplayingTransport",
]

log = logging.getLogger(__name__)

PORT = "github"
BASE_URL_MARK = "{{base_url}}"
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


def _canonical_path(target: str) -> str:
    """Path plus query with the parameters sorted, so parameter order never splits a key."""
    parts = urlsplit(target)
    query = urlencode(sorted(parse_qsl(parts.query, keep_blank_values=True)))
    return parts.path + (f"?{query}" if query else "")


def _keyed(request: GitHubRequest, *, body_in_key: bool) -> dict[str, Any]:
    return {
        "method": request.method,
        "path": _canonical_path(request.path),
        "accept": request.accept,
        "body": request.body_text if body_in_key else None,
    }


class _Occurrences:
    """How many times each request came before (thread-safe: the App has workers)."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def next(self, keyed: Mapping[str, Any]) -> int:
        key = CassetteLibrary.key(keyed)
        with self._lock:
            seen = self._counts.get(key, 0)
            self._counts[key] = seen + 1
            return seen


class ReplayingTransport:
    """Answers from the GitHub cassettes; never touches the network."""

    def __init__(
        self, cassettes: CassetteLibrary, *, base_url: str, body_in_key: bool = True
    ) -> None:
        self.cassettes = cassettes
        self.base_url = base_url.rstrip("/")
        self.body_in_key = body_in_key
        self.misses: list[FabricatedMark] = []
        self._occurrences = _Occurrences()

    def send(self, request: GitHubRequest) -> GitHubResponse:
        keyed = _keyed(request, body_in_key=self.body_in_key)
        occurrence = self._occurrences.next(keyed)
        first_miss: FabricatedMark | None = None
        for earlier in range(occurrence, -1, -1):
            found = self.cassettes.replay(PORT, {**keyed, "occurrence": earlier})
            if found.response is not None:
                return _decode(found.response, self.base_url)
            first_miss = first_miss or found.miss
        assert first_miss is not None
        self.misses.append(first_miss)
        log.warning("GitHub cassette miss: %s", first_miss.reason)
        raise GitHubCassetteMiss(f"{request.describe()}: {first_miss.reason}")

    def close(self) -> None:
        """Nothing to let go of: no connection was opened."""


class RecordingTransport:
    """Sends through ``live`` and writes each answer as a cassette (scrubbed)."""

    def __init__(
        self,
        live: Transport,
        cassettes: CassetteLibrary,
        *,
        base_url: str,
        recorded_by: str,
        body_in_key: bool = True,
    ) -> None:
        self.live = live
        self.cassettes = cassettes
        self.base_url = base_url.rstrip("/")
        self.recorded_by = recorded_by
        self.body_in_key = body_in_key
        self._occurrences = _Occurrences()

    def send(self, request: GitHubRequest) -> GitHubResponse:
        keyed = _keyed(request, body_in_key=self.body_in_key)
        occurrence = self._occurrences.next(keyed)
        response = self.live.send(request)  # no answer, no recording: the error goes up
        self.cassettes.record(
            PORT,
            {**keyed, "occurrence": occurrence},
            _encode(response, self.base_url),
            recorded_by=self.recorded_by,
        )
        return response

    def close(self) -> None:
        self.live.close()


class MockTransport:
    """Answers every request with ``handler(request)``: a stand-in for tests."""

    def __init__(self, handler: Callable[[GitHubRequest], GitHubResponse]) -> None:
        self.handler = handler

    def send(self, request: GitHubRequest) -> GitHubResponse:
        return self.handler(request)

    def close(self) -> None:
        """Nothing to let go of."""


def _encode(response: GitHubResponse, base_url: str) -> dict[str, Any]:
    """A recording: kept headers, and the body as JSON when it is (so keys get scrubbed)."""
    headers = {
        name.lower(): value.replace(base_url, BASE_URL_MARK)
        for name, value in response.headers.items()
        if name.lower() in _KEPT
    }
    text = response.text.replace(base_url, BASE_URL_MARK)
    stored: dict[str, Any] = {"status": response.status, "headers": headers}
    try:
        stored["json"] = json.loads(text) if text else None
    except json.JSONDecodeError:
        stored["text"] = text
    return stored


def _decode(stored: Mapping[str, Any], base_url: str) -> GitHubResponse:
    headers = {
        str(name).lower(): str(value).replace(BASE_URL_MARK, base_url)
        for name, value in stored["headers"].items()
    }
    if "text" in stored:
        text = str(stored["text"])
    else:
        text = "" if stored.get("json") is None else json.dumps(stored["json"])
    return GitHubResponse(int(stored["status"]), headers, text.replace(BASE_URL_MARK, base_url))
