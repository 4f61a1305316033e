"""What a Go module's build adds to the environment: the habits of the Go release its
go.mod names."""

from __future__ import annotations

import re
from collections.abc import Callable

from migration_evals.oracles.ecosystems.go.projects import GO
from migration_evals.oracles.projects import Project

__all__ = ["go_build_env"]

_GO_DIRECTIVE = re.compile(rb"^go\s+(\d+)\.(\d+)", re.MULTILINE)
_READ_ONLY_SINCE = (1, 16)  # the first Go release whose builds leave go.mod as it is
# The image's own GOFLAGS (specs/images/go.Dockerfile), which a request's replaces.
_IMAGE_GOFLAGS = "-buildvcs=false"


def go_build_env(project: Project, read: Callable[[str], bytes | None]) -> dict[str, str]:
    """What a Go module's build adds to the environment in one tree (``read`` reads its
    files): ``-mod=mod`` where its ``go.mod`` predates read-only builds and it vendors
    nothing (a vendor folder is what such a module builds from instead)."""
    if project.system != GO:
        return {}
    folder = f"{project.root}/" if project.root else ""
    module = read(f"{folder}go.mod")
    if module is None or read(f"{folder}vendor/modules.txt") is not None:
        return {}
    found = _GO_DIRECTIVE.search(module)
    # No go directive at all: the go command reads that as Go 1.16's predecessors did.
    release = (int(found[1]), int(found[2])) if found else (1, 11)
    if release >= _READ_ONLY_SINCE:
        return {}
    return {"GOFLAGS": f"{_IMAGE_GOFLAGS} -mod=mod"}
