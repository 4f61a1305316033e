"""Tier 1, apply: safe, applies strictly, touched files parse, the static contract holds,
the test configuration is the base's and no source file shadows the platform's or a test
library's code. Evidence the contract gives as a ``notice`` (a change it leaves to the
judge, such as a file no Docker build reads) does not fail: a pass names it in its
reason, which the judge's prompt quotes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from migration_evals.core.model import Changeset, Evidence, Severity, Tier
from migration_evals.core.specs import Recipe
from migration_evals.oracles.ecosystems.registry import (
    check_contract,
    check_shadowing,
    check_test_config,
    source_languages,
)
from migration_evals.oracles.syntax import check_syntax
from migration_evals.oracles.tiers.base import TierOutcome, TrialContext

__all__ = ["ApplyOracle"]


class ApplyOracle:
    """Runs locally: the diff screen, ``git apply``, tree-sitter, the recipe's contract."""

    tier = Tier.APPLY
    identity = "apply/2"

    def identity_for(self, changeset: Changeset, recipe: Recipe) -> str:
        return self.identity

    def key_material(self, context: TrialContext) -> Mapping[str, Any]:
        return {}

    def evaluate(self, context: TrialContext) -> TierOutcome:
        applied = context.workspace.apply()
        if not applied.ok:
            first = applied.problems[0]
            return TierOutcome.failed(f"patch refused: {first}", applied.problems)
        view = context.workspace.view()
        syntax = check_syntax(view, source_languages())
        if syntax:
            return TierOutcome.failed(f"touched files do not parse: {syntax[0]}", syntax)
        found = check_contract(context.recipe, context.changeset.recipe_params, view)
        contract = [e for e in found if e.severity is not Severity.NOTICE]
        if contract:
            return TierOutcome.failed(f"recipe contract not met: {contract[0]}", contract)
        # What the contract names without failing (files no build reads) goes on to the
        # judge, in the reason its prompt quotes.
        notices = [e for e in found if e.severity is Severity.NOTICE]
        weakened = check_test_config(context.recipe, view)
        if weakened:
            return TierOutcome.failed(
                f"the patch weakens the test configuration: {weakened[0]}", weakened
            )
        shadows = check_shadowing(context.recipe, view)
        if shadows:
            return TierOutcome.failed(
                f"the patch shadows code it does not own: {shadows[0]}", shadows
            )
        files = len(applied.changes)
        reason = f"applies cleanly; {files} file(s) parse; contract holds{_named(notices)}"
        return TierOutcome.passed(reason, evidence=tuple(notices))


_NAMED_IN_REASON = 5


def _named(notices: Sequence[Evidence]) -> str:
    """The notices, for the reason: each one, up to a few."""
    if not notices:
        return ""
    shown = "; ".join(str(e) for e in notices[:_NAMED_IN_REASON])
    more = len(notices) - _NAMED_IN_REASON
    return f"; for review: {shown}" + (f" (and {more} more)" if more > 0 else "")
