"""An incremental ``gate check``: the refusals over every trial, from the columns kept with
the newest signed gate snapshot and the trials walked after it.

``migration_evals.gate.ledger_scan`` walks only the rows after the snapshot and hands back the
columns of the trials before it (``migration_evals.gate.columns``); this module appends the new
trials and counts with numpy what the refusals read
(``migration_evals.gate.publication.GateInputs``), so the work grows
with the new rows, not with the ledger: which trials count (the latest per changeset,
recipe and model), outcomes per model, runs not completed, stale stamps, fabricated marks,
HARKing, the contamination buckets, strict judging and the judges' reliability. Each is
computed as ``migration_evals.gate.evaluation`` and ``migration_evals.gate.publication`` compute it
from trials, and a test holds the two to the same decision. A scan that could not start from a
snapshot holds every trial, and the full evaluation decides.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import date
from typing import Any, overload

import numpy as np
from numpy.typing import NDArray

from migration_evals.core.database import Database
from migration_evals.core.integrity import LedgerCheck
from migration_evals.core.model import Stamps
from migration_evals.core.runs import Runs
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.gate.anchor import anchor_status
from migration_evals.gate.columns import OUTCOMES, TrialColumns, text
from migration_evals.gate.contamination import check_counts
from migration_evals.gate.evaluation import evaluate_scan
from migration_evals.gate.hypotheses import Harking, TrialGroup
from migration_evals.gate.judges import (
    JudgeReliabilityView,
    OpinionsProbe,
    judge_opinions_probe,
    trial_opinions,
)
from migration_evals.gate.ledger_scan import collector_paused, scan_ledger
from migration_evals.gate.publication import GateInputs, Tripwire, inputs_of, stale_specs, tripwire
from migration_evals.gate.reliability import Opinions, gather, left_out_reason
from migration_evals.gate.trials import JudgeOpinion, Outcome, TrialFacts

__all__ = ["check_inputs", "column_inputs"]

Indices = NDArray[np.intp]

_GRADED = [index for index, outcome in enumerate(OUTCOMES) if outcome.graded]
_ERROR = OUTCOMES.index(Outcome.ERROR)
_PASSED = OUTCOMES.index(Outcome.PASSED)
_CODED = {"model": "models", "recipe": "recipes", "run_id": "runs"}  # field -> its table


def check_inputs(
    store: Store,
    specs: SpecSet,
    *,
    run_id: str | None = None,
    workers: int = 1,
    reliability: OpinionsProbe = judge_opinions_probe,
) -> GateInputs:
    """What the refusals read, walking only the rows after the newest gate snapshot that
    holds (every row when none does)."""
    with collector_paused():
        # scipy loads while the scan waits on the database and its workers.
        scan = scan_ledger(store, workers=workers, full=False)
        if scan.earlier is None:

            def probe(trials: Sequence[TrialFacts], specs: SpecSet) -> JudgeReliabilityView | None:
                return reliability(gather(trial_opinions(trials), specs.oracle_stamp), specs)

            return inputs_of(
                evaluate_scan(store.db, store.runs, specs, scan, run_id=run_id, reliability=probe)
            )
        columns = scan.earlier.extended(scan.trials)
        return column_inputs(
            store.db, store.runs, specs, scan.chain, columns, run_id=run_id, probe=reliability
        )


def column_inputs(
    db: Database,
    runs: Runs,
    specs: SpecSet,
    chain_check: LedgerCheck,
    columns: TrialColumns,
    *,
    run_id: str | None = None,
    probe: OpinionsProbe = judge_opinions_probe,
) -> GateInputs:
    """``migration_evals.gate.publication.inputs_of`` computed from columns instead of trials."""
    scope = _scope(columns, run_id)
    counted = _counted(columns, scope)
    strict = int(np.count_nonzero(columns.strict[counted]))
    return GateInputs(
        specs=specs,
        chain=chain_check,
        anchor=anchor_status(db, specs),
        counted=len(counted),
        incomplete_runs=_incomplete(runs, columns, counted),
        stale=_stale(columns, counted, specs),
        marked=_marked(columns, counted),
        harking=_harking(columns, scope, specs),
        tripped=_tripped(columns, counted, specs),
        graded=_graded(columns, counted),
        errors=int(np.count_nonzero(columns.outcome[counted] == _ERROR)),
        strict_trials=strict,
        reliability=probe(_gathered(columns, scope, specs.oracle_stamp), specs) if strict else None,
    )


def _scope(columns: TrialColumns, run_id: str | None) -> Indices:
    """The trials considered, in ledger order: all, or one run's."""
    if run_id is None:
        return np.arange(len(columns))
    if run_id not in columns.runs:
        return np.zeros(0, dtype=np.intp)
    return np.flatnonzero(columns.run == columns.runs.index(run_id))


def _counted(columns: TrialColumns, scope: Indices) -> Indices:
    """The latest trial (by last row) per key among ``scope``, in ledger order."""
    if not len(scope):
        return scope
    # A stable sort on the key's high half alone keeps each key's trials in ledger order,
    # at half the cost of sorting on all three; checked, and done in full when it is not.
    order = scope[np.argsort(columns.key_hi[scope], kind="stable")]
    if not _grouped(columns, order):
        last, lo, hi = columns.last_seq[scope], columns.key_lo[scope], columns.key_hi[scope]
        order = scope[np.lexsort((last, lo, hi))]
    hi, lo = columns.key_hi[order], columns.key_lo[order]
    latest = np.ones(len(order), dtype=np.bool_)
    latest[:-1] = (hi[1:] != hi[:-1]) | (lo[1:] != lo[:-1])  # the last of each key
    return np.sort(order[latest])


def _grouped(columns: TrialColumns, order: Indices) -> bool:
    """Whether trials sorted by the key's high half have each key's together, by last row:
    not when two keys share that half, nor when a trial ended before an earlier one."""
    hi, lo, last = columns.key_hi[order], columns.key_lo[order], columns.last_seq[order]
    same = hi[1:] == hi[:-1]
    return not bool(np.any(same & ((lo[1:] != lo[:-1]) | (last[1:] < last[:-1]))))


def _graded(columns: TrialColumns, counted: Indices) -> dict[str, int]:
    models = columns.model[counted]
    graded = np.isin(columns.outcome[counted], _GRADED)
    per_model = np.bincount(models[graded], minlength=len(columns.models))
    return {columns.models[m]: int(per_model[m]) for m in sorted(set(models.tolist()))}


def _incomplete(runs: Runs, columns: TrialColumns, counted: Indices) -> dict[str, tuple[str, int]]:
    unfinished = runs.unfinished_runs()
    if not unfinished:
        return {}
    per_run = np.bincount(columns.run[counted], minlength=len(columns.runs))
    used = {columns.runs[r]: int(per_run[r]) for r in np.flatnonzero(per_run)}
    return {run: (status, used[run]) for run, status in sorted(unfinished.items()) if run in used}


def _stale(columns: TrialColumns, counted: Indices, specs: SpecSet) -> dict[str, _TrialIds]:
    """Spec name -> the counted trials graded under an older one, in ledger order; each
    distinct recipe and stamps is judged once."""
    pairs = columns.recipe[counted].astype(np.int64) * (len(columns.stamp_sets) + 1)
    pairs += columns.stamps[counted]
    by_name: dict[str, list[int]] = {}
    for pair in np.unique(pairs).tolist():
        recipe, stamps = divmod(pair, len(columns.stamp_sets) + 1)
        stamped = [Stamps(*s) for s in columns.stamp_sets[stamps]]
        for name in dict.fromkeys(stale_specs(columns.recipes[recipe], stamped, specs)):
            by_name.setdefault(name, []).append(pair)
    return {
        name: _TrialIds(columns, counted[np.isin(pairs, found)]) for name, found in by_name.items()
    }


class _TrialIds(Sequence[str]):
    """The ids of the trials at ``indices``, read only when asked for (a refusal names
    five of 100,000s)."""

    def __init__(self, columns: TrialColumns, indices: Indices) -> None:
        self._ids, self._indices = columns.trial_id, indices

    def __len__(self) -> int:
        return len(self._indices)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [text(self._ids, i) for i in self._indices[index].tolist()]
        return text(self._ids, int(self._indices[index]))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]


def _marked(columns: TrialColumns, counted: Indices) -> list[tuple[str, str]]:
    if not columns.marks:
        return []
    marked = np.array(sorted(columns.marks), dtype=np.intp)
    found = marked[_among(marked, counted)].tolist()
    return [(text(columns.trial_id, i), columns.marks[i]) for i in found]


def _among(few: Indices, many: Indices) -> NDArray[np.bool_]:
    """Which of ``few`` are in ``many`` (sorted): a lookup each, no sort of ``many``."""
    if not len(many):
        return np.zeros(len(few), dtype=np.bool_)
    at = np.minimum(np.searchsorted(many, few), len(many) - 1)
    return np.asarray(many[at] == few)


def _members(columns: TrialColumns, group: TrialGroup, scope: Indices) -> Indices:
    """``TrialGroup.members`` over the trials at ``scope``."""
    if group.unknown:
        return scope[:0]
    inside = np.ones(len(scope), dtype=np.bool_)
    for name, allowed in group.checks:
        if name in _CODED:
            table: tuple[str, ...] = getattr(columns, _CODED[name])
            codes = [index for index, value in enumerate(table) if value in allowed]
            inside &= np.isin(getattr(columns, name.removesuffix("_id"))[scope], codes)
        else:  # changeset_id: ids are kept as text, read only here
            changesets = columns.changeset_ids.values()
            inside &= np.fromiter((changesets[i] in allowed for i in scope.tolist()), np.bool_)
    return scope[inside]


def _harking(columns: TrialColumns, scope: Indices, specs: SpecSet) -> tuple[Harking, ...]:
    """``migration_evals.gate.hypotheses.find_harking`` over the trials at ``scope``."""
    found = []
    for key in sorted(specs.hypotheses):
        hypothesis = specs.hypotheses[key]
        groups = hypothesis.groups
        a = _members(columns, TrialGroup.of(groups.a), scope)
        b = _members(columns, TrialGroup.of(groups.b), scope)
        covered = np.concatenate((a, b))
        if not len(covered):
            continue
        # min() by time over the covered trials: the first of the earliest, a's before b's
        first = int(covered[np.argmin(columns.recorded_at[covered])])
        recorded = text(columns.recorded_at, first)
        if date.fromisoformat(recorded[:10]) < hypothesis.registered_at:
            trial_id = text(columns.trial_id, first)
            found.append(Harking(key, hypothesis.registered_at, recorded, trial_id))
    return tuple(found)


def _tripped(columns: TrialColumns, counted: Indices, specs: SpecSet) -> tuple[Tripwire, ...]:
    """``migration_evals.gate.contamination.contamination``'s tripped models over the counted
    trials."""
    graded = counted[np.isin(columns.outcome[counted], _GRADED)]
    gate = specs.oracle.gate
    models, created = columns.model[graded], columns.created[graded]
    passed = columns.outcome[graded] == _PASSED
    tripped = []
    for code in sorted(set(models.tolist()), key=lambda m: columns.models[m]):
        model = columns.models[code]
        cutoff = specs.models[model].training_cutoff if model in specs.models else None
        mine, dated = models == code, created > 0
        line = 0 if cutoff is None else cutoff.toordinal()
        pre = mine & dated & (created <= line) if cutoff is not None else np.zeros_like(mine)
        post = mine & dated & (created > line) if cutoff is not None else np.zeros_like(mine)
        found = check_counts(
            model,
            (int(np.count_nonzero(pre & passed)), int(np.count_nonzero(pre))),
            (int(np.count_nonzero(post & passed)), int(np.count_nonzero(post))),
            cutoff,
            gate,
            unknown_date=int(np.count_nonzero(mine & ~dated)),
            trials_digest="",  # not computed: only the refusal's words are read
        )
        if found.tripped:
            tripped.append(tripwire(found))
    return tuple(tripped)


def _gathered(columns: TrialColumns, scope: Indices, oracle_stamp: str) -> Opinions:
    """``migration_evals.gate.reliability.gather`` over the judge opinions of the trials at
    ``scope``: each judge's latest verdict per changeset, the latest strict pairs, what was left
    out."""
    codes = columns.opinion[scope]
    judged, codes = scope[codes >= 0], codes[codes >= 0]
    table = [JudgeOpinion("", *entry) for entry in columns.opinions]
    reasons = [left_out_reason(opinion, oracle_stamp) for opinion in table]
    verdicts = [dict(opinion.verdicts) for opinion in table]
    left_out: Counter[str] = Counter()
    for code, count in enumerate(np.bincount(codes, minlength=len(table)).tolist()):
        if count and reasons[code]:
            left_out[reasons[code]] += count
    heard = np.array([not reason for reason in reasons], dtype=np.bool_)[codes]
    primary = _latest(columns, judged, codes, heard & _having(verdicts, codes, "primary"))
    secondary = _latest(columns, judged, codes, heard & _having(verdicts, codes, "secondary"))
    both = heard & _having(verdicts, codes, "primary") & _having(verdicts, codes, "secondary")
    pairs = _latest(columns, judged, codes, both)
    return Opinions(
        {changeset: verdicts[code]["primary"] for changeset, code in primary},
        {changeset: verdicts[code]["secondary"] for changeset, code in secondary},
        {changeset: (verdicts[c]["primary"], verdicts[c]["secondary"]) for changeset, c in pairs},
        dict(sorted(left_out.items())),
    )


def _having(verdicts: list[dict[str, str | None]], codes: NDArray[np.int32], role: str) -> Any:
    return np.array([role in said for said in verdicts], dtype=np.bool_)[codes]


def _latest(
    columns: TrialColumns, judged: Indices, codes: NDArray[np.int32], where: Any
) -> list[tuple[str, int]]:
    """(changeset id, opinion code) of the latest of ``judged`` (in ledger order) per
    changeset, among those ``where`` holds."""
    judged, codes = judged[where], codes[where]
    if not len(judged):
        return []
    # As in ``_counted``: a stable sort on the digest's high half keeps each changeset's
    # opinions oldest first, unless two changesets share that half (then sort on both).
    order = np.argsort(columns.cs_hi[judged], kind="stable")
    hi, lo = columns.cs_hi[judged][order], columns.cs_lo[judged][order]
    if bool(np.any((hi[1:] == hi[:-1]) & (lo[1:] != lo[:-1]))):
        order = np.lexsort((judged, columns.cs_lo[judged], columns.cs_hi[judged]))
        hi, lo = columns.cs_hi[judged][order], columns.cs_lo[judged][order]
    last = np.ones(len(order), dtype=np.bool_)
    last[:-1] = (hi[1:] != hi[:-1]) | (lo[1:] != lo[:-1])
    changesets = columns.changeset_ids.values()
    picked = order[last]
    names = [changesets[i] for i in judged[picked].tolist()]
    return list(zip(names, codes[picked].tolist(), strict=True))
