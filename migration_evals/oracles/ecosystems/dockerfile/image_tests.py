"""Tier 3 for recipes that build the repository's Dockerfiles: the image contract.

For every Dockerfile the patch modifies, the base and patched versions are built (as in
tier 2; the engine's build cache makes this cheap), then:

1. their configurations are compared
   (``migration_evals.oracles.ecosystems.dockerfile.image_contract``): each difference fails;
2. each image is started as it runs, network ``none`` and the sandbox's limits, with the
   recipe's smoke command as its CMD, or by default checked to stay up ``stay_up_s``
   seconds or exit 0; the base image is the baseline: one that does not start here is
   ``error``, a patched one that does not start where the base did is ``fail``;
3. a repository's own smoke script (the recipe's ``smoke_script``, looked for in the build
   context, beside the Dockerfile, then at the root) runs in each image over the tree, as
   the recipe's tests command, when both trees have it.

No image, or two configurations with nothing in them, is ``inconclusive``, never ``pass``.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field, replace
from typing import Any

from migration_evals.core.model import Evidence, Tier, Verdict
from migration_evals.core.ports import ImageConfig, Sandbox, SandboxRequest, SandboxResult
from migration_evals.oracles.baselines import BaselineCache
from migration_evals.oracles.ecosystems.dockerfile.builds import BuiltPair, build_pair, worst
from migration_evals.oracles.ecosystems.dockerfile.compile import dockerfile_details
from migration_evals.oracles.ecosystems.dockerfile.dockerfiles import DockerBuild, touched_builds
from migration_evals.oracles.ecosystems.dockerfile.image_contract import (
    ContractRules,
    config_differences,
    nothing_to_compare,
)
from migration_evals.oracles.tiers.base import TierOutcome, TrialContext
from migration_evals.oracles.tiers.sandboxed import TrialSandbox, sandbox_cost, sandbox_details

__all__ = ["check_images"]


@dataclass
class _Findings:
    """What the checks of one Dockerfile found: (verdict, message) pairs and the runs."""

    build: DockerBuild
    found: list[tuple[Verdict, str]] = field(default_factory=list)
    runs: dict[str, SandboxResult] = field(default_factory=dict)

    def add(self, verdict: Verdict, message: str) -> None:
        self.found.append((verdict, message))

    @property
    def verdict(self) -> Verdict:
        return worst(v for v, _ in self.found) if self.found else Verdict.PASS

    def evidence(self, verdict: Verdict) -> list[Evidence]:
        return [Evidence(m, self.build.dockerfile) for v, m in self.found if v is verdict]

    def passed(self) -> list[str]:
        return [m for v, m in self.found if v is Verdict.PASS]


@dataclass
class _Checker:
    sandboxed: TrialSandbox
    baselines: BaselineCache
    rules: ContractRules

    @property
    def context(self) -> TrialContext:
        return self.sandboxed.context

    def baseline(self, request: SandboxRequest) -> SandboxResult:
        context = self.context
        key = BaselineCache.key(
            context.changeset, request, self.sandboxed.sandbox.identity, context.specs.oracle_stamp
        )
        return self.sandboxed.reused(self.baselines, key, request)

    def inspect(self, image: str) -> ImageConfig:
        config = self.sandboxed.sandbox.inspect(image)
        self.sandboxed.fabricated.extend(config.fabricated)
        return config

    def compare(self, findings: _Findings, pair: BuiltPair) -> bool:
        """Compare the configurations; False when neither image says what it runs, so
        there is nothing to start either."""
        assert pair.base is not None and pair.patched is not None
        base, patched = self.inspect(pair.base.image_id), self.inspect(pair.patched.image_id)
        differences = config_differences(base, patched, self.rules)
        for difference in differences:
            findings.add(Verdict.FAIL, difference)
        if nothing_to_compare(base, patched):
            if not differences:
                message = "nothing to compare: neither image says what it runs"
                findings.add(Verdict.INCONCLUSIVE, message)
            return False
        if not differences:
            findings.add(Verdict.PASS, "configuration unchanged")
        return True

    def start(self, findings: _Findings, pair: BuiltPair) -> None:
        assert pair.base is not None and pair.patched is not None
        stay = None if self.rules.smoke_command else self.rules.stay_up_s
        command = self.rules.smoke_command

        def request(image: str, patched: bool) -> SandboxRequest:
            return self.sandboxed.start_request(image, command, patched=patched, stay_up_s=stay)

        base = self.baseline(request(pair.base.image_id, False))
        findings.runs["base start"] = base
        if not self._started(base):
            findings.add(Verdict.ERROR, f"the base image does not start here ({self._how(base)})")
            return
        patched = self.sandboxed.run(request(pair.patched.image_id, True))
        findings.runs["patched start"] = patched
        if not self._started(patched):
            findings.add(
                Verdict.FAIL,
                f"the patched image fails at start ({self._how(patched)}); the base image starts",
            )
        else:
            findings.add(Verdict.PASS, f"starts ({self._how(patched)})")

    def _started(self, result: SandboxResult) -> bool:
        if result.oom_killed:
            return False
        if self.rules.smoke_command:
            return result.exit_code == 0 and not result.timed_out
        return result.timed_out or result.exit_code == 0

    def _how(self, result: SandboxResult) -> str:
        if result.oom_killed:
            return "ran out of memory"
        if result.timed_out:
            if self.rules.smoke_command:
                return "the smoke command timed out"
            return f"stayed up {self.rules.stay_up_s:g} s"
        return f"exit {result.exit_code}"

    def smoke_script(self, findings: _Findings, pair: BuiltPair) -> None:
        assert pair.base is not None and pair.patched is not None
        folder = self._script_folder(findings.build)
        if folder is None:
            return
        script = self._script_path(folder)
        base = self.baseline(self._script_request(folder, pair.base.image_id, patched=False))
        findings.runs["base smoke script"] = base
        if not self._script_passed(base):
            findings.add(
                Verdict.ERROR, f"{script} fails in the base image here ({self._how(base)})"
            )
            return
        request = self._script_request(folder, pair.patched.image_id, patched=True)
        patched = self.sandboxed.run(request)
        findings.runs["patched smoke script"] = patched
        if self._script_passed(patched):
            findings.add(Verdict.PASS, f"{script} passes")
            return
        findings.add(*self._rerun(findings, request, script, patched))

    def _rerun(
        self, findings: _Findings, request: SandboxRequest, script: str, failed: SandboxResult
    ) -> tuple[Verdict, str]:
        """A failing smoke script that passes on a re-run is flaky, never a pass."""
        for attempt in range(1, self.context.tier_spec(Tier.TESTS).reruns + 1):
            again = self.sandboxed.run(replace(request, attempt=attempt))
            findings.runs[f"patched smoke script, re-run {attempt}"] = again
            if self._script_passed(again):
                return (
                    Verdict.INCONCLUSIVE,
                    f"flaky: {script} failed, then passed on re-run {attempt}",
                )
        how = self._how(failed)
        return (
            Verdict.FAIL,
            f"{script} fails in the patched image ({how}); it passes in the base image",
        )

    @staticmethod
    def _script_passed(result: SandboxResult) -> bool:
        return result.exit_code == 0 and not (
            result.timed_out or result.oom_killed or result.workspace_exceeded
        )

    def _script_path(self, folder: str) -> str:
        assert self.rules.smoke_script is not None
        return (
            posixpath.join(folder, self.rules.smoke_script)
            if folder != "."
            else self.rules.smoke_script
        )

    def _script_folder(self, build: DockerBuild) -> str | None:
        if self.rules.smoke_script is None:
            return None
        view = self.context.workspace.view()
        for folder in (build.context, posixpath.dirname(build.dockerfile) or ".", "."):
            path = self._script_path(folder)
            if view.read_base(path) is not None and view.read(path) is not None:
                return folder
        return None

    def _script_request(self, folder: str, image: str, *, patched: bool) -> SandboxRequest:
        request = self.sandboxed.request("tests", patched=patched, image=image)
        if folder == ".":
            return request
        # The recipe's command, run from the script's own folder.
        command = ("sh", "-c", 'cd "$0" && exec "$@"', folder, *request.command)
        return replace(request, command=command)


def _check(checker: _Checker, build: DockerBuild) -> tuple[BuiltPair, _Findings]:
    findings = _Findings(build)
    pair = build_pair(checker.sandboxed, build)
    if pair.verdict is not Verdict.PASS:
        word = "no image to compare" if pair.verdict is Verdict.ERROR else "no patched image"
        findings.add(pair.verdict, f"{word}: {pair.reason}")
        return pair, findings
    if checker.compare(findings, pair):
        checker.start(findings, pair)
        checker.smoke_script(findings, pair)
    return pair, findings


def _reason(checks: list[_Findings], verdict: Verdict) -> str:
    if verdict is Verdict.PASS:
        parts = [f"{f.build.dockerfile}: {', '.join(f.passed())}" for f in checks]
        return "the images run alike; " + "; ".join(parts)
    messages = [f"{f.build.dockerfile}: {m}" for f in checks for v, m in f.found if v is verdict]
    more = f" (and {len(messages) - 1} more)" if len(messages) > 1 else ""
    return f"image contract: {messages[0]}{more}"


def _runs_details(checks: list[_Findings]) -> list[dict[str, Any]]:
    return [
        {
            "dockerfile": f.build.dockerfile,
            **{k: sandbox_details(r, tail=2000) for k, r in f.runs.items()},
        }
        for f in checks
    ]


def check_images(sandbox: Sandbox, baselines: BaselineCache, context: TrialContext) -> TierOutcome:
    sandboxed = TrialSandbox(sandbox, context)
    rules = ContractRules.from_recipe(context.recipe.sandbox.image_contract)
    builds = touched_builds(context.workspace.apply().changes, context.changeset.recipe_params)
    if not builds:
        return TierOutcome(
            Verdict.INCONCLUSIVE, "no image to compare: the patch modifies no Dockerfile"
        )
    checker = _Checker(sandboxed, baselines, rules)
    results = [_check(checker, build) for build in builds]
    checks = [findings for _, findings in results]
    verdict = worst(f.verdict for f in checks)
    runs = [r for pair, f in results for r in [*pair.runs(), *f.runs.values()]]
    return TierOutcome(
        verdict,
        _reason(checks, verdict),
        tuple(e for f in checks for e in f.evidence(verdict)),
        actual_cost_usd=sandbox_cost(context, *runs),
        details=dockerfile_details(
            sandboxed, [pair for pair, _ in results], checks=_runs_details(checks)
        ),
        fabricated=tuple(sandboxed.fabricated),
    )
