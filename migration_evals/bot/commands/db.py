"""``migration-evals db upgrade|status``: the database schema and its migrations.

A SQLite database is upgraded by any command that opens it; a server database
(PostgreSQL) only by ``db upgrade``, run once per release before the servers start, which
every other command otherwise refuses to open while it is behind.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from migration_evals.bot.commands.options import settings_from_args
from migration_evals.bot.exits import ExitStatus
from migration_evals.bot.heartbeat import reap_and_note
from migration_evals.core.migrations import SchemaState, Standing
from migration_evals.core.store import Store


def upgrade(args: argparse.Namespace) -> int:
    store = Store.attach(settings_from_args(args).db_url)
    try:
        before = store.db.upgrade_schema()
        after = store.db.schema_state()
    finally:
        store.close()
    if args.json:
        _print_json({"database": store.db.display_url, "before": _doc(before), **_doc(after)})
    elif before.standing is Standing.CURRENT:
        print(f"{store.db.display_url}: already at schema revision {after.revision}")
    else:
        url = store.db.display_url
        print(f"{url}: upgraded to schema revision {after.revision} (it {_was(before)})")
    return ExitStatus.OK


def status(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    store = Store.attach(settings.db_url)
    try:
        found = store.db.schema_state()
        if found.standing is Standing.CURRENT:  # an older schema has no heartbeats to read
            reap_and_note(store, settings)
    finally:
        store.close()
    if args.json:
        _print_json({"database": store.db.display_url, **_doc(found)})
    else:
        print(f"{store.db.display_url}: {found.standing.value}; it {found.describe()}")
    if found.standing is Standing.CURRENT:
        return ExitStatus.OK
    return ExitStatus.SCHEMA_BEHIND if found.upgradable else ExitStatus.ERROR


def _was(state: SchemaState) -> str:
    return state.describe().split(";")[0]


def _doc(state: SchemaState) -> dict[str, Any]:
    return {"revision": state.revision, "head": state.head, "standing": state.standing.value}


def _print_json(document: dict[str, Any]) -> None:
    json.dump(document, sys.stdout, indent=2)
    sys.stdout.write("\n")
