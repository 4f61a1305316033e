"""Tier 2, compile: the recipe's build command over the patched tree, in the sandbox."""

from __future__ import annotations

from core.model import Tier, Verdict
from core.ports import Sandbox, SandboxAction
from oracles.compiler_output import parse_compiler_output
from oracles.tiers.base import TierOutcome, TrialContext
from oracles.tiers.sandboxed import sandbox_cost, sandbox_details, sandbox_request

__all__ = ["CompileOracle"]


class CompileOracle:
    tier = Tier.COMPILE

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox

    @property
    def identity(self) -> str:
        return f"compile/1 {self.sandbox.identity}"

    def evaluate(self, context: TrialContext) -> TierOutcome:
        builds_image = bool(context.recipe.sandbox.get("build_dockerfile"))
        action = SandboxAction.BUILD if builds_image else SandboxAction.RUN
        result = self.sandbox.run(sandbox_request(context, "compile", action=action))
        verdict, reason, evidence = Verdict.PASS, "builds", []
        if result.timed_out:
            verdict, reason = Verdict.FAIL, "build timed out"
        elif result.exit_code != 0:
            evidence = parse_compiler_output(result.output)
            first = f": {evidence[0]}" if evidence else ""
            verdict, reason = Verdict.FAIL, f"build failed (exit {result.exit_code}){first}"
        return TierOutcome(
            verdict,
            reason,
            tuple(evidence),
            actual_cost_usd=sandbox_cost(context, result),
            details=sandbox_details(result),
            fabricated=result.fabricated,
        )
