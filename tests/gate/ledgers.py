"""Crafted ledgers for the gate's tests: trials described by a plan, written through the
real ``Ledger.append_trials`` so the hash chain is the real one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

from migration_evals.core.gold import GoldLabel, GoldRow, upsert_gold_rows
from migration_evals.core.model import (
    Changeset,
    Envelope,
    FabricatedMark,
    Stamps,
    Tier,
    Trial,
    Verdict,
)
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.gate.trials import TierFacts, TrialFacts, outcome_of

if TYPE_CHECKING:
    from migration_evals.gate.evaluation import Evaluation
    from migration_evals.gate.report import TrialsPage

MODELS = ("claude-sonnet-4-5", "gpt-5", "gemini-2.5-pro")
PRE = date(2020, 1, 1)  # before every model's training cutoff
POST = date(2026, 6, 1)  # after every model's training cutoff
SANDBOX_S = {Tier.COMPILE: 10.0, Tier.TESTS: 40.0}
TOKENS = (3000, 200)


@dataclass
class Plan:
    """One trial: ``outcome`` is ``pass`` or ``<fail|error|inconclusive|budget>@<tier>``."""

    changeset_id: str
    model: str = "gpt-5"
    recipe: str = "java8-to-17"
    outcome: str = "pass"
    created: date | None = PRE
    run_id: str = "run-1"
    strict: tuple[str, str] | None = None
    stamps: Stamps | None = None
    marks: Mapping[Tier, tuple[FabricatedMark, ...]] = field(default_factory=dict)
    details: Mapping[Tier, Mapping[str, Any]] = field(default_factory=dict)
    cached: bool = False


def _sandbox_run(seconds: float) -> dict[str, Any]:
    return {
        "image_id": "sha256:" + "b" * 64,
        "exit_code": 0,
        "timed_out": False,
        "duration_s": seconds,
        "output_tail": "BUILD SUCCESS",
        "output_truncated": False,
    }


def _transcript(role: str, model: str, verdict: str) -> dict[str, Any]:
    return {
        "role": role,
        "model": model,
        "answer": {
            "verdict": verdict,
            "confidence": 0.9,
            "rationale": "ok",
            "evidence": ["+release 17"],
            "problem": "",
        },
        "stop_reason": "end_turn",
        "input_tokens": TOKENS[0],
        "output_tokens": TOKENS[1],
        "cost_usd": 0.012,
        "fabricated": [],
    }


def _details(tier: Tier, verdict: str, strict: tuple[str, str] | None) -> dict[str, Any]:
    if tier is Tier.COMPILE:
        return _sandbox_run(SANDBOX_S[tier])
    if tier is Tier.TESTS:
        half = SANDBOX_S[tier] / 2
        return {"baseline": _sandbox_run(half), "patched": _sandbox_run(half), "reruns": 0}
    if tier is Tier.JUDGE:
        if strict:
            return {
                "strict": True,
                "judges": [
                    _transcript("primary", "claude-sonnet-4-5", strict[0]),
                    _transcript("secondary", "gpt-5", strict[1]),
                ],
            }
        return {"strict": False, "judges": [_transcript("primary", "claude-sonnet-4-5", verdict)]}
    return {}


def _actual(tier: Tier, details: Mapping[str, Any], rate: float) -> float:
    if tier in SANDBOX_S:
        return SANDBOX_S[tier] * rate
    if tier is Tier.JUDGE:
        return sum(j.get("cost_usd", 0.0) for j in details["judges"])
    return 0.0


def build_trial(plan: Plan, specs: SpecSet, trial_id: str) -> Trial:
    stamps = plan.stamps or specs.stamps_for(plan.recipe)
    stop_verdict, _, stop_tier = plan.outcome.partition("@")
    rate = specs.oracle.sandbox.usd_per_second
    envelopes, stopped = [], False
    for spec in specs.oracle.tiers:
        tier = spec.tier
        verdict, adapter, list_cost = Verdict.PASS.value, "fake/1", spec.list_cost_usd
        if stopped:
            verdict, adapter, list_cost = Verdict.SKIPPED.value, "", 0.0
        elif tier.value == stop_tier:
            verdict = Verdict.INCONCLUSIVE.value if stop_verdict == "budget" else stop_verdict
            stopped = True
            if stop_verdict == "budget":
                adapter, list_cost = "", 0.0
        ran = verdict not in ("skipped",) and adapter
        details = dict(_details(tier, verdict, plan.strict)) if ran else {}
        details.update(plan.details.get(tier, {}))
        cached = plan.cached and bool(ran)
        envelopes.append(
            Envelope(
                trial_id=trial_id,
                changeset_id=plan.changeset_id,
                tier=tier,
                verdict=Verdict(verdict),
                list_cost_usd=0.0 if cached else list_cost,
                actual_cost_usd=0.0 if cached or not ran else _actual(tier, details, rate),
                duration_s=1.0,
                stamps=stamps,
                reason="infrastructure error: engine down" if verdict == "error" else "",
                fabricated=plan.marks.get(tier, ()),
                cached=cached,
                adapter=adapter,
                details=details,
            )
        )
    changeset = Changeset(
        id=plan.changeset_id,
        repo=f"https://example.com/{plan.changeset_id}.git",
        base_commit="a" * 40,
        patch=f"patch of {plan.changeset_id}",
        recipe=plan.recipe,
        model=plan.model,
        repo_created_at=plan.created,
    )
    return Trial(trial_id, plan.run_id, changeset, tuple(envelopes))


def append(store: Store, specs: SpecSet, plans: Iterable[Plan]) -> list[Trial]:
    """Append one trial per plan (ids unique per run and changeset)."""
    trials = [
        build_trial(plan, specs, f"t-{plan.run_id}-{plan.changeset_id}".replace("/", "-"))
        for plan in plans
    ]
    store.ledger.append_trials([(t, {}) for t in trials])
    return trials


def balanced(per_bucket: int = 20, run_id: str = "run-1") -> list[Plan]:
    """Per model, ``per_bucket`` trials before and after its cutoff, half of each passing."""
    plans = []
    for model in MODELS:
        for created in (PRE, POST):
            for n in range(per_bucket):
                recipe = "java8-to-17" if n % 2 else "go-import-rewrite"
                outcome = "pass" if n < per_bucket // 2 else "fail@compile"
                name = f"{model}/{created.year}/{n:03d}"
                plans.append(Plan(name, model, recipe, outcome, created, run_id))
    return plans


def add_gold(store: Store, agree: int = 20, disagree: int = 0) -> None:
    """Gold rows: ``agree`` pass/accepted and fail/rejected pairs each, ``disagree`` crossed."""
    now = datetime(2026, 1, 1, tzinfo=UTC)
    rows = (
        [(Verdict.PASS, GoldLabel.ACCEPTED)] * agree
        + [(Verdict.FAIL, GoldLabel.REJECTED)] * agree
        + [(Verdict.PASS, GoldLabel.REJECTED)] * disagree
        + [(Verdict.FAIL, GoldLabel.ACCEPTED)] * disagree
    )
    upsert_gold_rows(
        store.ledger,
        [
            GoldRow(
                repo="example/gold",
                pr_number=number,
                label=label,
                computed_at=now,
                funnel_verdict=verdict,
            )
            for number, (verdict, label) in enumerate(rows, start=1)
        ],
    )


_OUTCOME_TIERS = {
    "pass": ("pass", "pass", "pass", "pass"),
    "fail": ("pass", "fail", "skipped", "skipped"),
    "inconclusive": ("pass", "pass", "inconclusive", "skipped"),
    "error": ("error", "skipped", "skipped", "skipped"),
}


def facts(
    n: int,
    model: str = "gpt-5",
    *,
    outcome: str = "pass",
    created: date | None = PRE,
    recipe: str = "java8-to-17",
    recorded_at: str = "2026-11-29T00:00:00+00:00",
) -> TrialFacts:
    """Trial facts without a ledger, for the statistics' tests."""
    tiers = tuple(
        TierFacts(tier, Verdict(v), 0.01, 0.001)
        for tier, v in zip(Tier, _OUTCOME_TIERS[outcome], strict=True)
    )
    return TrialFacts(
        trial_id=f"t{n}",
        run_id="run-1",
        changeset_id=f"c{n}",
        model=model,
        recipe=recipe,
        repo_created_at=created,
        recorded_at=recorded_at,
        tiers=tiers,
        digest=f"{n:064x}",
        outcome=outcome_of(tiers),
        first_seq=n,
        last_seq=n,
    )


def many(count: int, start: int = 0, **options: Any) -> list[TrialFacts]:
    return [facts(start + n, **options) for n in range(count)]


def page_of(store: Store, evaluation: Evaluation, specs: SpecSet) -> TrialsPage:
    """The trials page of ``evaluation``, built from ``store``'s parts as `report` builds it
    (the report package loads matplotlib: only the tests that draw a page load it)."""
    from migration_evals.gate.report import trials_page
    from migration_evals.gate.trial_detail import run_records

    return trials_page(
        store.trials, store.artifacts, evaluation.selection.trials, specs, run_records(store.runs)
    )


def registered_early(specs: SpecSet) -> SpecSet:
    """``specs`` with every hypothesis registered long before any result a test writes."""
    early = {key: replace(h, registered_at=date(2000, 1, 1)) for key, h in specs.hypotheses.items()}
    return replace(specs, hypotheses=early)
