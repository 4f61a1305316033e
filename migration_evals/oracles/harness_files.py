"""Files the harness makes for a project before it builds, laid over both trees for every
run of it (a GOPATH-era Go tree's go.mod and go.sum:
``migration_evals.oracles.ecosystems.go.gopath``).

An ecosystem makes them when the build plan asks (``Ecosystem.made_files``), with the
services the plan runs its sandboxed steps through; the plan
(``migration_evals.oracles.builds``) keeps them beside the project's resolutions, names
them in its cache key and refuses a trial whose files could not be made.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from migration_evals.core.errors import SpecError
from migration_evals.core.model import FabricatedMark
from migration_evals.core.ports import Sandbox, SandboxRequest, SandboxResult
from migration_evals.core.spec_types import CommandStep
from migration_evals.core.specs import Recipe
from migration_evals.core.stamps import sha256_hex, stamp
from migration_evals.oracles.baselines import BaselineCache
from migration_evals.oracles.projects import Project
from migration_evals.oracles.tiers.base import TrialContext

__all__ = ["BuildServices", "MadeFiles", "files_digest", "noting", "resolve_step"]


class MadeFiles(Protocol):
    """The files made for one project, or why none could be made (``failure``)."""

    @property
    def project(self) -> Project: ...

    @property
    def files(self) -> Mapping[str, bytes]:
        """Paths from the repository root, and their contents."""

    @property
    def env(self) -> Mapping[str, str]:
        """What the project's builds over these files add to the environment."""

    @property
    def failure(self) -> str:
        """The whole reason no files could be made; "" when they were."""

    @property
    def lines(self) -> tuple[str, ...]:
        """The tool's own lines, when it failed."""

    @property
    def fabricated(self) -> tuple[FabricatedMark, ...]: ...

    def details(self) -> dict[str, Any]:
        """What an envelope keeps of them."""


@dataclass(frozen=True, slots=True)
class BuildServices:
    """What the build plan's sandboxed steps run through: the sandbox, the cache of
    outcomes kept across trials, and the registry gate's identity (part of their keys)."""

    sandbox: Sandbox
    cache: BaselineCache
    registry: str


def files_digest(files: Mapping[str, bytes]) -> str:
    """Names a set of harness-made files (path and content)."""
    return stamp({path: sha256_hex(content) for path, content in sorted(files.items())})


def resolve_step(recipe: Recipe) -> CommandStep:
    """The recipe's dependency resolution, which a recipe naming a build system has."""
    if recipe.sandbox.resolve is None:
        raise SpecError(
            f"recipe {recipe.name}", "sandbox.resolve", "a build system needs a resolve step"
        )
    return recipe.sandbox.resolve


def noting(context: TrialContext, side: str) -> Callable[[SandboxRequest, SandboxResult], None]:
    """Notes a run in the trial's log of sandboxed commands as ``side``'s."""
    return lambda request, result: context.logs.note(request, result, side)
