"""Building each Dockerfile a patch touches, at the base commit and patched.

Used by tier 2 (do they build?) and tier 3 (the images they build, compared). Each side
sends the context ``docker build`` would send, with its own ignore file applied
(``migration_evals.oracles.dockerignore``). Every build is anchored on the base commit: a Dockerfile
whose base version does not build here (its base images missing on the engine, a package
source out of reach, a target it lacks, an ignore file Docker refuses) is the
infrastructure's problem, ``error``, and its patched version is not built; a patched
version that fails where the base built is the candidate's, ``fail``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from migration_evals.core.errors import SandboxError
from migration_evals.core.model import Evidence, Verdict
from migration_evals.core.ports import SandboxResult
from migration_evals.oracles.dockerignore import IgnoreFileError, build_context
from migration_evals.oracles.ecosystems.dockerfile.build_output import parse_build_output
from migration_evals.oracles.ecosystems.dockerfile.dockerfiles import DockerBuild
from migration_evals.oracles.ecosystems.dockerfile.model import Dockerfile, read_dockerfile
from migration_evals.oracles.tiers.sandboxed import TrialSandbox, sandbox_details

__all__ = ["BuiltPair", "build_pair", "built", "worst"]

# The order in which several builds' verdicts decide a tier: a proven failure of the
# candidate first, then what the harness could not do, then what it could not tell.
_PRECEDENCE = (Verdict.FAIL, Verdict.ERROR, Verdict.INCONCLUSIVE, Verdict.PASS)


def worst(verdicts: Iterable[Verdict]) -> Verdict:
    """The verdict that decides among several (fail, error, inconclusive, pass)."""
    found = set(verdicts)
    return next((v for v in _PRECEDENCE if v in found), Verdict.INCONCLUSIVE)


def built(result: SandboxResult) -> bool:
    """A build that produced an image within its limits."""
    return (
        result.exit_code == 0
        and bool(result.image_id)
        and not (result.timed_out or result.oom_killed or result.workspace_exceeded)
    )


@dataclass(frozen=True, slots=True)
class BuiltPair:
    """The base and patched builds of one Dockerfile, and what they say.

    ``verdict`` is PASS when both built, ERROR when the base did not (or could not be
    tried), FAIL when only the patched version did not.
    """

    build: DockerBuild
    verdict: Verdict
    reason: str
    evidence: tuple[Evidence, ...] = ()
    base: SandboxResult | None = None
    patched: SandboxResult | None = None
    images: Mapping[str, str] = field(default_factory=dict)

    def runs(self) -> list[SandboxResult]:
        return [r for r in (self.base, self.patched) if r is not None]

    def details(self) -> dict[str, Any]:
        found: dict[str, Any] = {**self.build.to_dict(), "verdict": self.verdict.value}
        found["reason"] = self.reason
        found["images"] = dict(self.images)
        for name, result in (("base", self.base), ("patched", self.patched)):
            if result is not None:
                found[name] = sandbox_details(result, tail=1000 if name == "base" else 4000)
        return found


def _why(result: SandboxResult) -> str:
    if result.timed_out:
        return "timed out"
    if result.oom_killed:
        return "ran out of memory"
    if result.workspace_exceeded:
        return "wrote more than the workspace limit"
    if result.exit_code == 0:
        return "produced no image"
    return f"exit {result.exit_code}"


def _reader(sandboxed: TrialSandbox, *, patched: bool) -> Callable[[str], bytes | None]:
    view = sandboxed.context.workspace.view()
    return view.read if patched else view.read_base


def _source(sandboxed: TrialSandbox, path: str, *, patched: bool) -> Dockerfile | None:
    data = _reader(sandboxed, patched=patched)(path)
    return read_dockerfile(data) if data is not None else None


def _evidence(build: DockerBuild, dockerfile: Dockerfile, result: SandboxResult) -> list[Evidence]:
    lines = dockerfile.build_lines(build.target)
    return parse_build_output(result.output, dockerfile=build.dockerfile, instruction_lines=lines)


@dataclass(frozen=True, slots=True)
class _Attempt:
    """One version's build: its result, and if unusable, why and whose fault it is
    (``FAIL``: the Dockerfile's own; ``ERROR``: an image the engine lacks)."""

    result: SandboxResult | None
    problem: str = ""
    fault: Verdict = Verdict.FAIL
    evidence: tuple[Evidence, ...] = ()
    pinned: Mapping[str, str] = field(default_factory=dict)


def _attempt(sandboxed: TrialSandbox, build: DockerBuild, *, patched: bool) -> _Attempt:
    side = "patched" if patched else "base commit's"
    dockerfile = _source(sandboxed, build.dockerfile, patched=patched)
    if dockerfile is None:
        return _Attempt(None, f"the {side} {build.dockerfile} cannot be read")
    try:
        parents = dockerfile.images_for(build.target)
    except ValueError as exc:
        return _Attempt(None, f"the {side} {build.dockerfile} has {exc}")
    try:
        context = build_context(
            build.dockerfile, build.context, _reader(sandboxed, patched=patched)
        )
    except IgnoreFileError as exc:  # docker build stops here too, before sending anything
        return _Attempt(None, f"the {side} ignore file of {build.dockerfile}: {exc}")
    try:
        request = sandboxed.build_request(
            build.command(), parents, patched=patched, context=context
        )
    except SandboxError as exc:
        return _Attempt(None, f"{build.describe()}: {exc}", Verdict.ERROR)
    result = sandboxed.run(request)
    pinned = dict(request.pinned)
    if built(result):
        return _Attempt(result, pinned=pinned)
    why = f"the {side} {build.dockerfile} does not build ({_why(result)})"
    evidence = tuple(_evidence(build, dockerfile, result))
    return _Attempt(result, why, Verdict.FAIL, evidence, pinned)


def build_pair(sandboxed: TrialSandbox, build: DockerBuild) -> BuiltPair:
    """Build ``build`` at the base commit, then, if that built, patched.

    A sandbox fault (engine away) propagates as ``SandboxError``; a base image the engine
    lacks is this Dockerfile's ``error`` and leaves the other Dockerfiles to be built.
    """
    base = _attempt(sandboxed, build, patched=False)
    if base.problem:
        # Whatever stops the base version is the harness's: it is not the candidate's tree.
        reason = base.problem + (" here" if base.result is not None else "")
        return BuiltPair(
            build, Verdict.ERROR, reason, base.evidence, base.result, None, base.pinned
        )
    patched = _attempt(sandboxed, build, patched=True)
    images = {**base.pinned, **patched.pinned}
    if patched.problem:
        return BuiltPair(
            build,
            patched.fault,
            patched.problem,
            patched.evidence,
            base.result,
            patched.result,
            images,
        )
    return BuiltPair(build, Verdict.PASS, "builds", (), base.result, patched.result, images)
