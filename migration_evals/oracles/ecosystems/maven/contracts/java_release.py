"""``java-release``: every build file targets ``contract.target_release``, and the patch
adds none of the constructs the recipe's ``contract.outside`` names."""

from __future__ import annotations

from migration_evals.oracles.ecosystems.interface import ContractKind, all_of
from migration_evals.oracles.ecosystems.maven.outside import check_java_outside
from migration_evals.oracles.ecosystems.maven.release import check_java_release

__all__ = ["CONTRACT_KIND"]

CONTRACT_KIND = ContractKind("java-release", all_of(check_java_release, check_java_outside))
