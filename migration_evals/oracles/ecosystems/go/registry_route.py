"""Go's route through the registry gate (``/go``): everything is forwarded to the module
proxy; in offline mode the shared module cache's download folder, a valid module proxy
layout, answers instead."""

from __future__ import annotations

from migration_evals.oracles.ecosystems.go.resolution import GO_CACHE
from migration_evals.oracles.sandbox.routes import Route

__all__ = ["ROUTE"]

ROUTE = Route("go", offline_cache=f"{GO_CACHE}/mod/cache/download")
