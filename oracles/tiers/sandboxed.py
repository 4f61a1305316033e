"""Building sandbox requests from a recipe; shared by the compile and tests tiers.

Every request pins the content ids of the images it depends on (``SandboxRequest.pinned``):
the recipe's image for a run, the images a Dockerfile builds FROM for a build. The ids go
into cassette keys, envelopes and (through ``image_identity``) the cascade's cache keys.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.errors import SandboxError
from core.model import Changeset, FabricatedMark, Tier
from core.ports import Sandbox, SandboxAction, SandboxRequest, SandboxResult
from core.specs import Recipe
from oracles.contracts.docker import base_images
from oracles.sandbox.commands import build_arguments
from oracles.tiers.base import TrialContext

__all__ = [
    "DOCKERFILE_IMAGE",
    "TrialSandbox",
    "image_identity",
    "recipe_images",
    "sandbox_cost",
    "sandbox_details",
]

DOCKERFILE_IMAGE = "@dockerfile"  # a recipe whose image is built from the tree's Dockerfile


def recipe_images(recipe: Recipe, changeset: Changeset) -> list[str]:
    """Images a trial of ``recipe`` depends on, known before its tree is read: the recipe's
    image, or for Dockerfile recipes the images its parameters move between."""
    image = str(recipe.sandbox["image"])
    if image != DOCKERFILE_IMAGE:
        return [image]
    rewrites: Mapping[str, str] = changeset.recipe_params.get("rewrites") or {}
    return sorted({*rewrites.keys(), *rewrites.values()})


def image_identity(sandbox: Sandbox, recipe: Recipe, changeset: Changeset) -> str:
    """The image ids a trial's sandbox tiers depend on, for their cache keys."""
    parts = []
    for image in recipe_images(recipe, changeset):
        try:
            parts.append(f"{image}={sandbox.resolve(image).id}")
        except SandboxError:
            # The tier itself will fail with the same error, as an uncached `error`.
            parts.append(f"{image}=unresolved")
    return " ".join(parts)


@dataclass
class TrialSandbox:
    """One tier's use of the sandbox for one trial: builds its requests, runs them, and
    keeps every fabricated mark (replay misses, image or run) for the tier's outcome."""

    sandbox: Sandbox
    context: TrialContext
    fabricated: list[FabricatedMark] = field(default_factory=list)

    def pin(self, images: Sequence[str]) -> tuple[tuple[str, str], ...]:
        pinned = []
        for image in images:
            if image.startswith("sha256:"):
                pinned.append((image, image))  # an id already: nothing to resolve
                continue
            found = self.sandbox.resolve(image)
            self.fabricated.extend(found.fabricated)
            pinned.append((image, found.id))
        return tuple(pinned)

    def request(
        self,
        step: str,
        *,
        patched: bool = True,
        image: str | None = None,
        inspect: Sequence[str] = (),
    ) -> SandboxRequest:
        """The run of the recipe's ``step`` ("compile" or "tests") over the trial's tree."""
        command: Mapping[str, Any] = self.context.recipe.sandbox[step]
        image = image or str(self.context.recipe.sandbox["image"])
        return self._request(
            SandboxAction.RUN,
            step,
            image=image,
            command=tuple(command["command"]),
            collect=tuple(command.get("collect", ())),
            pinned=self.pin([image]),
            patched=patched,
            inspect=tuple(inspect),
        )

    def build_request(self, *, patched: bool = True) -> SandboxRequest:
        """The build of the tree's Dockerfile, pinned to the images it starts FROM."""
        command = tuple(self.context.recipe.sandbox["compile"]["command"])
        dockerfile, _context = build_arguments(command)
        view = self.context.workspace.view()
        source = view.read(dockerfile) if patched else view.read_base(dockerfile)
        parents = base_images(source) if source is not None else []
        return self._request(
            SandboxAction.BUILD,
            "compile",
            image=DOCKERFILE_IMAGE,
            command=command,
            collect=(),
            pinned=self.pin(parents),
            patched=patched,
        )

    def _request(
        self, action: SandboxAction, step: str, *, patched: bool, **fields: Any
    ) -> SandboxRequest:
        tier = Tier.COMPILE if step == "compile" else Tier.TESTS
        workspace = self.context.workspace
        return SandboxRequest(
            action=action,
            tree_hash=workspace.tree_hash(patched=patched),
            timeout_s=self.context.tier_spec(tier).timeout_s,
            tree=lambda: workspace.materialise(patched=patched),
            **fields,
        )

    def run(self, request: SandboxRequest) -> SandboxResult:
        result = self.sandbox.run(request)
        self.fabricated.extend(result.fabricated)
        return result


def sandbox_details(result: SandboxResult, *, tail: int = 4000) -> dict[str, Any]:
    """What an envelope keeps of a sandbox run: enough to re-grade, not the whole log."""
    return {
        "image_id": result.image_id,
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "oom_killed": result.oom_killed,
        "workspace_exceeded": result.workspace_exceeded,
        "duration_s": result.duration_s,
        "output_tail": result.output[-tail:],
        "output_truncated": result.output_truncated,
    }


def sandbox_cost(context: TrialContext, *results: SandboxResult) -> float:
    return sum(r.duration_s for r in results) * context.usd_per_second
