"""Whether a running run still has a process behind it.

The process grading a run moves the run's heartbeat forward every few seconds
(``migration_evals.bot.heartbeat``) and holds it for a lease of a few heartbeats. A run whose
heartbeat is older than its lease has lost its process (killed, its machine gone): nothing will
ever finish it, so it is marked ``interrupted`` and its trials are kept out of the gate
until ``run --resume`` completes it. On the machine that ran it, a process id that no
longer exists says the same at once, without waiting for the lease.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

__all__ = [
    "DEFAULT_HEARTBEAT_S",
    "LEASE_HEARTBEATS",
    "Holder",
    "RunState",
    "StaleRun",
    "gone_reason",
    "pid_alive",
]

DEFAULT_HEARTBEAT_S = 10.0
# A lease outlasts this many heartbeats: one late beat (a busy machine) is not a death.
LEASE_HEARTBEATS = 3


class RunState(StrEnum):
    """The states of a run that are not an outcome of grading (``RunStatus`` holds those)."""

    RUNNING = "running"
    INTERRUPTED = "interrupted"


@dataclass(frozen=True, slots=True)
class Holder:
    """The process holding a run: where it runs and how long its lease lasts."""

    pid: int
    host: str
    lease_s: float

    @classmethod
    def this_process(cls, heartbeat_s: float) -> Holder:
        return cls(os.getpid(), socket.gethostname(), heartbeat_s * LEASE_HEARTBEATS)


@dataclass(frozen=True, slots=True)
class StaleRun:
    """A run marked interrupted, and why."""

    run_id: str
    reason: str


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists on this machine (signal 0 only asks)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def gone_reason(
    last_beat: datetime,
    holder: Holder | None,
    now: datetime,
    *,
    here: str,
    alive: Callable[[int], bool] = pid_alive,
    default_lease_s: float = DEFAULT_HEARTBEAT_S * LEASE_HEARTBEATS,
) -> str | None:
    """Why a running run's process is gone, or None while it may still be there.

    ``holder`` is None for runs started before heartbeats existed: their start time is
    their last beat and the default lease applies.
    """
    lease_s = holder.lease_s if holder is not None else default_lease_s
    silent = (now - last_beat).total_seconds()
    if holder is not None and holder.host == here and not alive(holder.pid):
        return f"its process {holder.pid} on {here} is gone"
    if silent > lease_s:
        return f"no heartbeat for {silent:.0f} s (its lease is {lease_s:.0f} s)"
    return None
