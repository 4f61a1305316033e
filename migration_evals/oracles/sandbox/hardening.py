"""Every isolation setting of a sandbox container, in one place.

A sandboxed command is untrusted code (an agent's patch and whatever its tests do), so a
container gets: no network (``none``: only ``lo``), a read-only root filesystem, a ``/tmp``
tmpfs capped in size and inodes and mounted ``exec`` (Go runs its test binaries from
there), no capabilities, ``no-new-privileges``, a pids limit (fork bombs), a memory limit
with no swap beyond it, a CFS CPU quota, an unprivileged user, a per-file size limit, and
an environment the harness writes from scratch (never the host's, so no keys or tokens).
The tree is copied in through the engine onto a volume of its own, a tmpfs with a size and
an inode limit the kernel enforces, so no host folder is mounted but the harness's own
dependency caches. Labels let a later start-up find what a crash left behind.

Starting a built image as it would run (the image contract of Dockerfile recipes) keeps
the image's own user, entrypoint, environment and a writable (disposable) root
filesystem, since that is what is being checked, with the same network, resource and
privilege limits; see ``start_options``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from docker.types import LogConfig, Mount, Ulimit

from migration_evals.core.ports import SANDBOX_WORKDIR
from migration_evals.core.spec_types import SandboxSpec

__all__ = [
    "DEADLINE_LABEL",
    "OWNER_LABEL",
    "SANDBOX_LABEL",
    "UNPRIVILEGED_USER",
    "SandboxLimits",
    "build_limits",
    "container_options",
    "start_options",
]

SANDBOX_LABEL = "org.migration-evals.sandbox"
OWNER_LABEL = "org.migration-evals.owner"  # host:pid of the harness that started it
DEADLINE_LABEL = "org.migration-evals.deadline"  # epoch seconds after which it is stale
UNPRIVILEGED_USER = "65534:65534"  # nobody:nogroup on Debian; needs no passwd entry
_CPU_PERIOD_US = 100_000
_TMP = "/tmp"  # noqa: S108 - the container's own private tmpfs, not the host's /tmp
_MB = 1024 * 1024


_DEFAULT_INODES = 500_000
_DEFAULT_DEPTH = 1_000


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """Resource limits of one sandboxed run (the oracle spec's ``sandbox`` section)."""

    memory_mb: int = 2048
    cpus: float = 1.0
    pids_limit: int = 512
    tmpfs_mb: int = 1024
    output_limit_bytes: int = 1_000_000
    workspace_mb: int = 1024
    workspace_inodes: int = _DEFAULT_INODES
    # Folders below the workspace the harness reads back; a deeper tree is over its limits.
    workspace_depth: int = _DEFAULT_DEPTH

    @classmethod
    def from_spec(cls, spec: SandboxSpec) -> SandboxLimits:
        return cls(
            memory_mb=spec.memory_mb,
            cpus=float(spec.cpus),
            pids_limit=spec.pids_limit,
            tmpfs_mb=spec.tmpfs_mb,
            output_limit_bytes=spec.output_limit_bytes,
            workspace_mb=spec.workspace_mb,
            workspace_inodes=spec.workspace_inodes,
            workspace_depth=spec.workspace_depth,
        )


def workspace_volume_options(limits: SandboxLimits, user: str) -> dict[str, str]:
    """``driver_opts`` of a run's workspace volume: a tmpfs whose size and inode count the
    kernel caps (folders, links and empty files count, not only bytes), owned by the run's
    user."""
    uid, gid = user.split(":")
    size = f"size={limits.workspace_mb}m,nr_inodes={limits.workspace_inodes}"
    return {"type": "tmpfs", "device": "tmpfs", "o": f"{size},mode=0755,uid={uid},gid={gid}"}


def container_options(
    limits: SandboxLimits,
    *,
    workspace: str,
    user: str,
    labels: Mapping[str, str],
    workdir: str = "",
    extra_mounts: Sequence[Mount] = (),
    environment: Mapping[str, str] | None = None,
    network: str | None = None,
) -> dict[str, Any]:
    """Keyword arguments for ``containers.create`` that apply every hardening setting.

    ``workspace`` names the run's workspace volume. ``extra_mounts`` are the harness's own:
    dependency caches (read-only to builds) and, for resolution runs, the registry gate's
    socket. ``environment`` adds to the scratch
    environment; it cannot replace the harness's own variables.
    """
    # The workspace's pages are charged to the container's memory: it gets room for both.
    memory = f"{limits.memory_mb + limits.workspace_mb}m"
    file_size = limits.workspace_mb * _MB
    return {
        # Mode "none": a network namespace of its own with only loopback. Networking is
        # not also disabled: the engine would then skip the network sandbox that writes
        # /etc/hosts, and "localhost" would not resolve, so every test that serves and
        # connects to localhost would fail here while it passes everywhere else (about
        # 150 ms per container, the price of building that sandbox).
        "network_mode": network or "none",
        "read_only": True,
        # /tmp's inodes are capped like the workspace's: empty files cost no bytes.
        "tmpfs": {
            _TMP: f"rw,exec,nosuid,nodev,size={limits.tmpfs_mb}m,"
            f"nr_inodes={limits.workspace_inodes},mode=1777"
        },
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
        "mounts": [
            Mount(target=SANDBOX_WORKDIR, source=workspace, type="volume"),
            *extra_mounts,
        ],
        "working_dir": f"{SANDBOX_WORKDIR}/{workdir}" if workdir else SANDBOX_WORKDIR,
        "environment": {**(environment or {}), **_scratch_environment(limits)},
        "labels": dict(labels),
        # Output is read live through attach and capped there; nothing is logged to the
        # engine's disk, where a chatty run could fill it.
        "log_config": LogConfig(type="none"),
        "stdin_open": False,
        "tty": False,
    }


def _scratch_environment(limits: SandboxLimits) -> dict[str, str]:
    return {
        "HOME": _TMP,
        "TMPDIR": _TMP,
        "LANG": "C.UTF-8",
        # Go before 1.25 sizes its scheduler by the processors it sees, not the CPU quota:
        # on one CPU's quota, two of them made go test's binaries a third slower (the
        # throttled runtime's collector and spinning threads). The JVM reads the quota.
        "GOMAXPROCS": str(max(1, math.ceil(limits.cpus))),
    }


def build_limits(limits: SandboxLimits) -> dict[str, Any]:
    """``container_limits`` for the engine's build containers (RUN steps of a Dockerfile).

    The classic builder accepts only memory limits here; builds also run with network
    ``none`` and under the same wall-clock timeout, enforced by the adapter.
    """
    memory = limits.memory_mb * _MB
    return {"memory": memory, "memswap": memory}


# Docker's default capabilities, less the ones no service start needs (raw sockets, device
# nodes, chroot, audit, file capabilities): enough for an entrypoint running as root to
# hand its files and processes over to a service user (nginx, gosu, su-exec).
START_CAPABILITIES = ("CHOWN", "DAC_OVERRIDE", "FOWNER", "KILL", "SETGID", "SETUID")


def start_options(limits: SandboxLimits, *, labels: Mapping[str, str]) -> dict[str, Any]:
    """Keyword arguments for ``containers.create`` that start an image as it would run.

    Unlike ``container_options``, nothing of the image is overridden: not its user, working
    directory or environment, and its root filesystem is writable (the container is
    removed afterwards), because how the image starts is what is checked. No tree is
    mounted. Network, memory, CPU, pids, file size and privileges are limited as always.
    """
    memory = f"{limits.memory_mb}m"
    file_size = limits.workspace_mb * _MB
    return {
        "network_mode": "none",  # loopback only, with /etc/hosts (see container_options)
        "cap_drop": ["ALL"],
        "cap_add": list(START_CAPABILITIES),
        "security_opt": ["no-new-privileges"],
        "pids_limit": limits.pids_limit,
        "mem_limit": memory,
        "memswap_limit": memory,
        "cpu_period": _CPU_PERIOD_US,
        "cpu_quota": int(limits.cpus * _CPU_PERIOD_US),
        "ipc_mode": "private",
        "ulimits": [
            Ulimit(name="fsize", soft=file_size, hard=file_size),
            Ulimit(name="core", soft=0, hard=0),
        ],
        "labels": dict(labels),
        "log_config": LogConfig(type="none"),
        "stdin_open": False,
        "tty": False,
    }
