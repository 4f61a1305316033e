"""The publication gate: every reason an evaluation's numbers may not be quoted.

Each rule is a small function from the ``GateInputs`` (what a full evaluation or an
incremental check's columns give, ``inputs_of`` and ``migration_evals.gate.incremental``) to
refusals;
``decide`` runs them all and lists every refusal (not just the first), in ``RefusalCode``
order:

* ``ledger_tampered``: the hash chain does not verify;
* ``incomplete_run``: counted trials come from a run that is still running or was
  interrupted (its process died) and has not been resumed to completion (which runs);
* ``stale_stamp``: a counted trial's stamps differ from the current specs (which spec,
  which trials), or an imported gold anchor's do;
* ``fabricated``: a counted trial carries a fabricated mark anywhere in its envelopes;
* ``harking``: a hypothesis was registered after the first result it covers;
* ``broken_anchor``: the gold-anchor correlation is below its floor or minimum n;
* ``contamination``: a model's tripwire fired;
* ``unreliable_judges``: strict-mode verdicts were counted from an unreliable judge pair;
* ``threshold:<name>``: too few graded trials per model (``min_trials``), too many
  infrastructure errors (``max_infra_error_rate``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from migration_evals.core.integrity import LedgerCheck
from migration_evals.core.liveness import RunState
from migration_evals.core.model import Stamps
from migration_evals.core.specs import SpecSet
from migration_evals.gate.anchor import AnchorStatus
from migration_evals.gate.contamination import ContaminationCheck
from migration_evals.gate.evaluation import Evaluation
from migration_evals.gate.hypotheses import Harking
from migration_evals.gate.judges import JudgeReliabilityView
from migration_evals.gate.refusals import GateDecision, Refusal, RefusalCode
from migration_evals.gate.trials import Outcome

__all__ = [
    "GateInputs",
    "Tripwire",
    "check",
    "decide",
    "inputs_of",
    "stale_specs",
    "tripwire",
]

_SHOWN = 5  # trial ids listed in a detail before "and N more"

# A contamination tripwire that fired: the model, its training cutoff and the summary.
Tripwire = tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class GateInputs:
    """Everything the rules read, taken from a full evaluation (``inputs_of``) or counted
    from the columns of an incremental check (``migration_evals.gate.incremental``): one set of
    rules, so the two cannot word or decide a refusal differently."""

    specs: SpecSet
    chain: LedgerCheck
    anchor: AnchorStatus
    counted: int
    # Runs counted trials come from that have not completed: run -> (status, counted).
    incomplete_runs: Mapping[str, tuple[str, int]]
    # Spec name -> the counted trials graded under an older version of it, oldest first.
    stale: Mapping[str, Sequence[str]]
    marked: Sequence[tuple[str, str]]  # counted trials with a fabricated mark, first mark
    harking: tuple[Harking, ...]
    tripped: tuple[Tripwire, ...]
    graded: Mapping[str, int]  # model -> graded counted trials, every counted model
    errors: int  # counted trials that ended in an infrastructure error
    strict_trials: int
    reliability: JudgeReliabilityView | None


def _some(items: Sequence[str]) -> str:
    shown = ", ".join(items[:_SHOWN])
    return shown if len(items) <= _SHOWN else f"{shown} and {len(items) - _SHOWN} more"


def tripwire(found: ContaminationCheck) -> Tripwire:
    return found.model, str(found.training_cutoff), found.summary()


def inputs_of(ev: Evaluation) -> GateInputs:
    """What the rules read, from a full evaluation."""
    counted = ev.selection.trials
    by_spec: dict[str, list[str]] = {}
    for trial in counted:
        for name in dict.fromkeys(stale_specs(trial.recipe, trial.stamps, ev.specs)):
            by_spec.setdefault(name, []).append(trial.trial_id)
    runs = {
        run_id: (status, sum(t.run_id == run_id for t in counted))
        for run_id, status in ev.incomplete_runs.items()
    }
    return GateInputs(
        specs=ev.specs,
        chain=ev.chain,
        anchor=ev.anchor,
        counted=len(counted),
        incomplete_runs=runs,
        stale=by_spec,
        marked=[(t.trial_id, t.marks[0]) for t in counted if t.marks],
        harking=ev.harking,
        tripped=tuple(tripwire(c) for c in ev.numbers.contamination if c.tripped),
        graded={r.group: r.graded for r in ev.numbers.pass_rates},
        errors=ev.numbers.outcomes[Outcome.ERROR.value],
        strict_trials=ev.strict_trials,
        reliability=ev.reliability,
    )


def _ledger(ev: GateInputs) -> Iterable[Refusal]:
    if ev.chain.ok:
        return
    problems = list(ev.chain.problems)
    detail = f"the ledger's hash chain does not verify ({len(problems)} problem(s)): "
    yield Refusal(RefusalCode.LEDGER_TAMPERED, detail + "; ".join(problems[:_SHOWN]))


def _incomplete(ev: GateInputs) -> Iterable[Refusal]:
    for run_id, (status, counted) in ev.incomplete_runs.items():
        if status == RunState.INTERRUPTED:
            why = f"run {run_id} was interrupted (its process died) before grading all of it"
            fix = f"grade what it left undone with `migration-evals run --resume {run_id}`"
        else:
            why = f"run {run_id} is still running"
            fix = "wait for it to finish (a dead one is marked interrupted once its lease ends)"
        yield Refusal(
            RefusalCode.INCOMPLETE_RUN, f"{why}; {counted} counted trial(s) come from it: {fix}"
        )


def stale_specs(recipe_name: str, stamped: Iterable[Stamps], specs: SpecSet) -> list[str]:
    """The specs that changed since a trial of ``recipe_name`` was graded under ``stamped``."""
    recipe = specs.recipes.get(recipe_name)
    names = []
    for stamps in stamped:
        if stamps.oracle != specs.oracle_stamp:
            names.append("the oracle spec")
        if recipe is None:
            names.append(f"recipe {recipe_name} (no longer in the specs)")
        elif stamps.recipe != recipe.stamp:
            names.append(f"recipe {recipe_name}")
        if stamps.hypotheses != specs.hypotheses_stamp:
            names.append("the hypotheses")
    return names


def _stale(ev: GateInputs) -> Iterable[Refusal]:
    for name in sorted(ev.stale):
        trials = ev.stale[name]
        yield Refusal(
            RefusalCode.STALE_STAMP,
            f"{name} changed since {len(trials)} counted trial(s) were graded: {_some(trials)}",
        )
    for source in ev.anchor.sources:
        if source.stale:
            yield Refusal(
                RefusalCode.STALE_STAMP,
                f"{source.stale} changed since the gold anchor imported from {source.origin} "
                f"was graded; its {source.rows} label(s) are left out of the anchor",
            )


def _fabricated(ev: GateInputs) -> Iterable[Refusal]:
    if ev.marked:
        where = [f"{trial_id} ({mark})" for trial_id, mark in ev.marked]
        yield Refusal(
            RefusalCode.FABRICATED,
            f"{len(where)} counted trial(s) carry fabricated marks: {_some(where)}",
        )


def _harking(ev: GateInputs) -> Iterable[Refusal]:
    for found in ev.harking:
        yield Refusal(RefusalCode.HARKING, found.detail())


def _anchor(ev: GateInputs) -> Iterable[Refusal]:
    if ev.anchor.broken:
        yield Refusal(RefusalCode.BROKEN_ANCHOR, ev.anchor.reason)


def _contamination(ev: GateInputs) -> Iterable[Refusal]:
    for model, cutoff, summary in ev.tripped:
        yield Refusal(
            RefusalCode.CONTAMINATION,
            f"{model} passes repositories created before its training cutoff "
            f"({cutoff}) more often: {summary}",
        )


def _judges(ev: GateInputs) -> Iterable[Refusal]:
    if not ev.strict_trials or ev.reliability is None or ev.reliability.reliable:
        return
    floor = ev.specs.oracle.gate.judge_kappa_floor
    why = "; ".join(ev.reliability.problems) or f"agreement below the kappa floor {floor}"
    yield Refusal(
        RefusalCode.UNRELIABLE_JUDGES,
        f"{ev.strict_trials} counted trial(s) were judged in strict mode by a judge pair "
        f"that is not reliable: {why}",
    )


def _thresholds(ev: GateInputs) -> Iterable[Refusal]:
    gate = ev.specs.oracle.gate
    minimum = gate.min_trials
    short = [f"{model} ({n})" for model, n in sorted(ev.graded.items()) if n < minimum]
    if not ev.graded:
        short = ["no model has any graded trial"]
    if short:
        yield Refusal(
            RefusalCode.THRESHOLD,
            f"fewer than {minimum} graded trials: {_some(short)}",
            threshold="min_trials",
        )
    total, errors = ev.counted, ev.errors
    limit = gate.max_infra_error_rate
    if total and errors / total > limit:
        yield Refusal(
            RefusalCode.THRESHOLD,
            f"{errors} of {total} counted trials ({errors / total:.1%}) ended in an "
            f"infrastructure error; the limit is {limit:.0%}",
            threshold="max_infra_error_rate",
        )


_RULES: tuple[Callable[[GateInputs], Iterable[Refusal]], ...] = (
    _ledger,
    _incomplete,
    _stale,
    _fabricated,
    _harking,
    _anchor,
    _contamination,
    _judges,
    _thresholds,
)


def decide(inputs: GateInputs) -> GateDecision:
    """Every refusal the inputs earn; publishable only when there is none."""
    return GateDecision.of([r for rule in _RULES for r in rule(inputs)])


def check(evaluation: Evaluation) -> GateDecision:
    """Every refusal the evaluation earns; publishable only when there is none."""
    return decide(inputs_of(evaluation))
