"""``migration-evals ledger verify|checkpoint|witness``'s parser;
``migration_evals.bot.commands.ledger`` checks and signs."""

from __future__ import annotations

from pathlib import Path

from migration_evals.bot.commands import sentence, summary
from migration_evals.bot.commands.options import add_db_option
from migration_evals.bot.parsers import Handler, SubParsers

HELP = (
    "check the ledger for edited, removed or reordered rows, forged gold labels or tracked "
    "PRs, and rows cut below a signed checkpoint"
)
CHECKPOINT_HELP = (
    "sign where the ledger ends now with the checkpoint key (after checking it), "
    "or print that key's public half"
)
WITNESS_HELP = (
    "sign where the ledger ends now and write that checkpoint to a file to keep away from "
    "the database, for `ledger verify --witness`"
)


def add_parser(commands: SubParsers) -> None:
    parser = commands.add_parser("ledger", help=summary("ledger"))
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    verify = actions.add_parser("verify", help=HELP, description=sentence(HELP))
    verify.add_argument(
        "--witness",
        type=Path,
        metavar="FILE",
        help="also check the ledger against a checkpoint kept elsewhere: a file "
        "`ledger witness --out` wrote, or a publication bundle (catches rows deleted "
        "together with the checkpoints over them)",
    )
    verify.add_argument("--json", action="store_true", help="print JSON on stdout")
    add_db_option(verify)
    verify.set_defaults(handler=Handler("migration_evals.bot.commands.ledger", "run"))
    checkpoint = actions.add_parser(
        "checkpoint", help=CHECKPOINT_HELP, description=CHECKPOINT_HELP.capitalize() + "."
    )
    checkpoint.add_argument(
        "--public-key",
        action="store_true",
        help="print the public key PEM (for `verify BUNDLE --public-key`) and sign nothing",
    )
    checkpoint.add_argument("--json", action="store_true", help="print JSON on stdout")
    add_db_option(checkpoint)
    checkpoint.set_defaults(
        handler=Handler("migration_evals.bot.commands.ledger", "run_checkpoint")
    )
    witness = actions.add_parser("witness", help=WITNESS_HELP, description=sentence(WITNESS_HELP))
    witness.add_argument(
        "--out", type=Path, required=True, metavar="FILE", help="where to write the witness"
    )
    witness.add_argument("--json", action="store_true", help="print JSON on stdout")
    add_db_option(witness)
    witness.set_defaults(handler=Handler("migration_evals.bot.commands.ledger", "run_witness"))
