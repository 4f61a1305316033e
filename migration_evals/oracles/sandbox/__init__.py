"""Adapters of the sandbox port: replaying and recording (``cassettes``), live Docker
(``docker``), and the stand-in for an engine that cannot be reached (``unavailable``)."""

from migration_evals.oracles.sandbox.cassettes import RecordingSandbox, ReplayingSandbox
from migration_evals.oracles.sandbox.docker import DockerSandbox
from migration_evals.oracles.sandbox.hardening import SandboxLimits
from migration_evals.oracles.sandbox.unavailable import UnavailableSandbox

__all__ = [
    "DockerSandbox",
    "RecordingSandbox",
    "ReplayingSandbox",
    "SandboxLimits",
    "UnavailableSandbox",
]
