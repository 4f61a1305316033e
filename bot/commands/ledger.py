"""``migration-evals ledger verify``: walk the ledger's hash chain."""

from __future__ import annotations

import argparse
import json
import sys

from bot.commands import sentence, summary
from bot.commands.options import add_db_option, settings_from_args
from bot.exits import ExitStatus
from bot.heartbeat import reap_and_note
from core.store import Store

HELP = "check the append-only ledger for edited, removed or reordered rows"


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("ledger", help=summary("ledger"))
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    verify = actions.add_parser("verify", help=HELP, description=sentence(HELP))
    verify.add_argument("--json", action="store_true", help="print JSON on stdout")
    add_db_option(verify)
    verify.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    store = Store.open(settings.db_url)
    try:
        reap_and_note(store, settings)
        check = store.verify_ledger()
    finally:
        store.close()
    if args.json:
        document = {
            "ok": check.ok,
            "rows": check.rows,
            "head": check.head_hash,
            "problems": list(check.problems),
        }
        json.dump(document, sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif check.ok:
        print(f"ok: {check.rows} row(s), head {check.head_hash}")
    else:
        print(f"TAMPERED: {len(check.problems)} problem(s) in {check.rows} row(s)", file=sys.stderr)
        for problem in check.problems:
            print(f"  {problem}", file=sys.stderr)
    return ExitStatus.OK if check.ok else ExitStatus.LEDGER_TAMPERED
