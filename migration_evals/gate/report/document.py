"""The report as one JSON-ready document: what ``report.json`` holds and the pages show."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from migration_evals.gate.diff_coverage import passes_by_state
from migration_evals.gate.evaluation import Evaluation
from migration_evals.gate.judging import NO_JUDGE_NOTE, judging, judging_note
from migration_evals.gate.provenance import Provenance, provenance
from migration_evals.gate.refusals import GateDecision
from migration_evals.gate.report.comparisons import (
    model_costs,
    paired_differences,
    pairwise_differences,
    task_grid,
)
from migration_evals.gate.trials import Outcome

__all__ = ["PLOTS", "SEED_INFERENCE_RATIO", "TRIALS_PAGE", "report_document"]

# The seed estimate the cost section compares this run's measurement with.
SEED_INFERENCE_RATIO = (70, 170)

PLOTS = {
    "funnel": "funnel.png",
    "pass_rates": "pass_rates.png",
    "contamination": "contamination.png",
    "judge_agreement": "judge_agreement.png",
    "gold_anchor": "gold_anchor.png",
    "cost": "cost.png",
    "differences": "differences.png",
}
TRIALS_PAGE = "trials.html"
_ERROR_EXAMPLES = 10


def _reliability(evaluation: Evaluation) -> str:
    found = evaluation.reliability
    if not evaluation.specs.oracle.judged:
        return f"not needed: {NO_JUDGE_NOTE}"
    if not evaluation.strict_trials:
        return "not needed: no counted trial was judged in strict mode"
    if found is None:
        return "not assessed"
    if found.reliable:
        return f"reliable ({evaluation.strict_trials} strict-mode trials)"
    return "UNRELIABLE: " + ("; ".join(found.problems) or "below the kappa floor")


def _errors(evaluation: Evaluation) -> dict[str, Any]:
    failed = [t for t in evaluation.selection.trials if t.outcome is Outcome.ERROR]
    return {
        "count": len(failed),
        "by_model": dict(sorted(Counter(t.model for t in failed).items())),
        "examples": [
            {
                "trial_id": t.trial_id,
                "changeset_id": t.changeset_id,
                "model": t.model,
                "reason": t.error_reason,
            }
            for t in failed[:_ERROR_EXAMPLES]
        ],
    }


def _measured_ratio(evaluation: Evaluation, found: Provenance) -> float | None:
    """Inference over infrastructure cost, counting only inference that was measured:
    hand-made and fabricated judge answers cost what someone wrote down, not what a model
    charged. Both sides as the counted answers cost when made: reused ones included."""
    cost = evaluation.numbers.cost
    seconds = cost.sandbox_s + found.reused_cost.get("sandbox_s", 0.0)
    infrastructure = round(seconds * cost.usd_per_second, 6)
    measured = found.measured_inference_usd
    if infrastructure <= 0 or measured <= 0:
        return None
    return round(measured / infrastructure, 2)


def _left_out(name: str, document: Mapping[str, Any]) -> str | None:
    """Why plot ``name`` would show nothing for ``document`` (None: it has something)."""
    numbers = document["numbers"]
    graded = [r for r in numbers["pass_rates"].values() if r["rate"] is not None]
    reasons = {
        "funnel": "no counted trials" if not numbers["trials"] else None,
        "pass_rates": "no graded trials" if not graded else None,
        "contamination": "no graded trials to bucket" if not numbers["contamination"] else None,
        "judge_agreement": None
        if document["judges"]["agreement"]["n"]
        else document["judging"]["note"]
        or "no counted trial was judged by two judges (strict mode), so there is no pair "
        "of verdicts to compare",
        "gold_anchor": None
        if document["anchor"]["n"]
        else f"no gold label matches a graded funnel verdict yet (the anchor is "
        f"{document['anchor']['state']})",
        "cost": None
        if numbers["cost"]["list_usd"] or numbers["cost"]["actual_usd"]
        else "nothing was spent",
        "differences": None
        if sum(1 for r in document["differences"] if r["difference"] is not None)
        else "fewer than two models have graded trials",
    }
    return reasons[name]


def report_document(
    evaluation: Evaluation,
    decision: GateDecision,
    generated_at: str,
    run_options: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The report of ``evaluation``; ``run_options`` (run id to the options stored with
    it) tells recorded envelopes from live ones."""
    chain = evaluation.chain
    counted = evaluation.selection.trials
    found = provenance(counted, run_options or {})
    tiers = [t.tier for t in evaluation.specs.oracle.tiers]
    document: dict[str, Any] = {
        "title": "migration-evals report",
        "generated_at": generated_at,
        "publishable": decision.publishable,
        "refusals": [r.to_dict() for r in decision.refusals],
        "banner": evaluation.anchor.banner(),
        "selection": evaluation.selection.to_dict(),
        "ledger": {
            "rows": chain.rows,
            "head_seq": chain.head_seq,
            "head_hash": chain.head_hash,
            "verified": chain.ok,
            "problems": list(chain.problems),
        },
        "stamps": evaluation.specs.stamp_report(),
        "numbers": evaluation.numbers.to_dict(),
        "anchor": evaluation.anchor.to_dict(),
        "judging": {"mode": judging(evaluation.specs), "note": judging_note(evaluation.specs)},
        "judges": {
            "agreement": evaluation.agreement.to_dict(),
            "reliability": _reliability(evaluation),
        },
        "infrastructure_errors": _errors(evaluation),
        "harking": [h.detail() for h in evaluation.harking],
        "seed_inference_ratio": list(SEED_INFERENCE_RATIO),
        "models": model_costs(counted, tiers),
        # Passes by what their tests executed of the changed main code (tier 3).
        "diff_coverage": passes_by_state(counted),
        "differences": pairwise_differences(counted),
        # The same comparisons task by task, where models were graded on the same tasks.
        "tasks": task_grid(counted),
        "paired": paired_differences(counted),
        "provenance": found.to_dict(),
        "measured_ratio": _measured_ratio(evaluation, found),
        "trials_page": TRIALS_PAGE,
    }
    # A plot with nothing to show is left out, with the sentence the pages print instead.
    reasons = {name: _left_out(name, document) for name in PLOTS}
    document["plots"] = {name: file for name, file in PLOTS.items() if reasons[name] is None}
    document["plots_left_out"] = {name: why for name, why in reasons.items() if why is not None}
    return document
