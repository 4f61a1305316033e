"""Entries of a special kind (FIFOs, sockets, unreadable files) a run leaves in its
workspace: those the base commit's own run leaves are the project's, only what the
patched run adds beyond them is the candidate's, in tier 2 as in tier 3."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from migration_evals.core.model import Verdict
from migration_evals.core.ports import UNLISTED_SPECIAL_ENTRIES, SandboxRequest, SandboxResult
from migration_evals.oracles.baselines import BaselineCache
from migration_evals.oracles.builds import Builds
from migration_evals.oracles.tiers.base import TierOutcome, TrialContext
from migration_evals.oracles.tiers.compile import CompileOracle, limit_failure
from migration_evals.oracles.tiers.tests import TestsOracle
from migration_evals.oracles.workspace import tree_hash
from tests.conftest import TrialFactory
from tests.fakes import BuildScript, FakeSandbox, fake_result, surefire_run

FIFO = "only files, folders and links in the workspace (a FIFO: data/pipe)"
SOCKET = "only files, folders and links in the workspace (a socket: run/s)"
POM = """<project>
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId><artifactId>app</artifactId><version>1</version>
  <properties><maven.compiler.release>{release}</maven.compiler.release></properties>
</project>
"""
BASE = {"pom.xml": POM.format(release="8"), "src/main/java/x/A.java": "package x;\n"}
PATCH = {"pom.xml": POM.format(release="17")}

# (the step's command, patched?) -> the entries its run leaves
Leaves = Callable[[SandboxRequest, bool], tuple[str, ...]]


def _left(result: SandboxResult, entries: tuple[str, ...]) -> SandboxResult:
    """``result`` as the live sandbox reports a run that left ``entries``."""
    if not entries:
        return result
    return replace(
        result, workspace_exceeded=True, workspace_limit=entries[0], special_entries=entries
    )


def _sandbox(context: TrialContext, leaves: Leaves) -> FakeSandbox:
    def run(request: SandboxRequest, patched: bool) -> SandboxResult:
        if "test" in request.command:
            result = surefire_run({"t1": True}, image_id="sha256:fake")
        else:
            result = fake_result(request)
        return _left(result, leaves(request, patched))

    return FakeSandbox(BuildScript(tree_hash(context.changeset.base_commit, None), run=run))


def _tests(context: TrialContext, leaves: Leaves) -> TierOutcome:
    sandbox = _sandbox(context, leaves)
    builds = Builds(sandbox, BaselineCache(), registry="gate")
    return TestsOracle(sandbox, builds=builds).evaluate(context)


def _compile(context: TrialContext, leaves: Leaves) -> TierOutcome:
    sandbox = _sandbox(context, leaves)
    builds = Builds(sandbox, BaselineCache(), registry="gate")
    return CompileOracle(sandbox, builds=builds).evaluate(context)


def _suite_leaves(base: tuple[str, ...], patched: tuple[str, ...]) -> Leaves:
    def leaves(request: SandboxRequest, is_patched: bool) -> tuple[str, ...]:
        if "test" not in request.command:
            return ()
        return patched if is_patched else base

    return leaves


def test_a_fifo_the_base_suite_leaves_too_is_not_the_candidates(
    make_trial: TrialFactory,
) -> None:
    outcome = _tests(make_trial(BASE, PATCH), _suite_leaves((FIFO,), (FIFO,)))
    assert outcome.verdict is Verdict.PASS, outcome.reason


def test_a_special_entry_the_patched_run_adds_fails_naming_it(make_trial: TrialFactory) -> None:
    outcome = _tests(make_trial(BASE, PATCH), _suite_leaves((FIFO,), (FIFO, SOCKET)))
    assert outcome.verdict is Verdict.FAIL
    assert outcome.reason == f"test suite went past a limit of its sandbox: {SOCKET}"


def test_a_fifo_only_the_patched_run_leaves_fails(make_trial: TrialFactory) -> None:
    outcome = _tests(make_trial(BASE, PATCH), _suite_leaves((), (FIFO,)))
    assert outcome.verdict is Verdict.FAIL
    assert outcome.reason == f"test suite went past a limit of its sandbox: {FIFO}"


def test_a_build_is_weighed_against_the_base_build(make_trial: TrialFactory) -> None:
    def leaves(request: SandboxRequest, patched: bool) -> tuple[str, ...]:
        return (FIFO, SOCKET) if patched else (FIFO,)

    outcome = _compile(make_trial(BASE, PATCH), leaves)
    assert outcome.verdict is Verdict.FAIL
    assert outcome.reason == f"build went past a limit of its sandbox: {SOCKET}"
    same = _compile(make_trial(BASE, PATCH), lambda _request, _patched: (FIFO,))
    assert same.verdict is Verdict.PASS, same.reason


@pytest.mark.parametrize("base", [(FIFO,), (FIFO, UNLISTED_SPECIAL_ENTRIES)])
def test_more_entries_than_the_sandbox_lists_are_never_excused(base: tuple[str, ...]) -> None:
    patched = _left(SandboxResult(0), (FIFO, UNLISTED_SPECIAL_ENTRIES))
    assert limit_failure(patched, "test suite", base=_left(SandboxResult(0), base)) == (
        f"test suite went past a limit of its sandbox: {UNLISTED_SPECIAL_ENTRIES}"
    )


def test_another_limit_beside_special_entries_is_still_a_limit() -> None:
    deep = replace(
        _left(SandboxResult(0), (FIFO,)), workspace_limit="workspace depth (1000 folders)"
    )
    assert limit_failure(deep, "test suite", base=deep) == (
        "test suite went past a limit of its sandbox: workspace depth (1000 folders)"
    )


def test_a_baseline_that_leaves_special_entries_is_kept() -> None:
    cache = BaselineCache()
    runs: list[int] = []

    def run() -> SandboxResult:
        runs.append(1)
        return _left(SandboxResult(0, image_id="sha256:i"), (FIFO,))

    cache.get_or_run("k", run)
    cache.get_or_run("k", run)
    assert len(runs) == 1


def test_special_entries_survive_a_round_trip_and_old_records_read_without_them() -> None:
    result = _left(SandboxResult(0, image_id="sha256:i"), (FIFO, SOCKET))
    assert SandboxResult.from_dict(result.to_dict()) == result
    assert "special_entries" not in SandboxResult(0).to_dict()
    assert SandboxResult.from_dict({"exit_code": 0}).special_entries == ()
