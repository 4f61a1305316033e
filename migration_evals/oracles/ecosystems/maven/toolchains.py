"""The JDK a Maven base commit builds on: the oldest of the recipe's ``base_images`` on
which its build is consistent with itself.

``java-level`` picks the oldest JDK of the list on which the base's Maven build is
consistent with itself: every Java level the modules of the project's reactor compile for
(read statically, with the profiles a build on that JDK activates:
``migration_evals.oracles.ecosystems.maven.levels``) must be one that JDK's javac takes. A
``source`` or ``target`` up to the JDK's own version does (1.5 to 1.7 included: javac 8
still compiles them, javac 17 refuses them); a ``release`` too, but javac has that flag
only since 9. A build that declares no level this can read builds on the recipe's
``default``; one that asks for more than the newest JDK offers builds on the newest, and
if it does not build there, that is the base's problem (``error``), never the
candidate's. The patched tree builds on the recipe's target
(``migration_evals.oracles.toolchains``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from migration_evals.core.specs import Recipe
from migration_evals.oracles.ecosystems.maven.levels import Setting, module_settings
from migration_evals.oracles.ecosystems.maven.projects import reactor_poms
from migration_evals.oracles.projects import Project
from migration_evals.oracles.reads import Read, ReadsMemo
from migration_evals.oracles.toolchains import (
    BaseImage,
    SideToolchain,
    base_images,
    patched_toolchain,
    recipe_image_for_both_sides,
)
from migration_evals.oracles.tree import FileChange, TreeView

__all__ = ["base_toolchain", "build_jdk", "java_level"]

_FIRST_RELEASE_FLAG = 9  # javac --release exists since JDK 9


def build_jdk(recipe: Recipe) -> int | None:
    """The JDK the patched tree builds with (the recipe's target), which decides the POMs'
    JDK-activated profiles for the checks that read the patch's build; None when the
    recipe names no JDK for its image."""
    return patched_toolchain(recipe).jdk


@dataclass(frozen=True, slots=True)
class _BaseTree:
    """A ``TreeView`` that reads the base commit (``read``) on both sides."""

    read: Read

    @property
    def changes(self) -> Sequence[FileChange]:
        return ()

    def read_base(self, path: str) -> bytes | None:
        return self.read(path)

    def files(self) -> Iterable[str]:
        # The choice reads only the POMs a reactor names, each through ``read``: what it
        # is kept by (``ReadsMemo``). Listing the tree would be a read it is not kept by.
        raise NotImplementedError("the base toolchain reads POMs by path only")


def base_toolchain(recipe: Recipe, tree: TreeView, project: Project) -> SideToolchain:
    """The base commit's toolchain for Maven ``project`` (see the module docstring)."""
    found = base_images(recipe)
    if found is None:
        return recipe_image_for_both_sides(recipe)
    jdks, default = found
    key = (project.root, tuple((jdk.version, jdk.image) for jdk in jdks), default)
    return _TOOLCHAINS.answer(
        key, tree.read_base, lambda read: _choose(_BaseTree(read), project, jdks, default)
    )


def _choose(
    base: _BaseTree, project: Project, jdks: Sequence[BaseImage], default: int
) -> SideToolchain:
    declared = False
    for jdk in jdks:
        # The reactor too is the one a build on this JDK reads (a profile may add modules).
        poms = reactor_poms(base, project.root, patched=False, jdk=jdk.version)
        levels = _levels(module_settings(base, poms, jdk=jdk.version) or [])
        declared = declared or bool(levels)
        if levels and all(_compiles(setting, level, jdk.version) for setting, level in levels):
            return SideToolchain(jdk.image, jdk.version, f"declares {_highest(levels)}")
    if declared:
        newest = jdks[-1]
        why = f"declares more than JDK {newest.version} compiles; built on the newest"
        return SideToolchain(newest.image, newest.version, why)
    chosen = next((j for j in jdks if j.version >= default), jdks[-1])
    why = f"declares no Java level it can be read for; the recipe's default, JDK {default}"
    return SideToolchain(chosen.image, chosen.version, why)


# Every trial on a base asks for the base's toolchain (``ReadsMemo``).
_TOOLCHAINS: ReadsMemo[SideToolchain] = ReadsMemo()


def _levels(settings: Sequence[Setting]) -> list[tuple[Setting, int]]:
    """The settings whose value reads as a Java level, with that level."""
    found = []
    for setting in settings:
        level = java_level(setting.value)
        if level is not None:
            found.append((setting, level))
    return found


def java_level(text: str) -> int | None:
    """8 for "1.8" or "8", 17 for "17"; None for anything that is not a Java level."""
    match = re.fullmatch(r"1\.(\d+)|(\d+)", text.strip().strip("'\""))
    if match is None:
        return None
    return int(match.group(1) or match.group(2))


def _compiles(setting: Setting, level: int, jdk: int) -> bool:
    # java.version, which conventional parents map to the compiler, counts as a plain
    # level: Spring Boot 2 maps it to source and target (Spring Boot 3, to release 17+).
    if "release" in setting.name:
        return jdk >= _FIRST_RELEASE_FLAG and level <= jdk
    return level <= jdk


def _highest(levels: Sequence[tuple[Setting, int]]) -> str:
    setting, _level = max(levels, key=lambda item: item[1])
    return f"Java {setting.value} ({setting.name} in {setting.path}:{setting.line})"
