"""``go-imports``: touched Go files no longer import the old paths, and the patch adds
none of the constructs the recipe's ``contract.outside`` names."""

from __future__ import annotations

from migration_evals.oracles.ecosystems.go.imports import check_go_imports
from migration_evals.oracles.ecosystems.go.outside import check_go_outside
from migration_evals.oracles.ecosystems.interface import ContractKind, all_of

__all__ = ["CONTRACT_KIND"]

CONTRACT_KIND = ContractKind("go-imports", all_of(check_go_imports, check_go_outside))
