"""Tier 2 for recipes that build the repository's Dockerfiles: every Dockerfile the patch
modifies is built with its own context, at the base commit and patched.

The tier passes when every one builds both ways; a patched build that fails where the base
built is ``fail`` (with the failing step as evidence on its Dockerfile line); a base that
does not build here is ``error``. The envelope names each build (Dockerfile, context,
target), the rewrites read from the diff, the images each build was pinned to and, for
images pulled from a registry, their digests.
"""

from __future__ import annotations

from typing import Any

from migration_evals.core.model import Verdict
from migration_evals.core.ports import Sandbox
from migration_evals.oracles.ecosystems.dockerfile.builds import BuiltPair, build_pair, worst
from migration_evals.oracles.ecosystems.dockerfile.dockerfiles import touched_builds
from migration_evals.oracles.ecosystems.dockerfile.from_lines import read_rewrites
from migration_evals.oracles.tiers.base import TierOutcome, TrialContext
from migration_evals.oracles.tiers.sandboxed import TrialSandbox, sandbox_cost

__all__ = ["compile_dockerfiles", "dockerfile_details"]


def dockerfile_details(
    sandboxed: TrialSandbox, pairs: list[BuiltPair], **more: Any
) -> dict[str, Any]:
    """What a Dockerfile tier's envelope keeps: builds, rewrites, images and digests."""
    view = sandboxed.context.workspace.view()
    images: dict[str, str] = {}
    for pair in pairs:
        images.update(pair.images)
    patched = [p.patched.image_id for p in pairs if p.patched is not None]
    return {
        "builds": [pair.details() for pair in pairs],
        "rewrites": [rewrite.to_dict() for rewrite in read_rewrites(view)],
        "images": images,
        "digests": dict(sandboxed.digests),
        "image_id": patched[0] if patched else "",
        **more,
    }


def _reason(pairs: list[BuiltPair], verdict: Verdict) -> str:
    if verdict is Verdict.PASS:
        names = ", ".join(pair.build.describe() for pair in pairs)
        return f"builds at the base commit and patched: {names}"
    deciding = [pair for pair in pairs if pair.verdict is verdict]
    more = f" (and {len(deciding) - 1} more)" if len(deciding) > 1 else ""
    first = deciding[0]
    detail = f": {first.evidence[0]}" if first.evidence else ""
    return f"{first.reason}{detail}{more}"


def compile_dockerfiles(sandbox: Sandbox, context: TrialContext) -> TierOutcome:
    sandboxed = TrialSandbox(sandbox, context)
    builds = touched_builds(context.workspace.apply().changes, context.changeset.recipe_params)
    if not builds:
        return TierOutcome(Verdict.INCONCLUSIVE, "the patch modifies no Dockerfile to build")
    pairs = [build_pair(sandboxed, build) for build in builds]
    verdict = worst(pair.verdict for pair in pairs)
    evidence = [e for pair in pairs if pair.verdict is verdict for e in pair.evidence]
    runs = [run for pair in pairs for run in pair.runs()]
    return TierOutcome(
        verdict,
        _reason(pairs, verdict),
        tuple(evidence),
        actual_cost_usd=sandbox_cost(context, *runs),
        details=dockerfile_details(sandboxed, pairs),
        fabricated=tuple(sandboxed.fabricated),
    )
