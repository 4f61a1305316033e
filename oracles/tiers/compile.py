"""Tier 2, compile: the recipe's build command over the patched tree, in the sandbox.

The build passes only if it exits 0 within its limits (time, memory, workspace) and, for
recipes with a ``class_files`` rule, every class file the harness finds afterwards has the
required major version. Compiler and build errors become file:line evidence.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.model import Changeset, Evidence, Tier, Verdict
from core.ports import Sandbox, SandboxResult
from core.specs import Recipe
from oracles.classfiles import check_class_files, java_release
from oracles.compiler_output import parse_build_output, parse_compiler_output
from oracles.contracts.docker import instruction_lines
from oracles.sandbox.commands import build_arguments
from oracles.tiers.base import TierOutcome, TrialContext
from oracles.tiers.sandboxed import (
    TrialSandbox,
    image_identity,
    sandbox_cost,
    sandbox_details,
)

__all__ = ["CompileOracle", "limit_failure"]


def limit_failure(result: SandboxResult, what: str) -> str | None:
    """Why a run that hit a sandbox limit failed, or None if it hit none."""
    if result.timed_out:
        return f"{what} timed out"
    if result.oom_killed:
        return f"{what} ran out of memory"
    if result.workspace_exceeded:
        return f"{what} wrote more than the workspace limit"
    return None


class CompileOracle:
    tier = Tier.COMPILE

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox

    @property
    def identity(self) -> str:
        return f"compile/2 {self.sandbox.identity}"

    def identity_for(self, changeset: Changeset, recipe: Recipe) -> str:
        return f"{self.identity} {image_identity(self.sandbox, recipe, changeset)}"

    def evaluate(self, context: TrialContext) -> TierOutcome:
        sandboxed = TrialSandbox(self.sandbox, context)
        rule: Mapping[str, Any] | None = context.recipe.sandbox.get("class_files")
        if context.recipe.sandbox.get("build_dockerfile"):
            request = sandboxed.build_request()
        else:
            request = sandboxed.request("compile", inspect=rule["paths"] if rule else ())
        result = sandboxed.run(request)
        verdict, reason, evidence = Verdict.PASS, "builds", []
        failure = limit_failure(result, "build")
        if failure:
            verdict, reason = Verdict.FAIL, failure
        elif result.exit_code != 0:
            evidence = self._errors(context, result)
            first = f": {evidence[0]}" if evidence else ""
            verdict, reason = Verdict.FAIL, f"build failed (exit {result.exit_code}){first}"
        elif rule and not result.fabricated:
            # A replay miss's default has no class files; it is marked and unpublishable,
            # so it stays the ergonomic pass that lets the later tiers run.
            verdict, reason, evidence = self._class_files(result, int(rule["major"]))
        details = {**sandbox_details(result), "images": dict(request.pinned)}
        return TierOutcome(
            verdict,
            reason,
            tuple(evidence),
            actual_cost_usd=sandbox_cost(context, result),
            details=details,
            fabricated=tuple(sandboxed.fabricated),
        )

    @staticmethod
    def _errors(context: TrialContext, result: SandboxResult) -> list[Evidence]:
        if not context.recipe.sandbox.get("build_dockerfile"):
            return parse_compiler_output(result.output)
        dockerfile, _ = build_arguments(context.recipe.sandbox["compile"]["command"])
        source = context.workspace.view().read(dockerfile)
        lines = instruction_lines(source) if source is not None else []
        return parse_build_output(result.output, dockerfile=dockerfile, instruction_lines=lines)

    @staticmethod
    def _class_files(result: SandboxResult, major: int) -> tuple[Verdict, str, list[Evidence]]:
        problem, evidence = check_class_files(result.file_heads, major)
        if problem:
            return Verdict.FAIL, problem, evidence
        count = len(result.file_heads)
        return Verdict.PASS, f"builds; {count} class file(s), all Java {java_release(major)}", []
