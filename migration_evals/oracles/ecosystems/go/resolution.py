"""What a Go resolution run means: the build list it printed after ``== modules ==``,
the module versions the proxy did not have and the go command named, the ``go version``
it printed, and the one module cache every project shares (content-addressed and safe to
share)."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from migration_evals.core.ports import SandboxResult
from migration_evals.oracles.projects import Project

__all__ = ["GO_CACHE", "MODULES_MARKER", "RESOLUTION", "GoResolution", "go_module_of"]

GO_CACHE = "go"  # the shared module cache resolution runs fill
MODULES_MARKER = "== modules =="
_GO_VERSION = re.compile(r"^go version (go\S+)", re.MULTILINE)


def _decode_module(escaped: str) -> str:
    """Undo the module proxy's case encoding (``!a`` for ``A``)."""
    return re.sub(r"!([a-z])", lambda m: m.group(1).upper(), escaped)


def go_module_of(path: str) -> str | None:
    """``module@version`` of a module proxy path (``…/@v/v1.2.3.info|mod|zip``)."""
    if path.startswith("sumdb/") or "/@v/" not in path:
        return None
    module, _, rest = path.partition("/@v/")
    version, extension = posixpath.splitext(rest)
    if extension not in (".info", ".mod", ".zip"):
        return None
    return f"{_decode_module(module)}@{_decode_module(version)}"


@dataclass(frozen=True, slots=True)
class GoResolution:
    """Go's ``ResolutionRules`` (``migration_evals.oracles.deps``)."""

    fresh_cache: bool = False  # one module cache, shared

    def cache(self, project: Project, tree_hash: str) -> str:
        return GO_CACHE

    def resolved(self, result: SandboxResult) -> list[str]:
        _, marker, listing = result.output.partition(MODULES_MARKER)
        if not marker:
            return []
        return sorted({line.strip() for line in listing.splitlines() if line.strip()})

    def missing(self, result: SandboxResult) -> list[str]:
        refused = [f for f in result.fetches if f.source == "upstream" and f.status in (404, 410)]
        modules = {go_module_of(f.path) for f in refused}
        return sorted(m for m in modules if m is not None and m.split("@")[0] in result.output)

    def toolchain(self, output: str) -> tuple[tuple[str, str], ...]:
        found = _GO_VERSION.search(output)
        return (("go", found.group(1)),) if found else ()


RESOLUTION = GoResolution()
