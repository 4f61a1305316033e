"""Why the gate refuses to publish: one code per reason, each with a human detail.

The codes are a stable public contract (``gate check --json`` prints them and the bot
shows them in check runs), so they are an enum, never ad-hoc strings. Threshold refusals
carry the name of the threshold from ``specs/oracle.yaml`` (``threshold:min_trials``).
Every refusal also names what addresses it (``REMEDIES``): a refusal that leaves its
reader guessing stops the evaluation instead of guiding it to a usable number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = ["REMEDIES", "GateDecision", "Refusal", "RefusalCode"]


class RefusalCode(StrEnum):
    """Every reason the gate can give, in the order ``gate check`` lists them."""

    LEDGER_TAMPERED = "ledger_tampered"
    INCOMPLETE_RUN = "incomplete_run"
    STALE_STAMP = "stale_stamp"
    FABRICATED = "fabricated"
    HARKING = "harking"
    BROKEN_ANCHOR = "broken_anchor"
    CONTAMINATION = "contamination"
    UNRELIABLE_JUDGES = "unreliable_judges"
    THRESHOLD = "threshold"


# By label: the command (and, where it takes one, the step) that addresses each refusal.
REMEDIES: dict[str, str] = {
    "ledger_tampered": "`migration-evals ledger verify` lists the rows that break the chain; "
    "restore the database from a copy taken before the edit, or grade afresh into a new one "
    "(`migration-evals run CHANGESETS.jsonl --db URL`)",
    "incomplete_run": "finish an interrupted run with `migration-evals run --resume RUN_ID`; "
    "a running one counts once it completes (`migration-evals gate check` again then)",
    "stale_stamp": "re-grade them under the current specs with `migration-evals run "
    "CHANGESETS.jsonl`, or count only "
    "a run graded under the current specs: `migration-evals gate check --run RUN_ID`",
    "fabricated": "`migration-evals show TRIAL_ID` names each cassette miss; record the "
    "missing cassettes (`migration-evals run CHANGESETS.jsonl --mode record`, or "
    "`--sandbox record` for the sandbox alone) or grade live (`--mode live`)",
    "harking": "register a new hypothesis under specs/hypotheses/ before grading, and test it "
    "on a run graded after it (`migration-evals run CHANGESETS.jsonl`, then "
    "`migration-evals gate check --run RUN_ID`)",
    "broken_anchor": "grow the gold anchor: `migration-evals mine gold --repo OWNER/NAME "
    "--recipe RECIPE --mode live` with MIGRATION_EVALS_GITHUB_TOKEN set, or `migration-evals "
    "mine gold --git PATH_OR_URL --recipe RECIPE` with git alone; `migration-evals mine status` "
    "shows the labels so far",
    "contamination": "`migration-evals report --out DIR` shows the pass rates before and after "
    "the cutoff; grade the model on repositories created after its training cutoff "
    "(specs/models.yaml) and quote those",
    "unreliable_judges": "`migration-evals judges reliability` shows each kappa; grade without "
    "--strict, or change the judge pair in specs/oracle.yaml and re-grade",
    "threshold:min_trials": "grade more changesets of those models: `migration-evals run "
    "CHANGESETS.jsonl` (`migration-evals cost --repos N --models M` forecasts what it costs)",
    "threshold:max_infra_error_rate": "`migration-evals show TRIAL_ID` shows why a trial "
    "errored (Docker engine, repository, registries, judge keys); fix that and re-grade with "
    "`migration-evals run CHANGESETS.jsonl`",
}


@dataclass(frozen=True, slots=True)
class Refusal:
    """One reason not to publish; ``threshold`` names the violated threshold."""

    code: RefusalCode
    detail: str
    threshold: str | None = None

    @property
    def label(self) -> str:
        """The code as printed: ``threshold:<name>`` for thresholds, the bare code otherwise."""
        if self.code is RefusalCode.THRESHOLD:
            return f"{self.code.value}:{self.threshold}"
        return self.code.value

    @property
    def remedy(self) -> str:
        return REMEDIES.get(self.label, "`migration-evals gate check --help`")

    @property
    def advice(self) -> str:
        """The detail followed by what addresses it: what every output shows."""
        return f"{self.detail.rstrip('.')}. Next: {self.remedy}"

    def to_dict(self) -> dict[str, str]:
        return {"code": self.label, "detail": self.advice, "remedy": self.remedy}


@dataclass(frozen=True, slots=True)
class GateDecision:
    """The gate's verdict: publishable only when there is no refusal at all."""

    refusals: tuple[Refusal, ...]

    @property
    def publishable(self) -> bool:
        return not self.refusals

    def codes(self) -> list[str]:
        return [r.label for r in self.refusals]

    def to_dict(self) -> dict[str, Any]:
        return {"publishable": self.publishable, "refusals": [r.to_dict() for r in self.refusals]}

    @classmethod
    def of(cls, refusals: Sequence[Refusal]) -> GateDecision:
        order = list(RefusalCode)
        return cls(tuple(sorted(refusals, key=lambda r: (order.index(r.code), r.label))))
