"""The report's trials page: every counted trial in one filterable, sortable table, each
row opening the trial's detail (``migration_evals.gate.trial_detail``, the same ``show`` prints).

The page stays bounded however large the evaluation: the table's rows travel as compact
JSON that the page renders (at most ``SHOWN`` at a time, the filter narrowing them), and
the full detail is inlined for at most ``DETAIL_LIMIT`` trials, the ones a reader most
likely opens first (infrastructure errors, inconclusive, failed, then passed ones), each
sandbox output cut to its last ``TAIL_LINES`` lines, and a record page of its own with its
patch and every sandboxed command's whole output (``migration_evals.gate.report.records``). A row
without inline detail names the ``show`` command that prints it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from migration_evals.core.artifacts import ArtifactStore
from migration_evals.core.model import Verdict
from migration_evals.core.specs import SpecSet
from migration_evals.core.trial_queries import TrialQueries
from migration_evals.gate.report.records import RecordPage, record_page
from migration_evals.gate.trial_detail import trial_detail
from migration_evals.gate.trials import Outcome, TrialFacts

__all__ = ["COLUMNS", "DETAIL_LIMIT", "SHOWN", "TrialsPage", "trials_page"]

DETAIL_LIMIT = 300
TAIL_LINES = 40
SHOWN = 500  # rows the page renders at once
COLUMNS = (
    "trial",
    "changeset",
    "model",
    "recipe",
    "verdict",
    "tier",
    "reason",
    "list",
    "actual",
    "origin",
    "run",
    "base tests",
    "patched tests",
    "diff coverage",
)
_FIRST = {
    Outcome.ERROR: 0,
    Outcome.INCONCLUSIVE: 1,
    Outcome.FAILED: 2,
    Outcome.NOT_GRADED: 3,
    Outcome.PASSED: 4,
}


@dataclass(frozen=True, slots=True)
class TrialsPage:
    rows: list[list[Any]]
    details: dict[str, dict[str, Any]]
    records: tuple[RecordPage, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"rows": len(self.rows), "details": len(self.details), "detail_limit": DETAIL_LIMIT}


def _tier_reached(trial: TrialFacts) -> str:
    ran = [f.tier.value for f in trial.tiers if f.verdict is not Verdict.SKIPPED and f.ran]
    return ran[-1] if ran else "none"


def _origins(trial: TrialFacts) -> str:
    seen = [o for o in dict.fromkeys(trial.origins) if o != "not run"]
    return ", ".join(seen)


def _row(trial: TrialFacts) -> list[Any]:
    return [
        trial.trial_id,
        trial.changeset_id,
        trial.model,
        trial.recipe,
        trial.outcome.value,
        _tier_reached(trial),
        trial.stop_reason,
        round(trial.list_cost_usd, 6),
        round(trial.actual_cost_usd, 6),
        _origins(trial),
        trial.run_id,
        *(trial.test_counts or ("", "")),
        trial.diff_coverage[1] if trial.diff_coverage else "",
    ]


def _trimmed(detail: dict[str, Any]) -> dict[str, Any]:
    for tier in detail["tiers"]:
        for run in tier["sandbox_runs"]:
            lines = str(run.get("output_tail") or "").rstrip("\n").splitlines()
            if len(lines) > TAIL_LINES:
                run["output_tail"] = "\n".join(lines[-TAIL_LINES:])
                run["output_cut"] = f"last {TAIL_LINES} of {len(lines)} lines"
        tier["other_details"] = {}  # in ``show --json``; the page keeps what people read
    return detail


def trials_page(
    queries: TrialQueries,
    artifacts: ArtifactStore,
    trials: Sequence[TrialFacts],
    specs: SpecSet,
    runs: Mapping[str, Mapping[str, Any]],
) -> TrialsPage:
    """The page's rows (every trial of ``trials``, in ledger order) and inline details."""
    chosen = sorted(range(len(trials)), key=lambda i: (_FIRST[trials[i].outcome], i))
    details, records = {}, []
    for index in chosen[:DETAIL_LIMIT]:
        trial = trials[index]
        found = trial_detail(queries, trial.trial_id, specs=specs, siblings=(), runs=runs)
        record = record_page(found, artifacts)
        details[trial.trial_id] = {**_trimmed(found.to_dict()), "record_page": record.path}
        records.append(record)
    return TrialsPage([_row(t) for t in trials], details, tuple(records))
