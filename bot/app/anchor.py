"""Hook for the gold anchor's "this eval is broken" status (the gate package, issue 5).

The check-run summary shows the status this returns; ``None`` means "not broken" or
"not known". Until ``gate.anchor`` lands there is nothing to ask, so this says ``None``.
Wiring it in is this one function body: return the gate's broken-anchor message for
``store`` (for example the correlation and its floor), or ``None`` when healthy.
"""

from __future__ import annotations

from core.store import Store

__all__ = ["broken_anchor"]


def broken_anchor(store: Store) -> str | None:
    """Why the eval is currently declared broken, or None."""
    return None
