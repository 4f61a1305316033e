"""Everything the gate, the bundle and the reports need, computed in one place.

``evaluate`` makes one pass over the ledger (``migration_evals.gate.ledger_scan``), picks the
counted trials (``migration_evals.gate.selection``), computes the numbers, reads the gold anchor and
asks the judge-reliability probe. The gate's refusals, the bundle and every report page are
views of the same ``Evaluation``, so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from migration_evals.core.database import Database
from migration_evals.core.runs import Runs
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.gate.anchor import AnchorStatus, anchor_status
from migration_evals.gate.hypotheses import Harking, find_harking
from migration_evals.gate.judges import (
    JudgeAgreement,
    JudgeReliabilityView,
    ReliabilityProbe,
    judge_agreement,
    judge_reliability_probe,
)
from migration_evals.gate.ledger_scan import ChainCheck, LedgerScan, collector_paused, scan_ledger
from migration_evals.gate.numbers import Numbers, compute_numbers
from migration_evals.gate.selection import Selection, select_trials
from migration_evals.gate.trials import TrialFacts

__all__ = ["Evaluation", "evaluate", "evaluate_scan"]


@dataclass(frozen=True, slots=True)
class Evaluation:
    specs: SpecSet
    chain: ChainCheck
    selection: Selection
    numbers: Numbers
    anchor: AnchorStatus
    agreement: JudgeAgreement
    strict_trials: int  # counted trials judged in strict mode (two judges)
    reliability: JudgeReliabilityView | None  # asked only when strict_trials > 0
    harking: tuple[Harking, ...]
    # Runs that counted trials come from and that have not completed: run id -> status
    # (``running``, or ``interrupted`` until ``run --resume`` completes it).
    incomplete_runs: Mapping[str, str] = field(default_factory=dict)


def evaluate(
    store: Store,
    specs: SpecSet,
    *,
    run_id: str | None = None,
    upto_seq: int | None = None,
    workers: int = 1,
    reliability: ReliabilityProbe = judge_reliability_probe,
) -> Evaluation:
    """Scan every row of the ledger (up to ``upto_seq``), select, compute. The only thing
    written is a gate snapshot (``migration_evals.gate.ledger_scan``), and only with the
    checkpoint's private key."""
    with collector_paused():
        # scipy loads while the scan waits on the database and its workers.
        scan = scan_ledger(store, upto_seq=upto_seq, workers=workers)
        return evaluate_scan(
            store.db, store.runs, specs, scan, run_id=run_id, reliability=reliability
        )


def evaluate_scan(
    db: Database,
    runs: Runs,
    specs: SpecSet,
    scan: LedgerScan,
    *,
    run_id: str | None = None,
    reliability: ReliabilityProbe = judge_reliability_probe,
) -> Evaluation:
    """``evaluate`` over a scan made already, which must hold every trial (one that
    started from a gate snapshot holds only the later ones: see
    ``migration_evals.gate.incremental``)."""
    if scan.earlier is not None:
        raise ValueError("the scan started from a gate snapshot: it does not hold every trial")
    with collector_paused():
        selection = select_trials(scan.trials, run_id)
        strict = sum(t.judge_strict for t in selection.trials)
        return Evaluation(
            specs=specs,
            chain=scan.chain,
            selection=selection,
            numbers=compute_numbers(selection.trials, specs),
            anchor=anchor_status(db, specs),
            agreement=judge_agreement(selection.trials),
            strict_trials=strict,
            reliability=reliability(_of_run(scan.trials, run_id), specs) if strict else None,
            harking=find_harking(specs, selection.in_scope),
            incomplete_runs=_incomplete(runs, selection.trials),
        )


def _incomplete(runs: Runs, counted: Sequence[TrialFacts]) -> dict[str, str]:
    """The unfinished runs among those the counted trials come from (one small query)."""
    unfinished = runs.unfinished_runs()
    if not unfinished:
        return {}
    used = {trial.run_id for trial in counted}
    return {run: status for run, status in sorted(unfinished.items()) if run in used}


def _of_run(trials: Sequence[TrialFacts], run_id: str | None) -> list[TrialFacts]:
    """The scanned trials of one run (all of them when ``run_id`` is None), oldest first."""
    return [t for t in trials if run_id is None or t.run_id == run_id]
