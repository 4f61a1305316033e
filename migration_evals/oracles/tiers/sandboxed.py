"""Building sandbox requests from a recipe; shared by the compile and tests tiers.

Every request pins the content ids of the images it depends on (``SandboxRequest.pinned``):
the recipe's image for a run, the images a Dockerfile builds FROM for a build. The ids go
into cassette keys, envelopes and (through ``image_identity``) the cascade's cache keys.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from migration_evals.core.errors import SandboxError
from migration_evals.core.model import Changeset, FabricatedMark, Tier
from migration_evals.core.ports import Sandbox, SandboxAction, SandboxRequest, SandboxResult
from migration_evals.core.spec_types import CommandStep, SandboxStep, TestsStep
from migration_evals.core.specs import Recipe
from migration_evals.oracles.baselines import BaselineCache
from migration_evals.oracles.builds import ProjectBuild, build_request
from migration_evals.oracles.dockerignore import BuildContext
from migration_evals.oracles.ecosystems.registry import ecosystem_of, report_format
from migration_evals.oracles.tiers.base import TrialContext
from migration_evals.oracles.toolchains import recipe_toolchain_images
from migration_evals.oracles.workspace import GradedTree, with_files

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
    image and those its base commits may build in, or for Dockerfile recipes the images
    its parameters move between and the FROM lines of the diff name."""
    ecosystem = ecosystem_of(recipe)
    if ecosystem is None:
        return recipe_toolchain_images(recipe)
    return ecosystem.trial_images(recipe, changeset)


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
    keeps every fabricated mark (replay misses, image or run) for the tier's outcome, and
    the registry digest of every image pinned whose origin the engine knows."""

    sandbox: Sandbox
    context: TrialContext
    fabricated: list[FabricatedMark] = field(default_factory=list)
    digests: dict[str, str] = field(default_factory=dict)

    def pin(self, images: Sequence[str]) -> tuple[tuple[str, str], ...]:
        pinned = []
        for image in images:
            if image.startswith("sha256:"):
                pinned.append((image, image))  # an id already: nothing to resolve
                continue
            found = self.sandbox.resolve(image)
            self.fabricated.extend(found.fabricated)
            pinned.append((image, found.id))
            if found.digest:
                self.digests[image] = found.digest
        return tuple(pinned)

    def request(
        self,
        step: SandboxStep,
        *,
        patched: bool = True,
        image: str | None = None,
        inspect: Sequence[str] = (),
        build: ProjectBuild | None = None,
        graded: GradedTree | None = None,
    ) -> SandboxRequest:
        """The run of the recipe's ``step`` ("compile" or "tests") over the trial's tree
        (``graded`` instead of the patched tree, if given); with ``build``, in that
        project's folder with its resolved dependencies, in the image of that tree's
        toolchain unless ``image`` says otherwise."""
        command = self.context.recipe.sandbox.step(step)
        if image is None and build is not None:
            image = build.image(patched=patched)  # each side on its own toolchain
        image = image or self.context.recipe.sandbox.image
        request = self._request(
            SandboxAction.RUN,
            step,
            image=image,
            command=_measured(command),
            collect=command.collect,
            pinned=self.pin([image]),
            patched=patched,
            inspect=tuple(inspect),
            graded=graded,
            files=build.files if build is not None else None,
            output_events=_output_events(command),
        )
        if build is None:
            return request
        environment = dict(command.env)
        return build_request(request, build, patched=patched, environment=environment)

    def build_request(
        self,
        command: Sequence[str],
        parents: Sequence[str],
        *,
        patched: bool = True,
        context: BuildContext | None = None,
    ) -> SandboxRequest:
        """A ``docker build`` of the tree, pinned to the images it starts FROM, sending
        what ``context`` sends (the tree's ignore file applied) and keyed by it."""
        return self._request(
            SandboxAction.BUILD,
            "compile",
            image=DOCKERFILE_IMAGE,
            command=tuple(command),
            collect=(),
            pinned=self.pin(parents),
            patched=patched,
            context=context,
        )

    def start_request(
        self, image: str, command: Sequence[str], *, patched: bool, stay_up_s: float | None
    ) -> SandboxRequest:
        """A start of a built image as it runs; ``stay_up_s`` None runs ``command`` within
        the tests tier's time limit instead of checking that the image stays up."""
        request = self._request(
            SandboxAction.START,
            "tests",
            image=image,
            command=tuple(command),
            pinned=self.pin([image]),
            patched=patched,
        )
        return replace(request, timeout_s=stay_up_s) if stay_up_s is not None else request

    def _request(
        self,
        action: SandboxAction,
        step: str,
        *,
        patched: bool,
        graded: GradedTree | None = None,
        files: Mapping[str, bytes] | None = None,
        context: BuildContext | None = None,
        **fields: Any,
    ) -> SandboxRequest:
        """``files`` are the harness's own, laid over the tree (a project's synthesized
        go.mod): they go into the tree's hash, so the request's keys differ from a run
        without them. A build ``context`` filters the tree and keys what it sends."""
        tier = Tier.COMPILE if step == "compile" else Tier.TESTS
        workspace = self.context.workspace
        extra = files or {}
        hashed = with_files(
            graded.tree_hash if graded else workspace.tree_hash(patched=patched), extra
        )
        sends = context.sends if context is not None else None
        tree_hash = context.tree_hash(hashed) if context is not None else hashed
        self.context.logs.side(tree_hash, "patched" if patched else "base")
        return SandboxRequest(
            action=action,
            tree_hash=tree_hash,
            timeout_s=self.context.tier_spec(tier).timeout_s,
            tree=lambda uid, gid, subdir: workspace.archive(
                uid, gid, patched=patched, subdir=subdir, graded=graded, extra=extra, sends=sends
            ),
            **fields,
        )

    def run(self, request: SandboxRequest) -> SandboxResult:
        result = self.sandbox.run(request)
        self.fabricated.extend(result.fabricated)
        self.context.logs.note(request, result)
        return result

    def reused(
        self, cache: BaselineCache, key: str, request: SandboxRequest, **checks: Any
    ) -> SandboxResult:
        """A base run from the baseline cache (run now on a miss), noted in the trial's
        log either way: its output is the one this trial is graded against."""
        result = cache.get_or_run(key, lambda: self.run(request), **checks)
        self.context.logs.note(request, result)
        return result


def _output_events(step: CommandStep) -> str:
    """How the sandbox keeps a step's output: by test for a go test -json stream (its
    report), so a suite that logs a lot is still read whole; else by head and tail."""
    return report_format(step.report_format).output_events


def _measured(step: CommandStep) -> tuple[str, ...]:
    """A step's command, run under its coverage wrapper when it has one (the tests step:
    ``migration_evals.oracles.coverage``), so the same run that grades the tests measures
    coverage."""
    coverage = step.coverage if isinstance(step, TestsStep) else None
    if coverage is None:
        return step.command
    return ("sh", "-c", coverage.wrapper, "coverage", *step.command)


def sandbox_details(result: SandboxResult, *, tail: int = 4000) -> dict[str, Any]:
    """What an envelope keeps of a sandbox run: enough to re-grade, not the whole log."""
    details: dict[str, Any] = {
        "image_id": result.image_id,
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "oom_killed": result.oom_killed,
        "workspace_exceeded": result.workspace_exceeded,
        "duration_s": result.duration_s,
        "output_tail": result.output[-tail:],
        "output_truncated": result.output_truncated,
    }
    if result.special_entries:  # only then, so other envelopes stay as they were
        details["special_entries"] = list(result.special_entries)
    return details


def sandbox_cost(context: TrialContext, *results: SandboxResult) -> float:
    return sum(r.duration_s for r in results) * context.usd_per_second
