"""One module per command-line command, holding what the command does; its parser is
``migration_evals.bot.parsers``' module of the same name.

``COMMANDS`` names each command's parser module and one-line summary, so ``migration_evals.bot.cli``
can list every command while building only the parser of the one being run. A command's
module here (which pulls in heavy libraries) is imported only when the command runs.
"""

from __future__ import annotations

__all__ = ["COMMANDS", "sentence", "summary"]

COMMANDS: dict[str, tuple[str, str]] = {
    "demo": (
        "migration_evals.bot.parsers.demo",
        "grade the bundled example changesets (Java, Go, Dockerfile) end to end",
    ),
    "run": (
        "migration_evals.bot.parsers.run",
        "grade the changesets of a JSONL file through the oracle cascade",
    ),
    "cost": (
        "migration_evals.bot.parsers.cost",
        "forecast the list cost of an evaluation from the oracle spec's funnel",
    ),
    "stamp": (
        "migration_evals.bot.parsers.stamp",
        "print the stamps of the oracle spec, each recipe and the hypotheses",
    ),
    "ledger": (
        "migration_evals.bot.parsers.ledger",
        "verify the results ledger and sign checkpoints of it",
    ),
    "db": (
        "migration_evals.bot.parsers.db",
        "the database schema: upgrade it to this release's, or show where it stands",
    ),
    "judges": (
        "migration_evals.bot.parsers.judges",
        "check the LLM judges",
    ),
    "mine": (
        "migration_evals.bot.parsers.mine",
        "mine pull requests: gold labels, survival refresh, the retroactive-scoring unlock",
    ),
    "gold": (
        "migration_evals.bot.parsers.gold",
        "share the gold anchor: export it as a verifiable file, or import one for the gate",
    ),
    "serve": (
        "migration_evals.bot.parsers.serve",
        "run the GitHub App: webhook endpoint, job workers and scheduler",
    ),
    "gate": (
        "migration_evals.bot.parsers.gate",
        "the publication gate",
    ),
    "verify": (
        "migration_evals.bot.parsers.verify",
        "recompute every number and hash of a publication bundle; print ok or what differs",
    ),
    "images": (
        "migration_evals.bot.parsers.images",
        "build the sandbox images locally (debootstrap + docker), or list them",
    ),
    "jobs": (
        "migration_evals.bot.parsers.jobs",
        "the GitHub App's jobs: list them with their last error, or put a failed one back",
    ),
    "register": (
        "migration_evals.bot.parsers.register",
        "register the GitHub App in one step (GitHub's manifest flow) and keep its credentials",
    ),
    "worker": (
        "migration_evals.bot.parsers.worker",
        "run a Celery worker that grades trials (and the GitHub App's jobs) from the queue",
    ),
    "show": (
        "migration_evals.bot.parsers.show",
        "show one trial's evidence: every tier's envelope, output tails, judge answers, stamps",
    ),
    "config": (
        "migration_evals.bot.parsers.config",
        "check a repository's .github/migration-evals.yml as the GitHub App reads it",
    ),
    "report": (
        "migration_evals.bot.parsers.report",
        "write the evaluation report (HTML, Markdown, JSON and plots) into a folder",
    ),
}


def summary(name: str) -> str:
    """The one-line help of command ``name``."""
    return COMMANDS[name][1]


def sentence(text: str) -> str:
    """``text`` as a sentence: its first letter raised, nothing else touched (so that
    ``JSONL``, ``HTML`` and ``LLM`` keep their capitals, which ``str.capitalize`` lowers)."""
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")
