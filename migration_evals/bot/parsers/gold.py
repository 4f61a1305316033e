"""``migration-evals gold export|import``'s parser; ``migration_evals.bot.commands.gold`` shares
anchors."""

from __future__ import annotations

from pathlib import Path

from migration_evals.bot.commands import sentence, summary
from migration_evals.bot.commands.options import add_store_options
from migration_evals.bot.parsers import Handler, SubParsers

EXPORT_HELP = "write the gold labels, their envelopes, stamps and statistic as a signed file"
IMPORT_HELP = "check a shared gold anchor and, if it verifies under the current specs, use it"


def add_parser(commands: SubParsers) -> None:
    parser = commands.add_parser(
        "gold", help=summary("gold"), description=sentence(summary("gold"))
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    export = actions.add_parser("export", help=EXPORT_HELP, description=sentence(EXPORT_HELP))
    export.add_argument("--out", type=Path, required=True, metavar="ANCHOR.json")
    export.add_argument("--json", action="store_true", help="print JSON on stdout")
    add_store_options(export)
    export.set_defaults(handler=Handler("migration_evals.bot.commands.gold", "run_export"))
    found = actions.add_parser("import", help=IMPORT_HELP, description=sentence(IMPORT_HELP))
    found.add_argument("anchor", type=Path, metavar="ANCHOR.json")
    found.add_argument(
        "--public-key",
        type=Path,
        metavar="PEM",
        help="check the anchor's signature with this Ed25519 public key (default: "
        "$MIGRATION_EVALS_CHECKPOINT_PUBLIC_KEY or the checkpoint key's public half)",
    )
    found.add_argument("--json", action="store_true", help="print JSON on stdout")
    add_store_options(found)
    found.set_defaults(handler=Handler("migration_evals.bot.commands.gold", "run_import"))
