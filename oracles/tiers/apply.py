"""Tier 1, apply: safe, applies strictly, touched files parse, the static contract holds."""

from __future__ import annotations

from core.model import Changeset, Tier
from core.specs import Recipe
from oracles.contracts import check_contract
from oracles.syntax import check_syntax
from oracles.tiers.base import TierOutcome, TrialContext

__all__ = ["ApplyOracle"]


class ApplyOracle:
    """Runs locally: the diff screen, ``git apply``, tree-sitter, the recipe's contract."""

    tier = Tier.APPLY
    identity = "apply/1"

    def identity_for(self, changeset: Changeset, recipe: Recipe) -> str:
        return self.identity

    def evaluate(self, context: TrialContext) -> TierOutcome:
        applied = context.workspace.apply()
        if not applied.ok:
            first = applied.problems[0]
            return TierOutcome.failed(f"patch refused: {first}", applied.problems)
        view = context.workspace.view()
        syntax = check_syntax(view)
        if syntax:
            return TierOutcome.failed(f"touched files do not parse: {syntax[0]}", syntax)
        contract = check_contract(context.recipe, context.changeset.recipe_params, view)
        if contract:
            return TierOutcome.failed(f"recipe contract not met: {contract[0]}", contract)
        files = len(applied.changes)
        return TierOutcome.passed(f"applies cleanly; {files} file(s) parse; contract holds")
