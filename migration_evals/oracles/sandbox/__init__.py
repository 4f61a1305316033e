"""Adapters of the sandbox port: replaying and recording (``cassettes``), live Docker
(``docker``), and the stand-in for an engine that cannot be reached (``unavailable``).

The adapters load when first named: a command that only reads the ledger, or a module
that only declares a registry route, does not load the Docker SDK."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_MODULES = {
    "DockerSandbox": "docker",
    "RecordingSandbox": "cassettes",
    "ReplayingSandbox": "cassettes",
    "SandboxLimits": "hardening",
    "UnavailableSandbox": "unavailable",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
