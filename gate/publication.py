"""The publication gate: every reason an evaluation's numbers may not be quoted.

Each rule is a small function from the ``Evaluation`` to refusals; ``check`` runs them all
and lists every refusal (not just the first), in ``RefusalCode`` order:

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

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from core.liveness import RunState
from core.specs import SpecSet
from gate.evaluation import Evaluation
from gate.refusals import GateDecision, Refusal, RefusalCode
from gate.trials import Outcome, TrialFacts

__all__ = ["check"]

_SHOWN = 5  # trial ids listed in a detail before "and N more"


def _some(items: Sequence[str]) -> str:
    shown = ", ".join(items[:_SHOWN])
    return shown if len(items) <= _SHOWN else f"{shown} and {len(items) - _SHOWN} more"


def _ledger(ev: Evaluation) -> Iterable[Refusal]:
    if ev.chain.ok:
        return
    problems = list(ev.chain.problems)
    detail = f"the ledger's hash chain does not verify ({len(problems)} problem(s)): "
    yield Refusal(RefusalCode.LEDGER_TAMPERED, detail + "; ".join(problems[:_SHOWN]))


def _incomplete(ev: Evaluation) -> Iterable[Refusal]:
    for run_id, status in ev.incomplete_runs.items():
        counted = sum(t.run_id == run_id for t in ev.selection.trials)
        if status == RunState.INTERRUPTED:
            why = f"run {run_id} was interrupted (its process died) before grading all of it"
            fix = f"grade what it left undone with `migration-evals run --resume {run_id}`"
        else:
            why = f"run {run_id} is still running"
            fix = "wait for it to finish (a dead one is marked interrupted once its lease ends)"
        yield Refusal(
            RefusalCode.INCOMPLETE_RUN, f"{why}; {counted} counted trial(s) come from it: {fix}"
        )


def _stale_specs(trial: TrialFacts, specs: SpecSet) -> list[str]:
    recipe = specs.recipes.get(trial.recipe)
    names = []
    for stamps in trial.stamps:
        if stamps.oracle != specs.oracle_stamp:
            names.append("the oracle spec")
        if recipe is None:
            names.append(f"recipe {trial.recipe} (no longer in the specs)")
        elif stamps.recipe != recipe.stamp:
            names.append(f"recipe {trial.recipe}")
        if stamps.hypotheses != specs.hypotheses_stamp:
            names.append("the hypotheses")
    return names


def _stale(ev: Evaluation) -> Iterable[Refusal]:
    by_spec: dict[str, list[str]] = {}
    for trial in ev.selection.trials:
        for name in dict.fromkeys(_stale_specs(trial, ev.specs)):
            by_spec.setdefault(name, []).append(trial.trial_id)
    for name in sorted(by_spec):
        trials = by_spec[name]
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


def _fabricated(ev: Evaluation) -> Iterable[Refusal]:
    marked = [t for t in ev.selection.trials if t.marks]
    if marked:
        where = [f"{t.trial_id} ({t.marks[0]})" for t in marked]
        yield Refusal(
            RefusalCode.FABRICATED,
            f"{len(marked)} counted trial(s) carry fabricated marks: {_some(where)}",
        )


def _harking(ev: Evaluation) -> Iterable[Refusal]:
    for found in ev.harking:
        yield Refusal(RefusalCode.HARKING, found.detail())


def _anchor(ev: Evaluation) -> Iterable[Refusal]:
    if ev.anchor.broken:
        yield Refusal(RefusalCode.BROKEN_ANCHOR, ev.anchor.reason)


def _contamination(ev: Evaluation) -> Iterable[Refusal]:
    for found in ev.numbers.contamination:
        if found.tripped:
            yield Refusal(
                RefusalCode.CONTAMINATION,
                f"{found.model} passes repositories created before its training cutoff "
                f"({found.training_cutoff}) more often: {found.summary()}",
            )


def _judges(ev: Evaluation) -> Iterable[Refusal]:
    if not ev.strict_trials or ev.reliability is None or ev.reliability.reliable:
        return
    floor = ev.specs.oracle.section("gate")["judge_kappa_floor"]
    why = "; ".join(ev.reliability.problems) or f"agreement below the kappa floor {floor}"
    yield Refusal(
        RefusalCode.UNRELIABLE_JUDGES,
        f"{ev.strict_trials} counted trial(s) were judged in strict mode by a judge pair "
        f"that is not reliable: {why}",
    )


def _thresholds(ev: Evaluation) -> Iterable[Refusal]:
    gate: dict[str, Any] = dict(ev.specs.oracle.section("gate"))
    minimum = int(gate["min_trials"])
    short = [f"{r.group} ({r.graded})" for r in ev.numbers.pass_rates if r.graded < minimum]
    if not ev.numbers.pass_rates:
        short = ["no model has any graded trial"]
    if short:
        yield Refusal(
            RefusalCode.THRESHOLD,
            f"fewer than {minimum} graded trials: {_some(short)}",
            threshold="min_trials",
        )
    total = len(ev.selection.trials)
    errors = ev.numbers.outcomes[Outcome.ERROR.value]
    limit = float(gate["max_infra_error_rate"])
    if total and errors / total > limit:
        yield Refusal(
            RefusalCode.THRESHOLD,
            f"{errors} of {total} counted trials ({errors / total:.1%}) ended in an "
            f"infrastructure error; the limit is {limit:.0%}",
            threshold="max_infra_error_rate",
        )


_RULES: tuple[Callable[[Evaluation], Iterable[Refusal]], ...] = (
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


def check(evaluation: Evaluation) -> GateDecision:
    """Every refusal the evaluation earns; publishable only when there is none."""
    return GateDecision.of([r for rule in _RULES for r in rule(evaluation)])
