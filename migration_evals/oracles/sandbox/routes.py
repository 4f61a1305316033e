"""What the registry gate does for one route beyond forwarding, as an ecosystem declares
it. Apart from the gate itself (``migration_evals.oracles.sandbox.registry``) so that
declaring a route loads no HTTP machinery."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Route"]


def _never(path: str) -> bool:
    return False


@dataclass(frozen=True, slots=True)
class Route:
    """One route of the gate (``/<name>/<path>``) and what the gate does for it beyond
    forwarding: ``stored`` says which fetched paths are release files kept in the host
    store and served from it after; in offline mode, ``offline_cache`` (a folder below the
    dependency caches, laid out as the registry) answers; with ``dated``, an as-of
    session lists only the versions its metadata had by then."""

    name: str
    stored: Callable[[str], bool] = _never
    offline_cache: str = ""
    dated: bool = False
