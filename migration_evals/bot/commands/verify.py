"""``migration-evals verify BUNDLE``: recompute a publication bundle and name what differs."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

from migration_evals.bot.commands.gate import scan_workers
from migration_evals.bot.commands.options import read_json_object, settings_from_args
from migration_evals.bot.exits import ExitStatus, UsageError
from migration_evals.bot.ledger_keys import ledger_keys, open_store
from migration_evals.core.checkpoints import CheckpointVerifier
from migration_evals.core.errors import ConfigError
from migration_evals.core.settings import Settings
from migration_evals.gate.bundle import BUNDLE_FORMAT, BundleCheck, verify_bundle
from migration_evals.oracles.ecosystems.registry import load_specs

_SHOWN = 50
_BUNDLE_FAMILY = BUNDLE_FORMAT.split("/")[0] + "/"


def _configured_verifier(settings: Settings, bundle: dict[str, Any]) -> CheckpointVerifier | None:
    """The configured key's public half; the default key (made on this machine) only for
    bundles it signed: another's bundle is checked with the --public-key it is given."""
    checker = ledger_keys(settings).checker
    config = settings.ledger
    if checker is None or config.checkpoint_public_key or not config.make_checkpoint_key:
        return checker
    ledger = bundle.get("ledger")
    signed = ledger.get("checkpoint") if isinstance(ledger, dict) else None
    signer = signed.get("signer") if isinstance(signed, dict) else None
    return checker if signer == checker.key_id else None


def _verify(args: argparse.Namespace, bundle: dict[str, Any]) -> BundleCheck:
    settings = settings_from_args(args)
    specs = load_specs(settings.specs_dir)
    verifier = (
        CheckpointVerifier.from_pem(args.public_key)
        if args.public_key
        else _configured_verifier(settings, bundle)
    )
    if args.db is None:
        return verify_bundle(bundle, specs, verifier=verifier)
    url = make_url(args.db)
    if url.get_backend_name() == "sqlite" and url.database and not Path(url.database).exists():
        raise ConfigError(f"no ledger at {url.database}: verifying needs the database it came from")
    keys = replace(ledger_keys(settings), verifier=verifier)  # the same public key for both
    store = open_store(settings, url=args.db, keys=keys)
    try:
        workers = scan_workers(args.scan_processes)
        return verify_bundle(bundle, specs, store=store, workers=workers, verifier=verifier)
    finally:
        store.close()


def _bundle(path: Path) -> dict[str, Any]:
    """The bundle in ``path``; a JSON object that is no bundle at all (a report, an anchor)
    is the wrong file, not a bundle that was tampered with."""
    document = read_json_object(path, name="bundle", kind="publication bundle")
    if not str(document.get("format") or "").startswith(_BUNDLE_FAMILY):
        raise UsageError(
            f'{path} is not a publication bundle (its "format" is '
            f"{document.get('format')!r}, not {BUNDLE_FORMAT!r}); `migration-evals gate "
            "publish --out FILE` writes one"
        )
    return document


def run(args: argparse.Namespace) -> int:
    result = _verify(args, _bundle(args.bundle))
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    if args.json:
        document = {
            "ok": result.ok,
            "against": result.against,
            "differences": result.differences,
            "notes": result.notes,
        }
        json.dump(document, sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif result.ok:
        print(f"ok ({args.bundle} against {result.against})")
    else:
        print(f"DIFFERS: {len(result.differences)} part(s) of {args.bundle} do not recompute")
        for line in result.differences[:_SHOWN]:
            print(f"  {line}")
        if len(result.differences) > _SHOWN:
            print(f"  ... and {len(result.differences) - _SHOWN} more (--json lists all)")
    return ExitStatus.OK if result.ok else ExitStatus.BUNDLE_DIFFERS
