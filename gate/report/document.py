"""The report as one JSON-ready document: what ``report.json`` holds and the pages show."""

from __future__ import annotations

from collections import Counter
from typing import Any

from gate.evaluation import Evaluation
from gate.refusals import GateDecision
from gate.trials import Outcome

__all__ = ["PLOTS", "SEED_INFERENCE_RATIO", "report_document"]

# The seed estimate the cost section compares this run's measurement with.
SEED_INFERENCE_RATIO = (70, 170)

PLOTS = {
    "funnel": "funnel.png",
    "pass_rates": "pass_rates.png",
    "contamination": "contamination.png",
    "judge_agreement": "judge_agreement.png",
    "gold_anchor": "gold_anchor.png",
    "cost": "cost.png",
}
_ERROR_EXAMPLES = 10


def _reliability(evaluation: Evaluation) -> str:
    found = evaluation.reliability
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


def report_document(
    evaluation: Evaluation, decision: GateDecision, generated_at: str
) -> dict[str, Any]:
    chain = evaluation.chain
    return {
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
        "judges": {
            "agreement": evaluation.agreement.to_dict(),
            "reliability": _reliability(evaluation),
        },
        "infrastructure_errors": _errors(evaluation),
        "harking": [h.detail() for h in evaluation.harking],
        "seed_inference_ratio": list(SEED_INFERENCE_RATIO),
        "plots": dict(PLOTS),
    }
