"""``migration-evals ledger verify``, ``ledger checkpoint`` and ``ledger witness``: check
the ledger's chain against its signed checkpoints (and a witness kept elsewhere), sign a
new checkpoint (or print the public key), and write one out as a witness."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from migration_evals.bot.commands.options import read_json_object, settings_from_args
from migration_evals.bot.exits import ExitStatus
from migration_evals.bot.heartbeat import reap_and_note
from migration_evals.bot.ledger_keys import ledger_keys, open_store
from migration_evals.core.checkpoints import Checkpoint, witness_document, witness_of
from migration_evals.core.errors import ConfigError
from migration_evals.core.integrity import LedgerCheck
from migration_evals.core.store import Store


def check_document(check: LedgerCheck) -> dict[str, Any]:
    return {
        "ok": check.ok,
        "rows": check.rows,
        "head": check.head_hash,
        "key": check.key_id,
        "checkpoint": check.checkpoint.to_dict() if check.checkpoint else None,
        "witness": check.witness.to_dict() if check.witness else None,
        "problems": list(check.problems),
        "notes": list(check.notes),
    }


def _print_check(check: LedgerCheck) -> None:
    for note in check.notes:
        if not note.startswith("unkeyed"):  # the warning on opening the store said so
            print(f"note: {note}", file=sys.stderr)
    if check.ok:
        signed = f", {check.checkpoint.describe()}" if check.checkpoint else ""
        witness = check.witness
        witnessed = f", agrees with the witness at row {witness.ledger_seq}" if witness else ""
        print(
            f"ok: {check.rows} row(s), head {check.head_hash}, key {check.key_id}"
            f"{signed}{witnessed}"
        )
        return
    print(f"TAMPERED: {len(check.problems)} problem(s) in {check.rows} row(s)", file=sys.stderr)
    for problem in check.problems:
        print(f"  {problem}", file=sys.stderr)


def _witness(path: Path) -> Checkpoint:
    document = read_json_object(path, name="witness", kind="witness or publication bundle")
    try:
        return witness_of(document)
    except ValueError as exc:
        raise ConfigError(f"{path} cannot serve as a witness: {exc}") from exc


def run(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    witness = _witness(args.witness) if args.witness else None
    store = open_store(settings, warn=True)
    try:
        reap_and_note(store, settings)
        check = store.ledger.verify_ledger(witness)
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
            "no checkpoint key: MIGRATION_EVALS_CHECKPOINT_KEY is `off`; unset it (a key is "
            "then made on first use) or name a PEM file, or set "
            "MIGRATION_EVALS_CHECKPOINT_PUBLIC_KEY"
        )
    sys.stdout.write(checker.public_pem())
    return ExitStatus.OK


def _sign_checked(store: Store) -> Checkpoint | None:
    """A new checkpoint at the ledger's end, or None (said why) when it does not verify:
    a checkpoint is never signed over a ledger that does not."""
    check = store.ledger.verify_ledger()
    if not check.ok:
        _print_check(check)
        print("migration-evals: no checkpoint written", file=sys.stderr)
        return None
    return store.ledger.checkpoint()


def run_checkpoint(args: argparse.Namespace) -> int:
    if args.public_key:
        return _public_key(args)
    store = open_store(settings_from_args(args), warn=True)
    try:
        signed = _sign_checked(store)
    finally:
        store.close()
    if signed is None:
        return ExitStatus.LEDGER_TAMPERED
    if args.json:
        json.dump({**signed.to_dict(), "number": signed.number}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(f"{signed.describe()}: row {signed.ledger_seq} {signed.ledger_hash}")
    return ExitStatus.OK


def run_witness(args: argparse.Namespace) -> int:
    """Sign where the ledger ends and write it to ``--out``: kept away from the database,
    it still tells when rows and the checkpoints over them are deleted together."""
    store = open_store(settings_from_args(args), warn=True)
    try:
        signed = _sign_checked(store)
        checker = store.keys.checker
    finally:
        store.close()
    if signed is None:
        return ExitStatus.LEDGER_TAMPERED
    assert checker is not None  # it signed
    document = witness_document(signed, checker.public_pem())
    try:
        args.out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write the witness {args.out}: {exc.strerror or exc}") from exc
    if args.json:
        json.dump({**document, "out": str(args.out)}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(
            f"{signed.describe()}: row {signed.ledger_seq} {signed.ledger_hash}, written to "
            f"{args.out}; keep it away from the database (`ledger verify --witness "
            f"{args.out}` checks the ledger against it)"
        )
    return ExitStatus.OK
