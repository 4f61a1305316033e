"""Every isolation setting of a sandbox container, in one place.

A sandboxed command is untrusted code (an agent's patch and whatever its tests do), so a
container gets: no network (``none``: only ``lo``), a read-only root filesystem, a size-capped
``/tmp`` tmpfs mounted ``exec`` (Go runs its test binaries from there), no capabilities,
``no-new-privileges``, a pids limit (fork bombs), a memory limit with no swap beyond it, a
CFS CPU quota, an unprivileged user, a per-file size limit, no host mount other than the
disposable copy of the tree, and an environment the harness writes from scratch (never the
host's, so no keys or tokens). Labels let a later start-up find what a crash left behind.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docker.types import LogConfig, Mount, Ulimit

from core.ports import SANDBOX_WORKDIR

__all__ = [
    "DEADLINE_LABEL",
    "OWNER_LABEL",
    "SANDBOX_LABEL",
    "UNPRIVILEGED_USER",
    "SandboxLimits",
    "build_limits",
    "container_options",
]

SANDBOX_LABEL = "org.migration-evals.sandbox"
OWNER_LABEL = "org.migration-evals.owner"  # host:pid of the harness that started it
DEADLINE_LABEL = "org.migration-evals.deadline"  # epoch seconds after which it is stale
UNPRIVILEGED_USER = "65534:65534"  # nobody:nogroup on Debian; needs no passwd entry
_CPU_PERIOD_US = 100_000
_TMP = "/tmp"  # noqa: S108 - the container's own private tmpfs, not the host's /tmp
_MB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """Resource limits of one sandboxed run (the oracle spec's ``sandbox`` section)."""

    memory_mb: int = 2048
    cpus: float = 1.0
    pids_limit: int = 512
    tmpfs_mb: int = 1024
    output_limit_bytes: int = 1_000_000
    workspace_mb: int = 1024

    @classmethod
    def from_spec(cls, section: Mapping[str, Any]) -> SandboxLimits:
        return cls(
            memory_mb=int(section["memory_mb"]),
            cpus=float(section["cpus"]),
            pids_limit=int(section["pids_limit"]),
            tmpfs_mb=int(section["tmpfs_mb"]),
            output_limit_bytes=int(section["output_limit_bytes"]),
            workspace_mb=int(section["workspace_mb"]),
        )


def container_options(
    limits: SandboxLimits, *, workspace: Path, user: str, labels: Mapping[str, str]
) -> dict[str, Any]:
    """Keyword arguments for ``containers.create`` that apply every hardening setting."""
    memory = f"{limits.memory_mb}m"
    file_size = limits.workspace_mb * _MB
    return {
        "network_mode": "none",
        # With networking disabled as well the engine skips building a network sandbox
        # for mode "none": the container still gets its own namespace with only loopback,
        # and starts about 150 ms sooner.
        "network_disabled": True,
        "read_only": True,
        "tmpfs": {_TMP: f"rw,exec,nosuid,nodev,size={limits.tmpfs_mb}m,mode=1777"},
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "pids_limit": limits.pids_limit,
        # Equal limits: the container may not swap beyond its memory.
        "mem_limit": memory,
        "memswap_limit": memory,
        "cpu_period": _CPU_PERIOD_US,
        "cpu_quota": int(limits.cpus * _CPU_PERIOD_US),
        "user": user,
        "ipc_mode": "private",
        "ulimits": [
            Ulimit(name="fsize", soft=file_size, hard=file_size),
            Ulimit(name="core", soft=0, hard=0),
        ],
        "mounts": [Mount(target=SANDBOX_WORKDIR, source=str(workspace), type="bind")],
        "working_dir": SANDBOX_WORKDIR,
        "environment": {"HOME": _TMP, "TMPDIR": _TMP, "LANG": "C.UTF-8"},
        "labels": dict(labels),
        # Output is read live through attach and capped there; nothing is logged to the
        # engine's disk, where a chatty run could fill it.
        "log_config": LogConfig(type="none"),
        "stdin_open": False,
        "tty": False,
    }


def build_limits(limits: SandboxLimits) -> dict[str, Any]:
    """``container_limits`` for the engine's build containers (RUN steps of a Dockerfile).

    The classic builder accepts only memory limits here; builds also run with network
    ``none`` and under the same wall-clock timeout, enforced by the adapter.
    """
    memory = limits.memory_mb * _MB
    return {"memory": memory, "memswap": memory}
