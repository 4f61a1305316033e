"""Which Go test files a patch can change the meanings of, and what their names mean on
each side (``migration_evals.oracles.test_meanings``): the built test files of every
package (directory) holding a Go file it changed; their names resolved by
``migration_evals.oracles.ecosystems.go.bindings``."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

from migration_evals.oracles.bindings import Resolved, Side
from migration_evals.oracles.ecosystems.go.bindings import go_references
from migration_evals.oracles.ecosystems.go.test_settings import builds_on

__all__ = ["GoTestBindings"]

_GOOS, _GOARCH = "linux", "amd64"  # the sandbox's platform


class GoTestBindings:
    """Both sides of a patch, as Go's scope rules read them."""

    def __init__(self, base: Side, patched: Side) -> None:
        self.base, self.patched = base, patched

    def candidates(self, changed: Iterable[str]) -> set[str]:
        return _go_candidates(changed, self.patched)

    def resolved(self, path: str, patched: bool) -> Resolved | None:
        found = go_references(self.patched if patched else self.base, path)
        if found is None:
            return None
        file, references = found
        declarations = {key: [node] for key, node in file.declarations.items()}
        return file.import_paths(), declarations, references


def _go_candidates(changed: Iterable[str], side: Side) -> set[str]:
    """The built Go test files of every directory holding a Go file the patch changed."""
    found = set()
    for directory in {posixpath.dirname(path) for path in changed if path.endswith(".go")}:
        for path in side.in_dir(directory):
            content = side.read(path) if path.endswith("_test.go") and side.is_test(path) else None
            if content is not None and builds_on(path, content, _GOOS, _GOARCH):
                found.add(path)
    return found
