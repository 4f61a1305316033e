"""Tier 1: what decides which tests run, and how strictly code is checked, stays the base's.

The recipe spec lists the setting families it guards (``integrity.settings``); the
recipe's ecosystem compares them between the base and the patched tree of every project
the tiers build (``Ecosystem.check_test_config``) and returns evidence for each one the
patch weakens, naming the setting, the file and the line: Maven's POM and ``.mvn``
settings (``migration_evals.oracles.ecosystems.maven.test_config``), Go's build
constraints and directives (``migration_evals.oracles.ecosystems.go.test_settings``).

A recipe without an ``integrity`` section, or with no build system, is not checked.
"""

from __future__ import annotations

from migration_evals.core.spec_types import IntegritySpec
from migration_evals.core.specs import Recipe

__all__ = ["integrity_of"]


def integrity_of(recipe: Recipe) -> IntegritySpec:
    """The recipe's ``integrity`` section; nothing to compare when it has none."""
    return recipe.integrity or _NO_INTEGRITY


_NO_INTEGRITY = IntegritySpec(settings=(), shadowing=False)
