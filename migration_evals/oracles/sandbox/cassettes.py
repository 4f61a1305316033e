"""The sandbox port over cassettes: replay recorded runs, or record live ones.

Three kinds of interaction are recorded: resolving an image reference to its content id
(``{"resolve": ref}``), reading an image's configuration (``{"inspect": id}``), and a run,
build or start keyed by ``SandboxRequest.key_data()``, which includes those ids.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from migration_evals.core.cassette import CassetteLibrary
from migration_evals.core.ports import ImageConfig, ImageRef, Sandbox, SandboxRequest, SandboxResult

__all__ = ["PORT", "RecordingSandbox", "ReplayingSandbox"]

PORT = "sandbox"


def _resolve_key(image: str) -> Mapping[str, Any]:
    return {"resolve": image}


def _inspect_key(image: str) -> Mapping[str, Any]:
    return {"inspect": image}


class ReplayingSandbox:
    """Answers from cassettes; a miss is a clean empty success stamped fabricated."""

    identity = "sandbox:replay"

    def __init__(self, cassettes: CassetteLibrary) -> None:
        self.cassettes = cassettes
        self._resolved: dict[str, ImageRef] = {}
        self._lock = threading.Lock()

    def resolve(self, image: str) -> ImageRef:
        with self._lock:
            known = self._resolved.get(image)
        if known is None:
            known = self.cassettes.replay_as(
                PORT, _resolve_key(image), ImageRef.from_dict, ImageRef.fabricated_default(image)
            )
            with self._lock:
                self._resolved[image] = known
        return known

    def has_cache(self, cache: str) -> bool:
        return True  # replayed runs need no cache on this machine

    @property
    def runs_live(self) -> bool:
        return False  # a cassette answers at once

    def run(self, request: SandboxRequest) -> SandboxResult:
        return self.cassettes.replay_as(
            PORT, request.key_data(), SandboxResult.from_dict, SandboxResult.fabricated_default
        )

    def inspect(self, image: str) -> ImageConfig:
        return self.cassettes.replay_as(
            PORT, _inspect_key(image), ImageConfig.from_dict, ImageConfig.fabricated_default
        )


class RecordingSandbox:
    """Runs the live sandbox and writes every answer to a cassette."""

    def __init__(self, live: Sandbox, cassettes: CassetteLibrary) -> None:
        self.live = live
        self.cassettes = cassettes

    @property
    def identity(self) -> str:
        return self.live.identity

    def resolve(self, image: str) -> ImageRef:
        found = self.live.resolve(image)
        self.cassettes.record(PORT, _resolve_key(image), found.to_dict(), recorded_by=self.identity)
        return found

    def run(self, request: SandboxRequest) -> SandboxResult:
        result = self.live.run(request)
        self.cassettes.record(PORT, request.key_data(), result.to_dict(), recorded_by=self.identity)
        return result

    def has_cache(self, cache: str) -> bool:
        return self.live.has_cache(cache)

    @property
    def runs_live(self) -> bool:
        return self.live.runs_live

    def inspect(self, image: str) -> ImageConfig:
        found = self.live.inspect(image)
        self.cassettes.record(PORT, _inspect_key(image), found.to_dict(), recorded_by=self.identity)
        return found

    def reap(self) -> int:
        """Clean up after crashed harnesses on the live engine, when the live adapter can."""
        reap: Callable[[], int] | None = getattr(self.live, "reap", None)
        return reap() if reap is not None else 0
