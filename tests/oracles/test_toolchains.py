"""Each side's toolchain: the patched tree on the recipe's target, the base on what its
ecosystem chooses among the recipe's base images."""

from __future__ import annotations

from migration_evals.core.specs import SpecSet
from migration_evals.oracles.ecosystems.registry import ecosystem_of
from migration_evals.oracles.projects import Project
from migration_evals.oracles.toolchains import patched_toolchain, recipe_toolchain_images
from migration_evals.oracles.tree import MemoryTree

JAVA8 = "migration-evals/java8:2"
JAVA11 = "migration-evals/java11:2"
JAVA17 = "migration-evals/java17:4"


def test_the_patched_tree_builds_on_the_recipes_target(specs: SpecSet) -> None:
    chosen = patched_toolchain(specs.recipe("java8-to-17"))
    assert (chosen.image, chosen.jdk) == (JAVA17, 17)


def test_recipes_without_base_images_build_both_sides_on_their_image(specs: SpecSet) -> None:
    recipe = specs.recipe("go-import-rewrite")
    project = Project("go", "")
    ecosystem = ecosystem_of(recipe)
    assert ecosystem is not None
    chosen = ecosystem.base_toolchain(recipe, MemoryTree({"go.mod": b"module m\n"}, {}), project)
    assert chosen.image == recipe.sandbox.image == patched_toolchain(recipe).image
    assert recipe_toolchain_images(recipe) == [recipe.sandbox.image]


def test_every_image_a_java_trial_may_use_is_named_target_first(specs: SpecSet) -> None:
    assert recipe_toolchain_images(specs.recipe("java8-to-17")) == [JAVA17, JAVA8, JAVA11]
