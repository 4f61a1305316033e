"""The sandbox when no engine can be used: every request is an infrastructure error.

Wired in when live sandboxing was asked for but the engine did not answer, so each trial
that reaches tier 2 ends as ``error`` (kept out of pass rates), never as ``fail``.
"""

from __future__ import annotations

from migration_evals.core.errors import SandboxError
from migration_evals.core.ports import ImageConfig, ImageRef, SandboxRequest, SandboxResult

__all__ = ["UnavailableSandbox"]


class UnavailableSandbox:
    identity = "sandbox:unavailable"

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def resolve(self, image: str) -> ImageRef:
        raise SandboxError(self.reason)

    def has_cache(self, cache: str) -> bool:
        return False

    @property
    def runs_live(self) -> bool:
        return False  # every run is refused at once

    def run(self, request: SandboxRequest) -> SandboxResult:
        raise SandboxError(self.reason)

    def inspect(self, image: str) -> ImageConfig:
        raise SandboxError(self.reason)
