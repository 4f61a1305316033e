"""Tier 3's diff coverage as people read it: which of the lines the patch changed in the
main code the base's tests executed (``migration_evals.core.diff_coverage``), for ``show``, the
trial pages, the trials table and the report's count of passes by state.

Envelopes from before diff coverage was kept have none; they show nothing rather than a
state they never had. Paths came from the candidate's diff: whoever renders them escapes
them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from migration_evals.core.diff_coverage import DiffCoverage, DiffCoverageState
from migration_evals.gate.trials import TrialFacts

__all__ = [
    "NOT_RECORDED",
    "coverage_document",
    "coverage_lines",
    "passes_by_state",
    "scan_cells",
]

NOT_RECORDED = "not recorded"
_FILES_SHOWN = 20  # files listed under the line in ``show`` and on the pages


def coverage_lines(details: Mapping[str, Any] | None) -> tuple[str, ...]:
    """``diff coverage: <the sentence>``, then a line per listed file (``path: 3 of 5
    changed lines executed; not executed: 12-14``); none when tier 3 recorded none."""
    found = DiffCoverage.of_details(details)
    if found is None:
        return ()
    lines = [f"diff coverage: {found.describe()}"]
    lines += [f"  {f.path}: {f.describe()}" for f in found.files[:_FILES_SHOWN]]
    left_out = len(found.files) - _FILES_SHOWN + found.files_left_out
    if left_out > 0:
        lines.append(f"  ... and {left_out} more file(s)")
    return tuple(lines)


def coverage_document(details: Mapping[str, Any] | None) -> dict[str, Any]:
    """For ``show --json`` and the trial pages: the stored numbers, the state and the
    lines ``show`` prints; empty when tier 3 recorded none."""
    found = DiffCoverage.of_details(details)
    if found is None:
        return {}
    return {**found.to_dict(), "untested": found.untested, "lines": list(coverage_lines(details))}


def scan_cells(details: Mapping[str, Any] | None) -> tuple[str, str]:
    """The state and the trials table's cell, as a ledger scan keeps them per trial
    (empty when tier 3 recorded none)."""
    found = DiffCoverage.of_details(details)
    if found is None:
        return "", ""
    return found.state.value, found.cell()


def passes_by_state(trials: Sequence[TrialFacts]) -> dict[str, dict[str, int]]:
    """For each model, its passed trials counted by diff-coverage state ("not recorded"
    for a pass whose tier 3 kept none), so passes that rest on changed code no test
    executed stand apart from the others."""
    counts: dict[str, Counter[str]] = {}
    for trial in trials:
        if trial.passed:
            state = trial.diff_coverage[0] if trial.diff_coverage else NOT_RECORDED
            counts.setdefault(trial.model, Counter())[state] += 1
    states = [*(s.value for s in DiffCoverageState), NOT_RECORDED]
    return {
        model: {"passes": sum(found.values()), **{s: found[s] for s in states}}
        for model, found in sorted(counts.items())
    }
