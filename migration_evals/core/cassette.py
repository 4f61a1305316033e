"""Cassettes: one mechanism for recording and replaying every port.

A cassette is a JSON file ``<root>/<port>/<key>.json`` where ``key`` is the SHA256 of the
request's canonical JSON. Recording scrubs secrets before anything touches the disk.
Replaying a request that was never recorded does not raise: the port returns its ergonomic
default stamped with a ``FabricatedMark`` naming the missing key and the cassette path, and
that mark follows the result into the store, every JSON output and every report.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from migration_evals.core.errors import CassetteError
from migration_evals.core.model import FabricatedMark
from migration_evals.core.stamps import stamp

__all__ = ["CassetteLibrary", "Replayed", "scrub"]

T = TypeVar("T")

SCRUBBED = "[scrubbed]"
# Whole-key suffixes, so "max_tokens" or "input_tokens" stay while "x-api-key" goes.
_SECRET_KEY = re.compile(
    r"(authori[sz]ation|api[-_]?key|secret|passw(or)?d|cookie|private[-_]?key|(^|[-_])token)$",
    re.IGNORECASE,
)
_SECRET_VALUE = re.compile(
    r"(sk-ant-[A-Za-z0-9_\-]{8,}"  # Anthropic keys
    r"|sk-(?:proj-)?[A-Za-z0-9_\-]{16,}"  # OpenAI keys
    r"|gh[pousr]_[A-Za-z0-9]{20,}"  # GitHub tokens
    r"|github_pat_[A-Za-z0-9_]{20,}"
    r"|(?i:bearer)\s+[A-Za-z0-9._\-]{8,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----)"
)


def scrub(value: Any) -> Any:
    """Replace secrets: values under secret-looking keys and token-shaped strings anywhere."""
    if isinstance(value, Mapping):
        return {
            k: (SCRUBBED if _SECRET_KEY.search(str(k)) and v else scrub(v))
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [scrub(v) for v in value]
    if isinstance(value, str):
        return _SECRET_VALUE.sub(SCRUBBED, value)
    return value


@dataclass(frozen=True, slots=True)
class Replayed:
    """A replay lookup: the recorded response, or the mark explaining its absence."""

    response: Mapping[str, Any] | None
    miss: FabricatedMark | None
    recorded_by: str = ""  # the cassette's own note of who or what wrote it


class CassetteLibrary:
    """A directory of cassettes, one sub-folder per port."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._root = str(root)

    @staticmethod
    def key(request: Mapping[str, Any]) -> str:
        # Requests carry no credentials (clients hold those), and a hash reveals nothing,
        # so the key is over the request as made; only what is written is scrubbed.
        return stamp(request)

    def path(self, port: str, key: str) -> Path:
        return self.root / port / f"{key}.json"

    def replay(self, port: str, request: Mapping[str, Any]) -> Replayed:
        key = self.key(request)
        # A string, not a Path: a trial replays several cassettes, each looked up here.
        path = os.path.join(self._root, port, f"{key}.json")
        try:
            # Bytes: json reads UTF-8 itself, without a text reader made for every read.
            with open(path, "rb") as handle:
                text = handle.read()
        except FileNotFoundError:
            reason = f"no cassette for this {port} request (key {key}) at {path}"
            return Replayed(None, FabricatedMark(port, key, str(path), reason))
        except OSError as exc:
            raise CassetteError(f"cassette {path} cannot be read: {exc}") from exc
        try:
            entry = json.loads(text)
            response: Mapping[str, Any] = entry["response"]
        except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as exc:
            raise CassetteError(
                f"cassette {path} is corrupt ({exc}); delete it and re-record"
            ) from exc
        return Replayed(response, None, str(entry.get("recorded_by") or ""))

    def replay_as(
        self,
        port: str,
        request: Mapping[str, Any],
        decode: Callable[[Mapping[str, Any]], T],
        default: Callable[[FabricatedMark], T],
        *,
        origin: Callable[[T, str], T] | None = None,
    ) -> T:
        """Replay and decode, or return the port's fabricated default on a miss.

        ``origin``, when given, stamps a decoded answer with the cassette's ``recorded_by``,
        so a hand-written answer can be told from a recorded one wherever it ends up.
        """
        found = self.replay(port, request)
        if found.miss is not None:
            return default(found.miss)
        assert found.response is not None
        try:
            decoded = decode(found.response)
        except (KeyError, TypeError, ValueError) as exc:
            path = self.path(port, self.key(request))
            raise CassetteError(f"cassette {path} does not fit the {port} port: {exc}") from exc
        return decoded if origin is None else origin(decoded, found.recorded_by)

    def record(
        self,
        port: str,
        request: Mapping[str, Any],
        response: Mapping[str, Any],
        *,
        recorded_by: str,
    ) -> Path:
        """Write (atomically) a scrubbed cassette for ``request``; returns its path."""
        key = self.key(request)
        path = self.path(port, key)
        entry = {
            "port": port,
            "key": key,
            "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "recorded_by": recorded_by,
            "request": scrub(request),
            "response": scrub(response),
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(entry, handle, indent=2, sort_keys=True, ensure_ascii=False)
                handle.write("\n")
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path
