"""Adapters of the sandbox port: replaying and recording (here), live Docker (``docker``)."""

from oracles.sandbox.cassettes import RecordingSandbox, ReplayingSandbox

__all__ = ["RecordingSandbox", "ReplayingSandbox"]
