"""``migration-evals gold export`` and ``gold import``: gold anchors a team can share.

Export writes the labels graded here, the envelopes behind their verdicts, the stamps and
the anchor statistic as one document, signed with the checkpoint key when one is set.
Import checks a document (``migration_evals.gate.shared_anchor.check_anchor``) and refuses it, with
``ANCHOR_REFUSED``, when it does not verify or was graded under other specs; otherwise its
labels join the gold table, each naming the anchor it came from, and the gate counts them.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from migration_evals.bot.commands.options import read_json_object, settings_from_args
from migration_evals.bot.exits import ExitStatus
from migration_evals.bot.ledger_keys import ledger_keys, open_store
from migration_evals.core.checkpoints import CheckpointVerifier
from migration_evals.core.gold import GoldRow, gold_rows, upsert_gold
from migration_evals.core.store import Store
from migration_evals.gate.anchor import IMPORTED, anchor_status
from migration_evals.gate.shared_anchor import (
    AnchorCheck,
    build_anchor,
    check_anchor,
    imported_rows,
)
from migration_evals.oracles.ecosystems.registry import load_specs

__all__ = ["run_export", "run_import"]


def _print(document: dict[str, Any]) -> None:
    json.dump(document, sys.stdout, indent=2)
    sys.stdout.write("\n")


def run_export(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    specs = load_specs(settings.specs_dir)
    keys = ledger_keys(settings)
    store = open_store(settings, keys=keys)
    try:
        created = datetime.now(UTC).isoformat(timespec="seconds")
        document = build_anchor(store.db, store.trials, specs, created, keys.signer)
    finally:
        store.close()
    args.out.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    signed = document["signature"]
    said = {
        "out": str(args.out),
        "labels": len(document["labels"]),
        "trials": len(document["trials"]),
        "anchor_digest": document["anchor_digest"],
        "signer": signed["signer"] if signed else None,
        "anchor": document["anchor"],
    }
    if args.json:
        _print(said)
        return ExitStatus.OK
    print(f"exported {said['labels']} gold label(s) and {said['trials']} trial(s) to {args.out}")
    print(f"anchor digest {said['anchor_digest']}; {document['anchor']['reason']}")
    print(f"signed by key {said['signer']}" if signed else "unsigned: no checkpoint key")
    return ExitStatus.OK


def _verifier(args: argparse.Namespace) -> CheckpointVerifier | None:
    if args.public_key:
        return CheckpointVerifier.from_pem(args.public_key)
    return ledger_keys(settings_from_args(args)).checker


def _refusal(path: Path, found: AnchorCheck) -> str:
    if not found.verifies:
        listed = "; ".join(found.problems[:10])
        more = f" and {len(found.problems) - 10} more" if len(found.problems) > 10 else ""
        return f"{path} does not verify ({len(found.problems)} problem(s)): {listed}{more}"
    return (
        f"{path} was graded under other specs: {found.stale} changed since (its stamps are "
        "not the current ones); export it again from a ledger graded under these specs"
    )


def _store_rows(store: Store, rows: list[GoldRow]) -> tuple[int, int]:
    """Write the imported rows; a label this ledger mined itself is kept, not replaced."""
    local = {(r.repo, r.pr_number) for r in gold_rows(store.db) if IMPORTED not in r.evidence}
    kept = [r for r in rows if (r.repo, r.pr_number) in local]
    for row in rows:
        if (row.repo, row.pr_number) not in local:
            upsert_gold(store.ledger, row)
    return len(rows) - len(kept), len(kept)


def run_import(args: argparse.Namespace) -> int:
    document = read_json_object(args.anchor, name="anchor", kind="gold anchor")
    settings = settings_from_args(args)
    specs = load_specs(settings.specs_dir)
    found = check_anchor(document, specs, verifier=_verifier(args))
    for note in found.notes:
        print(f"note: {note}", file=sys.stderr)
    if not found.importable:
        refusal = _refusal(args.anchor, found)
        if args.json:
            _print({"imported": False, "problems": list(found.problems), "stale": found.stale})
        print(f"migration-evals gold import: refused: {refusal}", file=sys.stderr)
        return ExitStatus.ANCHOR_REFUSED
    store = open_store(settings, warn=True)
    try:
        imported, kept = _store_rows(store, imported_rows(document, str(args.anchor)))
        status = anchor_status(store.db, specs)
    finally:
        store.close()
    if args.json:
        _print({"imported": imported, "kept_local": kept, "anchor": status.to_dict()})
        return ExitStatus.OK
    print(f"imported {imported} gold label(s) from {args.anchor}", end="")
    print(f" ({kept} kept: this ledger labels them itself)" if kept else "")
    print(f"gold anchor now: {status.reason}")
    return ExitStatus.OK
