"""The store: the ledger and the tables beside it, as parts with one job each over one engine.

``Store.open`` builds every part from one engine (``Store.over``, the one construction);
callers take the part they use:

- ``db`` (``migration_evals.core.database``): the engine, read connections, the schema's
  standing and its migrations;
- ``ledger`` (``migration_evals.core.ledger``): the append-only, hash-chained ledger of
  envelopes, the record chain beside it, verification and checkpoints;
- ``runs`` (``migration_evals.core.runs``): runs, their status and liveness;
- ``trials`` (``migration_evals.core.trial_queries``): envelopes reused by cache key, one
  trial's rows;
- ``snapshots`` (``migration_evals.core.snapshots``): the gate's signed snapshot;
- ``artifacts`` (``migration_evals.core.artifacts``): a trial's patch and the whole output of
  its sandboxed commands, kept beside the ledger (a SQLite file's in a folder beside it,
  another database's in its ``artifacts`` table); envelopes name them by digest.

``Store.open`` upgrades a SQLite database itself and refuses a server database that is
behind until ``migration-evals db upgrade`` has run (``SchemaPolicy``).
"""

from __future__ import annotations

from dataclasses import dataclass

from migration_evals.core.artifacts import ArtifactStore, artifacts_for
from migration_evals.core.chain import GENESIS_HASH, row_hash
from migration_evals.core.database import Database, SchemaPolicy, make_engine
from migration_evals.core.integrity import LedgerCheck, LedgerKeys
from migration_evals.core.ledger import Ledger, LedgerEntry
from migration_evals.core.runs import Runs
from migration_evals.core.schema import ledger_table
from migration_evals.core.snapshots import GateSnapshots
from migration_evals.core.trial_queries import StoredEnvelope, TrialQueries, TrialRef

__all__ = [
    "GENESIS_HASH",
    "LedgerCheck",
    "LedgerEntry",
    "LedgerKeys",
    "SchemaPolicy",
    "Store",
    "StoredEnvelope",
    "TrialRef",
    "ledger_table",
    "row_hash",
]


@dataclass(frozen=True, slots=True)
class Store:
    """The parts of one database. Create with ``Store.open`` (or ``Store.attach``)."""

    db: Database
    keys: LedgerKeys
    ledger: Ledger
    runs: Runs
    trials: TrialQueries
    snapshots: GateSnapshots
    artifacts: ArtifactStore

    @classmethod
    def over(cls, db: Database, keys: LedgerKeys | None = None) -> Store:
        """Every part over ``db``'s one engine: the one place the parts are built."""
        keys = keys or LedgerKeys()
        return cls(
            db=db,
            keys=keys,
            ledger=Ledger(db, keys),
            runs=Runs(db),
            trials=TrialQueries(db),
            snapshots=GateSnapshots(db),
            artifacts=artifacts_for(db.engine),
        )

    @classmethod
    def open(
        cls,
        url: str,
        *,
        pool_size: int | None = None,
        schema: SchemaPolicy | None = None,
        keys: LedgerKeys | None = None,
    ) -> Store:
        """Connect and make sure the schema is this release's (``migration_evals.core.migrations``).

        ``schema``: by default a SQLite database is upgraded in place and any other is
        refused while it is behind, so that several servers never race on DDL (``db
        upgrade`` upgrades it). ``pool_size``: connections kept for a server database (as
        many again on demand). ``keys``: the ledger and checkpoint keys (default: none, an
        unkeyed ledger).
        """
        store = cls.over(Database(make_engine(url, pool_size)), keys)
        try:
            store.db.prepare_schema(schema)
        except BaseException:
            store.close()
            raise
        return store

    @classmethod
    def attach(cls, url: str, keys: LedgerKeys | None = None) -> Store:
        """Connect to an existing ledger without creating or checking the schema.

        For readers working beside a store opened elsewhere, e.g. the gate's scan workers.
        """
        return cls.over(Database(make_engine(url)), keys)

    def close(self) -> None:
        self.trials.close()
        self.db.close()
