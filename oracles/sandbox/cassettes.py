"""The sandbox port over cassettes: replay recorded runs, or record live ones."""

from __future__ import annotations

from core.cassette import CassetteLibrary
from core.ports import Sandbox, SandboxRequest, SandboxResult

__all__ = ["PORT", "RecordingSandbox", "ReplayingSandbox"]

PORT = "sandbox"


class ReplayingSandbox:
    """Answers from cassettes; a miss is a clean empty success stamped fabricated."""

    identity = "sandbox:replay"

    def __init__(self, cassettes: CassetteLibrary) -> None:
        self.cassettes = cassettes

    def run(self, request: SandboxRequest) -> SandboxResult:
        return self.cassettes.replay_as(
            PORT, request.key_data(), SandboxResult.from_dict, SandboxResult.fabricated_default
        )


class RecordingSandbox:
    """Runs the live sandbox and writes every result to a cassette."""

    def __init__(self, live: Sandbox, cassettes: CassetteLibrary) -> None:
        self.live = live
        self.cassettes = cassettes

    @property
    def identity(self) -> str:
        return self.live.identity

    def run(self, request: SandboxRequest) -> SandboxResult:
        result = self.live.run(request)
        self.cassettes.record(PORT, request.key_data(), result.to_dict(), recorded_by=self.identity)
        return result
