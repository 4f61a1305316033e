"""``migration-evals ledger verify`` and ``ledger checkpoint``: check the ledger's chain
against its signed checkpoints, and sign a new checkpoint (or print the public key)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from bot.commands.options import settings_from_args
from bot.exits import ExitStatus
from bot.heartbeat import reap_and_note
from bot.ledger_keys import ledger_keys, open_store
from core.errors import ConfigError
from core.integrity import LedgerCheck


def check_document(check: LedgerCheck) -> dict[str, Any]:
    return {
        "ok": check.ok,
        "rows": check.rows,
        "head": check.head_hash,
        "key": check.key_id,
        "checkpoint": check.checkpoint.to_dict() if check.checkpoint else None,
        "problems": list(check.problems),
        "notes": list(check.notes),
    }


def _print_check(check: LedgerCheck) -> None:
    for note in check.notes:
        if not note.startswith("unkeyed"):  # the warning on opening the store said so
            print(f"note: {note}", file=sys.stderr)
    if check.ok:
        signed = f", {check.checkpoint.describe()}" if check.checkpoint else ""
        print(f"ok: {check.rows} row(s), head {check.head_hash}, key {check.key_id}{signed}")
        return
    print(f"TAMPERED: {len(check.problems)} problem(s) in {check.rows} row(s)", file=sys.stderr)
    for problem in check.problems:
        print(f"  {problem}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    store = open_store(settings, warn=True)
    try:
        reap_and_note(store, settings)
        check = store.verify_ledger()
    finally:
        store.close()
    if args.json:
        json.dump(check_document(check), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print_check(check)
    return ExitStatus.OK if check.ok else ExitStatus.LEDGER_TAMPERED


def _public_key(args: argparse.Namespace) -> int:
    checker = ledger_keys(settings_from_args(args)).checker
    if checker is None:
        raise ConfigError(
            "no checkpoint key: set MIGRATION_EVALS_CHECKPOINT_KEY (or "
            "MIGRATION_EVALS_CHECKPOINT_PUBLIC_KEY) to a PEM file"
        )
    sys.stdout.write(checker.public_pem())
    return ExitStatus.OK


def run_checkpoint(args: argparse.Namespace) -> int:
    if args.public_key:
        return _public_key(args)
    store = open_store(settings_from_args(args), warn=True)
    try:
        check = store.verify_ledger()
        if not check.ok:  # never sign over a ledger that does not verify
            _print_check(check)
            print("migration-evals: no checkpoint written", file=sys.stderr)
            return ExitStatus.LEDGER_TAMPERED
        signed = store.checkpoint()
    finally:
        store.close()
    if args.json:
        json.dump({**signed.to_dict(), "number": signed.number}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(f"{signed.describe()}: row {signed.ledger_seq} {signed.ledger_hash}")
    return ExitStatus.OK
