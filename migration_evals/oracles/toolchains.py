"""Which toolchain each side of a trial builds on: the base as its authors built it, the
patched tree on the recipe's target.

The patched tree builds and tests on the recipe's ``sandbox.image`` (JDK 17 for the Java
recipe): reaching it is the migration's goal. The base commit builds on the toolchain its
ecosystem chooses for it (``Ecosystem.base_toolchain``) among the recipe's
``sandbox.base_images``, so that tier 3's obligations (the tests that pass at the base) are
the ones its authors' build passed, and what only the new toolchain breaks stays the
candidate's to fix (Maven: ``migration_evals.oracles.ecosystems.maven.toolchains``). A
recipe without ``base_images`` builds both sides on its image (Go switches releases
itself, as each ``go.mod`` asks).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from migration_evals.core.specs import Recipe

__all__ = [
    "BaseImage",
    "SideToolchain",
    "base_images",
    "patched_toolchain",
    "recipe_image_for_both_sides",
    "recipe_toolchain_images",
]


@dataclass(frozen=True, slots=True)
class SideToolchain:
    """The image one side of a trial builds in, the JDK it holds (None when the recipe
    names none) and why it was chosen."""

    image: str
    jdk: int | None = None
    why: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"image": self.image, "jdk": self.jdk, "why": self.why}


@dataclass(frozen=True, slots=True)
class BaseImage:
    """One of the recipe's ``base_images``: an image and the JDK it holds."""

    version: int
    image: str


def base_images(recipe: Recipe) -> tuple[list[BaseImage], int] | None:
    """The recipe's base images, oldest JDK first, and its default; None without any."""
    spec = recipe.sandbox.base_images
    if spec is None:
        return None
    jdks = sorted((BaseImage(e.jdk, e.image) for e in spec.jdks), key=_version)
    return jdks, spec.default


def _version(jdk: BaseImage) -> int:
    return jdk.version


def recipe_toolchain_images(recipe: Recipe) -> list[str]:
    """Every image a trial of ``recipe`` may build a side in, the target's first."""
    images = [recipe.sandbox.image]
    found = base_images(recipe)
    for jdk in found[0] if found else ():
        if jdk.image not in images:
            images.append(jdk.image)
    return images


def patched_toolchain(recipe: Recipe) -> SideToolchain:
    """The patched tree's: the recipe's image, the migration's target."""
    image = recipe.sandbox.image
    found = base_images(recipe)
    jdk = next((j.version for j in found[0] if j.image == image), None) if found else None
    return SideToolchain(image, jdk, "the recipe's target")


def recipe_image_for_both_sides(recipe: Recipe) -> SideToolchain:
    """The base's toolchain where its ecosystem chooses none of its own: the target's."""
    target = patched_toolchain(recipe)
    return SideToolchain(target.image, target.jdk, "the recipe's image for both sides")
