"""Static contracts: what a recipe promises about the patched tree, checked without a build.

``check_contract`` dispatches on the recipe's ``contract.kind``::

    java-release  migration_evals.oracles.contracts.java    every build file targets
    contract.target_release
    go-imports    migration_evals.oracles.contracts.go      touched Go files no longer import the
    old paths base-image    migration_evals.oracles.contracts.docker  FROM lines move to the new
    images, nothing else

and, for the kinds whose recipes name them under ``contract.outside``, the constructs no
migration of that kind explains, added by the patch (``migration_evals.oracles.contracts.outside``;
found by ``go_outside`` and ``java_outside``). Each check is a pure function of (recipe,
changeset params, tree). An empty list means
the contract holds; each ``Evidence`` is one way it does not. An unknown kind is a broken
spec (``SpecError``), never the candidate's fault.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from migration_evals.core.errors import SpecError
from migration_evals.core.model import Evidence
from migration_evals.core.specs import Recipe
from migration_evals.oracles.contracts.docker import check_base_image
from migration_evals.oracles.contracts.go import check_go_imports
from migration_evals.oracles.contracts.go_outside import check_go_outside
from migration_evals.oracles.contracts.java import check_java_release
from migration_evals.oracles.contracts.java_outside import check_java_outside
from migration_evals.oracles.tree import TreeView

__all__ = ["ContractCheck", "check_contract"]

ContractCheck = Callable[[Recipe, Mapping[str, Any], TreeView], list[Evidence]]


def _and(*checks: ContractCheck) -> ContractCheck:
    """One check reporting every evidence of ``checks``, in order."""

    def check(recipe: Recipe, params: Mapping[str, Any], tree: TreeView) -> list[Evidence]:
        return [e for each in checks for e in each(recipe, params, tree)]

    return check


_CHECKS: Mapping[str, ContractCheck] = {
    "java-release": _and(check_java_release, check_java_outside),
    "go-imports": _and(check_go_imports, check_go_outside),
    "base-image": check_base_image,
}


def check_contract(recipe: Recipe, params: Mapping[str, Any], tree: TreeView) -> list[Evidence]:
    """Evidence against ``tree`` keeping ``recipe``'s static contract; empty if it holds."""
    kind = recipe.contract.get("kind")
    check = _CHECKS.get(kind) if isinstance(kind, str) else None
    if check is None:
        known = ", ".join(sorted(_CHECKS))
        raise SpecError(f"recipe {recipe.name}", "contract.kind", f"one of {known}, not {kind!r}")
    return check(recipe, params, tree)
