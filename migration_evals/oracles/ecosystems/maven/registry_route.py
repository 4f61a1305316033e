"""Maven's route through the registry gate (``/maven``): release artifacts never change
once published, so the gate keeps what it fetched in its host store and serves repeats
from it (offline too); metadata, snapshots and the resolver's status files are asked
afresh. Maven metadata is dated, so a session as of a base commit's day lists only the
versions published by then."""

from __future__ import annotations

import re

from migration_evals.oracles.sandbox.routes import Route

__all__ = ["ROUTE", "is_release_file"]

_NOT_STORED = re.compile(
    r"(maven-metadata[^/]*\.xml(\.\w+)?|-SNAPSHOT/.*|/resolver-status\.properties)\Z"
)


def is_release_file(path: str) -> bool:
    """Whether a repository path is a file of a published release (never changes)."""
    return not _NOT_STORED.search(path)


ROUTE = Route("maven", stored=is_release_file, dated=True)
