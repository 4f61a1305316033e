"""The report's record pages: one per trial whose detail the trials page inlines, with the
patch as tier 1 applied it (its lines coloured as a diff) and the whole output of every
sandboxed command, each with a filter box, read back from the artifacts beside the ledger
(``migration_evals.gate.trial_artifacts``). A run with no recorded output says why instead.

Pages are written for at most ``DETAIL_LIMIT`` trials (the trials page's), so the report
stays bounded; ``migration-evals show TRIAL --patch`` and ``--logs TIER`` print any other.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from migration_evals.core.artifacts import ArtifactStore
from migration_evals.gate.trial_artifacts import ArtifactView, trial_logs, trial_patch
from migration_evals.gate.trial_detail import TrialDetail

__all__ = ["RECORDS_FOLDER", "RecordPage", "diff_lines", "record_page"]

RECORDS_FOLDER = "records"


def diff_lines(text: str) -> Iterator[tuple[str, str]]:
    """(css class, line) for each line of a unified diff: what it adds, removes, where."""
    for line in text.splitlines():
        if line.startswith(("diff --git", "index ", "--- ", "+++ ", "new file", "deleted file")):
            yield "meta", line
        elif line.startswith("@@"):
            yield "hunk", line
        elif line.startswith("+"):
            yield "add", line
        elif line.startswith("-"):
            yield "del", line
        else:
            yield "", line


@dataclass(frozen=True, slots=True)
class RecordPage:
    """What one trial's record page shows."""

    trial_id: str
    changeset: dict[str, Any]
    verdict: str
    patch: ArtifactView
    logs: list[tuple[str, list[ArtifactView]]]  # per tier that ran sandboxed commands

    @property
    def path(self) -> str:
        return f"{RECORDS_FOLDER}/{self.trial_id}.html"


def record_page(detail: TrialDetail, artifacts: ArtifactStore) -> RecordPage:
    logs = [(t.tier.value, trial_logs(detail, t.tier, artifacts)) for t in detail.tiers]
    return RecordPage(
        trial_id=detail.ref.trial_id,
        changeset=dict(detail.changeset),
        verdict=detail.verdict.value,
        patch=trial_patch(detail, artifacts),
        logs=[(tier, views) for tier, views in logs if views],
    )
