"""Tier 1, apply: safe, applies strictly, touched files parse, the static contract holds,
the test configuration is the base's and no source file shadows the platform's or a test
library's code."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.model import Changeset, Tier
from core.specs import Recipe
from oracles.contracts import check_contract
from oracles.shadowing import check_shadowing
from oracles.syntax import check_syntax
from oracles.test_config import check_test_config
from oracles.tiers.base import TierOutcome, TrialContext

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
        syntax = check_syntax(view)
        if syntax:
            return TierOutcome.failed(f"touched files do not parse: {syntax[0]}", syntax)
        contract = check_contract(context.recipe, context.changeset.recipe_params, view)
        if contract:
            return TierOutcome.failed(f"recipe contract not met: {contract[0]}", contract)
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
        return TierOutcome.passed(f"applies cleanly; {files} file(s) parse; contract holds")
