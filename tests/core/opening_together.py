"""What each process of a test opening one new SQLite ledger from several processes runs.

A module of its own, so that the processes' fork server imports the store and not the test
module (the command line, Alembic's autogenerate, pytest), and the race starts sooner.
"""

from __future__ import annotations

from threading import Barrier

from migration_evals.core.store import Store

__all__ = ["open_store", "wait_with"]

_together: Barrier | None = None


def wait_with(together: Barrier) -> None:
    """A pool's initializer: the barrier every process waits at before opening."""
    global _together  # noqa: PLW0603 - one per process, set before any task runs
    _together = together


def open_store(url: str) -> int:
    """Wait until every process has started, then open (and so upgrade) the store; the
    number of ledger rows it finds."""
    assert _together is not None, "the pool was started without wait_with"
    _together.wait(timeout=60)
    store = Store.open(url)
    rows = store.ledger.head()[0]
    store.close()
    return rows
