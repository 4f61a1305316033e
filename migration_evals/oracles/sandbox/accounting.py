"""What a finished run used and what happened to it: the workspace limit it broke and
the special entries it left (measured in its container, ``migration_evals.oracles.sandbox.usage``),
a reading cut short, and the OOM kills and outside kills the engine reports."""

from __future__ import annotations

import time
from typing import Any

from migration_evals.core.errors import SandboxError
from migration_evals.core.ports import SANDBOX_WORKDIR
from migration_evals.oracles.sandbox.archives import WorkspaceReading
from migration_evals.oracles.sandbox.engine import ENGINE_ERRORS, EngineSetup, Finished
from migration_evals.oracles.sandbox.usage import (
    TreeLimits,
    limit_hit,
    measure_command,
    special_entries,
)

__all__ = ["ResourceAccounting"]

_TMP = "/tmp"  # noqa: S108 - the container's own private tmpfs, not the host's /tmp


class ResourceAccounting:
    """A finished run's limits and events, read from its container and the engine."""

    def __init__(self, setup: EngineSetup) -> None:
        self._setup = setup

    def _tree_limits(self) -> TreeLimits:
        limits = self._setup.limits
        return TreeLimits(
            workspace=SANDBOX_WORKDIR,
            tmp=_TMP,
            workspace_mb=limits.workspace_mb,
            workspace_inodes=limits.workspace_inodes,
            tmpfs_mb=limits.tmpfs_mb,
            max_depth=limits.workspace_depth,
        )

    def measure(self, container: Any) -> tuple[str, tuple[str, ...]]:
        """The workspace or /tmp limit the finished run broke, measured in its container,
        and the entries of a special kind it left; empty when none, or when it cannot
        answer any more."""
        tree = self._tree_limits()
        try:
            done = container.exec_run(measure_command(tree), user=self._setup.user)
        except ENGINE_ERRORS:
            return "", ()
        output = done.output.decode("utf-8", "replace")
        return limit_hit(output, tree), special_entries(output)

    def reading_limit(self, reading: WorkspaceReading) -> str:
        """A workspace the harness could not read to the end is over its limits too."""
        if reading.too_deep:
            return f"workspace depth ({self._setup.limits.workspace_depth} folders)"
        if not reading.complete:
            return f"workspace entries ({reading.members - 1})"
        return ""

    def read_events(self, container: Any, since: float, finished: Finished) -> None:
        """OOM kills (the engine reports them on cgroup v1 and v2 alike) and kills the
        harness did not send: the candidate's code cannot signal its container from inside,
        so those are infrastructure."""
        try:
            events = list(
                self._setup.client.events(
                    since=since,
                    until=time.time(),
                    filters={"container": container.id, "event": ["kill", "oom"]},
                    decode=True,
                )
            )
            container.reload()
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot read the sandbox container's events: {exc}") from exc
        state = container.attrs.get("State", {})
        finished.oom_killed = any(e.get("Action") == "oom" for e in events) or bool(
            state.get("OOMKilled", False)
        )
        kills = [e for e in events if e.get("Action") == "kill"]
        if kills and not finished.timed_out:
            signal = kills[0].get("Actor", {}).get("Attributes", {}).get("signal", "?")
            raise SandboxError(f"the sandbox container was killed from outside (signal {signal})")
