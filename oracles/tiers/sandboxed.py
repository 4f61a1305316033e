"""Building sandbox requests from a recipe; shared by the compile and tests tiers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.model import Tier
from core.ports import SandboxAction, SandboxRequest, SandboxResult
from oracles.tiers.base import TrialContext

__all__ = ["sandbox_cost", "sandbox_details", "sandbox_request"]


def sandbox_request(
    context: TrialContext,
    step: str,
    *,
    patched: bool = True,
    action: SandboxAction = SandboxAction.RUN,
    image: str | None = None,
    attempt: int = 0,
) -> SandboxRequest:
    """The request for the recipe's ``step`` ("compile" or "tests") over the trial's tree."""
    sandbox: Mapping[str, Any] = context.recipe.sandbox
    command: Mapping[str, Any] = sandbox[step]
    tier = Tier.COMPILE if step == "compile" else Tier.TESTS
    workspace = context.workspace
    return SandboxRequest(
        action=action,
        image=image or str(sandbox["image"]),
        command=tuple(command["command"]),
        tree_hash=workspace.tree_hash(patched=patched),
        collect=tuple(command.get("collect", ())),
        timeout_s=context.tier_spec(tier).timeout_s,
        attempt=attempt,
        tree=lambda: workspace.materialise(patched=patched),
    )


def sandbox_details(result: SandboxResult, *, tail: int = 4000) -> dict[str, Any]:
    """What an envelope keeps of a sandbox run: enough to re-grade, not the whole log."""
    return {
        "image_id": result.image_id,
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "duration_s": result.duration_s,
        "output_tail": result.output[-tail:],
        "output_truncated": result.output_truncated,
    }


def sandbox_cost(context: TrialContext, *results: SandboxResult) -> float:
    return sum(r.duration_s for r in results) * context.usd_per_second
