"""Moving files in and out of a run's container through the engine's archive API: the
tree copied in, and the reports and class-file heads the request names read back from
the frozen workspace as a bounded tar stream (``migration_evals.oracles.sandbox.archives``)."""

from __future__ import annotations

import tarfile
from typing import Any

import docker.errors

from migration_evals.core.errors import SandboxError
from migration_evals.core.ports import SANDBOX_WORKDIR, SandboxRequest
from migration_evals.oracles.sandbox.archives import WorkspaceReading, read_workspace
from migration_evals.oracles.sandbox.engine import (
    ENGINE_ERRORS,
    EngineSetup,
    freeze,
    ids,
    relative,
)

__all__ = ["FileTransfer"]


class FileTransfer:
    """The tree in, the named reports out."""

    def __init__(self, setup: EngineSetup) -> None:
        self._setup = setup

    def copy_in(self, container: Any, request: SandboxRequest) -> None:
        assert request.tree is not None
        uid, gid = ids(self._setup.user)
        with request.tree(uid, gid, "") as archive:
            if not container.put_archive(SANDBOX_WORKDIR, archive):
                raise SandboxError("the engine refused the tree")

    def read_back(self, container: Any, request: SandboxRequest) -> WorkspaceReading:
        """The reports and class-file heads the request names, from the frozen workspace."""
        if not request.collect and not request.inspect:
            return WorkspaceReading()
        workdir = relative(request.workdir)
        path = f"{SANDBOX_WORKDIR}/{workdir}" if workdir else SANDBOX_WORKDIR
        limits = self._setup.limits
        cap = limits.output_limit_bytes
        try:
            if not freeze(container):
                return WorkspaceReading()  # gone with its container: nothing to read
            chunks, _stat = container.get_archive(path)
            return read_workspace(
                chunks,
                collect=request.collect,
                inspect=request.inspect,
                per_file=cap,
                total=4 * cap,
                max_depth=limits.workspace_depth,
            )
        except docker.errors.NotFound:
            return WorkspaceReading()  # the folder was never made (the run stopped early)
        except (tarfile.TarError, *ENGINE_ERRORS) as exc:
            raise SandboxError(f"cannot read the sandbox's workspace back: {exc}") from exc
