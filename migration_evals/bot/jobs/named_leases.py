"""Named, expiring locks in ``bot_leases`` (one scheduler, one dispatcher, one reply among
many processes)."""

from __future__ import annotations

import sqlalchemy as sa

from migration_evals.bot.jobs.table import GUARD, JobTable
from migration_evals.core.schema import leases_table

__all__ = ["NamedLeases"]


class NamedLeases:
    """Take, renew and release a lease by name; one holder at a time until it expires."""

    def __init__(self, table: JobTable) -> None:
        self.table = table

    def hold_lease(self, name: str, holder: str, ttl_s: float) -> bool:
        """Take or renew the named lease; True while ``holder`` has it."""
        now = self.table.clock()
        leases = leases_table.c
        with self.table.store.db.engine.begin() as conn:
            conn.execute(GUARD)
            taken = conn.execute(
                leases_table.update()
                .where(leases.name == name)
                .where(sa.or_(leases.holder == holder, leases.expires_at <= now))
                .values(holder=holder, expires_at=now + ttl_s)
            ).rowcount
            if taken:
                return True
            if conn.execute(sa.select(leases.name).where(leases.name == name)).first():
                return False
            conn.execute(
                leases_table.insert().values(name=name, holder=holder, expires_at=now + ttl_s)
            )
            return True

    def release_lease(self, name: str, holder: str) -> None:
        with self.table.store.db.engine.begin() as conn:
            conn.execute(
                leases_table.delete()
                .where(leases_table.c.name == name)
                .where(leases_table.c.holder == holder)
            )
