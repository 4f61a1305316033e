"""``base-image``: FROM lines move to the new images, and nothing else a build reads
changes (its recipes declare ``build_inputs: unchanged``, so their stamp says which rule
graded them)."""

from __future__ import annotations

from migration_evals.oracles.ecosystems.dockerfile.from_lines import check_base_image
from migration_evals.oracles.ecosystems.interface import ContractKind

__all__ = ["CONTRACT_KIND"]

CONTRACT_KIND = ContractKind(
    "base-image", check_base_image, settings=(("build_inputs", "unchanged"),)
)
