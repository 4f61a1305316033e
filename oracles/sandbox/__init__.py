"""Adapters of the sandbox port: replaying and recording (``cassettes``), live Docker
(``docker``), and the stand-in for an engine that cannot be reached (``unavailable``)."""

from oracles.sandbox.cassettes import RecordingSandbox, ReplayingSandbox
from oracles.sandbox.docker import DockerSandbox
from oracles.sandbox.hardening import SandboxLimits
from oracles.sandbox.unavailable import UnavailableSandbox

__all__ = [
    "DockerSandbox",
    "RecordingSandbox",
    "ReplayingSandbox",
    "SandboxLimits",
    "UnavailableSandbox",
]
