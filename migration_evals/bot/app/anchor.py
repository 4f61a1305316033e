"""The gold anchor's "this eval is broken" status, as the check runs show it.

The gate declares the evaluation broken while funnel verdicts do not correlate with real
outcomes (phi below its floor) or there are too few labelled pull requests to tell; while
it is, every check run says so and concludes neutral rather than success or failure.
"""

from __future__ import annotations

from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.gate.anchor import anchor_status

__all__ = ["broken_anchor"]


def broken_anchor(store: Store, specs: SpecSet) -> str | None:
    """Why the eval is currently declared broken, or None when it is anchored."""
    status = anchor_status(store.db, specs)
    return status.reason if status.broken else None
