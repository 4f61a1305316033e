"""A run's budget kept in the database, shared by every worker grading the run.

The embedded runner's ``Budget`` lives in one process; with the Celery executor the
trials of one run are graded on many machines, so the limit and what has been spent are
one row, ``run_budgets``, and reserving is a single conditional update: no two workers
can both take the last dollar. Once a reservation fails the run is exhausted: trials not
started yet are not started, tiers not reached are ``inconclusive``, as embedded.
A trial put back because an outside API was unavailable gives back the reservation of
the tier that could not run (``release``), so no attempt is paid for twice.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from migration_evals.core.schema import budgets_table
from migration_evals.core.store import Store
from migration_evals.oracles.cascade import Budget

__all__ = ["SharedBudget", "open_budget"]

_EPSILON = 1e-12  # the embedded budget's tolerance for floating-point sums


def open_budget(conn: Connection, run_id: str, limit_usd: float) -> None:
    """Give ``run_id`` a budget, inside the transaction that creates the run."""
    conn.execute(
        budgets_table.insert().values(
            run_id=run_id, limit_usd=limit_usd, spent_usd=0.0, exhausted=False
        )
    )


class SharedBudget(Budget):
    """``Budget`` whose limit and spending are the run's row, for every worker at once."""

    def __init__(self, store: Store, run_id: str) -> None:
        super().__init__(None)
        self.store = store
        self.run_id = run_id
        budgets = budgets_table.c
        with store.db.reading() as conn:
            row = conn.execute(
                sa.select(budgets.limit_usd, budgets.spent_usd, budgets.exhausted).where(
                    budgets.run_id == run_id
                )
            ).one()
        self.limit_usd = float(row.limit_usd)
        self.spent_usd = float(row.spent_usd)
        self.exhausted = bool(row.exhausted)

    def allows(self, amount: float) -> bool:
        """Whether ``amount`` fits what the run's row says is left now."""
        budgets = budgets_table.c
        with self.store.db.reading() as conn:
            row = conn.execute(
                sa.select(budgets.limit_usd, budgets.spent_usd).where(budgets.run_id == self.run_id)
            ).one()
        fits = float(row.spent_usd) + amount <= float(row.limit_usd) + _EPSILON
        if not fits:
            with self.store.db.engine.begin() as conn:
                mine = budgets.run_id == self.run_id
                conn.execute(budgets_table.update().where(mine).values(exhausted=True))
            with self._lock:
                self.exhausted = True
        return fits

    def reserve(self, amount: float) -> bool:
        budgets = budgets_table.c
        mine = budgets.run_id == self.run_id
        with self.store.db.engine.begin() as conn:
            taken = conn.execute(
                budgets_table.update()
                .where(mine, budgets.spent_usd + amount <= budgets.limit_usd + _EPSILON)
                .values(spent_usd=budgets.spent_usd + amount)
            ).rowcount
            if not taken:
                conn.execute(budgets_table.update().where(mine).values(exhausted=True))
        with self._lock:
            if taken:
                self.spent_usd += amount
            else:
                self.exhausted = True
        return bool(taken)

    def release(self, amount: float) -> None:
        budgets = budgets_table.c
        spent = sa.case((budgets.spent_usd > amount, budgets.spent_usd - amount), else_=0.0)
        with self.store.db.engine.begin() as conn:
            mine = budgets.run_id == self.run_id
            conn.execute(budgets_table.update().where(mine).values(spent_usd=spent))
        with self._lock:
            self.spent_usd = max(0.0, self.spent_usd - amount)

    def charge(self, amount: float) -> None:
        budgets = budgets_table.c
        mine = budgets.run_id == self.run_id
        with self.store.db.engine.begin() as conn:
            conn.execute(
                budgets_table.update().where(mine).values(spent_usd=budgets.spent_usd + amount)
            )
            over = conn.execute(
                sa.select(budgets.spent_usd > budgets.limit_usd + _EPSILON).where(mine)
            ).scalar()
            if over:
                conn.execute(budgets_table.update().where(mine).values(exhausted=True))
        with self._lock:
            self.spent_usd += amount
            self.exhausted = self.exhausted or bool(over)

    @staticmethod
    def is_exhausted(store: Store, run_id: str) -> bool:
        """Whether ``run_id`` has a budget and ran out of it."""
        with store.db.reading() as conn:
            exhausted = conn.execute(
                sa.select(budgets_table.c.exhausted).where(budgets_table.c.run_id == run_id)
            ).scalar()
        return bool(exhausted)
