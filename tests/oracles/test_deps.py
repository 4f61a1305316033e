"""Dependency resolution: a run's outcome from the gate's log and the tool's own output,
the digests that key caches, and which outcomes the resolver keeps."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from migration_evals.core.ports import (
    CacheMount,
    RegistryFetch,
    SandboxAction,
    SandboxRequest,
    SandboxResult,
)
from migration_evals.oracles.baselines import BaselineCache
from migration_evals.oracles.deps import Resolution, ResolutionStatus, Resolver, classify
from migration_evals.oracles.ecosystems.go.resolution import RESOLUTION as GO
from migration_evals.oracles.ecosystems.maven.resolution import RESOLUTION as MAVEN
from tests.oracles.resolution_runs import (
    GO_PROJECT,
    GO_RESOLVED,
    JUNIT,
    LANG3,
    MAVEN_COMPILE_ERROR,
    MAVEN_HEADER,
    MAVEN_MISSING,
    MAVEN_PROJECT,
)
from tests.oracles.resolution_runs import fetch as _fetch
from tests.oracles.resolution_runs import result as _result

# -- classify ----------------------------------------------------------------------------


def test_a_registry_that_failed_is_unreachable_even_beside_a_404() -> None:
    result = _result(
        1,
        MAVEN_MISSING,
        _fetch(f"{LANG3}.pom", 404),
        _fetch(f"{JUNIT}.jar", 502, "upstream-error"),
    )
    resolution = classify(MAVEN_PROJECT, result, "m", MAVEN)
    assert resolution.status is ResolutionStatus.UNREACHABLE
    assert resolution.blocked
    assert f"{JUNIT}.jar" in resolution.detail


def test_offline_and_not_in_the_cache_is_offline() -> None:
    result = _result(1, MAVEN_MISSING, _fetch(f"{LANG3}.pom", 503, "offline"))
    resolution = classify(MAVEN_PROJECT, result, "m", MAVEN)
    assert resolution.status is ResolutionStatus.OFFLINE
    assert resolution.blocked
    assert resolution.missing == ()


def test_a_timed_out_run_is_never_resolved() -> None:
    result = SandboxResult(0, GO_RESOLVED, image_id="sha256:img", timed_out=True)
    resolution = classify(GO_PROJECT, result, "go", GO)
    assert resolution.status is ResolutionStatus.INCOMPLETE
    assert resolution.detail == "resolution timed out"


def test_the_build_cache_a_go_run_filled_is_named_for_its_builds() -> None:
    key = "0123456789abcdef0123456789abcdef"
    output = GO_RESOLVED.replace("== modules ==", f"== build cache == {key}\n== modules ==")
    resolution = classify(GO_PROJECT, _result(0, output), "go", GO)
    assert resolution.build_cache == key
    assert resolution.resolved[0] == "example.com/go-modern"


@pytest.mark.parametrize(
    "line",
    [
        "",  # the run made none (no packages, or the folder could not be made)
        "== build cache == ../../etc",  # only a name of 32 hex digits is taken
        "== build cache == 0123456789abcdef0123456789abcdef0",
        "x == build cache == 0123456789abcdef0123456789abcdef",
    ],
)
def test_no_build_cache_is_named_unless_the_run_said_one_exactly(line: str) -> None:
    output = GO_RESOLVED.replace("== modules ==", f"{line}\n== modules ==")
    assert classify(GO_PROJECT, _result(0, output), "go", GO).build_cache == ""


def test_a_run_that_failed_names_no_build_cache() -> None:
    key = "0123456789abcdef0123456789abcdef"
    output = f"go version go1.22.12 linux/amd64\n== build cache == {key}\n"
    assert classify(GO_PROJECT, _result(1, output), "go", GO).build_cache == ""


# -- digests and caches ------------------------------------------------------------------


def _resolved(*fetches: RegistryFetch) -> Resolution:
    return classify(MAVEN_PROJECT, _result(0, MAVEN_HEADER, *fetches), "m", MAVEN)


def test_the_digest_names_the_resolved_set_whatever_the_fetch_order() -> None:
    junit, lang = _fetch(f"{JUNIT}.jar"), _fetch("org/x/a/1.0/a-1.0.jar")
    assert _resolved(junit, lang).digest == _resolved(lang, junit).digest
    assert _resolved(junit, lang).digest != _resolved(junit).digest
    newer = _fetch("org/x/a/1.1/a-1.1.jar")
    assert _resolved(junit, lang).digest != _resolved(junit, newer).digest


def test_the_digest_names_the_toolchain_too() -> None:
    go = GO_RESOLVED
    older = go.replace("go version go1.23.4", "go version go1.22.12")
    assert classify(GO_PROJECT, _result(0, go), "go", GO).digest != (
        classify(GO_PROJECT, _result(0, older), "go", GO).digest
    )


# -- the resolver --------------------------------------------------------------------------


def _request() -> SandboxRequest:
    return SandboxRequest(
        SandboxAction.RESOLVE,
        "img",
        ("mvn", "test"),
        "maven/abc",
        pinned=(("img", "sha256:img"),),
        mounts=(CacheMount("maven/abc", writable=True),),
    )


class _Runs:
    """A resolution run answering ``result`` and counting its calls."""

    def __init__(self, result: SandboxResult) -> None:
        self.result = result
        self.calls = 0

    def __call__(self, _request: SandboxRequest) -> SandboxResult:
        self.calls += 1
        return self.result


def _resolver(runs: Callable[[SandboxRequest], SandboxResult], folders: set[str]) -> Resolver:
    return Resolver(runs, BaselineCache(), registry="gate", has_cache=folders.__contains__)


def _twice(result: SandboxResult, folders: set[str] | None = None) -> int:
    runs = _Runs(result)
    folders = {"maven/abc"} if folders is None else folders
    resolver = _resolver(runs, folders)
    for _ in range(2):
        resolver.resolve(MAVEN_PROJECT, MAVEN, _request(), "oracle")
    return runs.calls


def test_a_resolved_outcome_is_reused_while_its_cache_folder_exists() -> None:
    assert _twice(_result(0, MAVEN_HEADER, _fetch(f"{JUNIT}.jar"))) == 1


def test_a_resolved_outcome_runs_again_when_its_cache_folder_is_gone() -> None:
    assert _twice(_result(0, MAVEN_HEADER, _fetch(f"{JUNIT}.jar")), folders=set()) == 2


def test_a_missing_outcome_is_settled_and_reused() -> None:
    missing = _result(1, MAVEN_MISSING, _fetch(f"{LANG3}.jar", 404))
    assert _twice(missing) == 1


def test_a_run_the_trees_own_build_stopped_is_settled_and_reused() -> None:
    # Every fetch answered, and a module did not compile: the same tree stops there again.
    assert _twice(_result(1, MAVEN_COMPILE_ERROR, _fetch(f"{JUNIT}.jar"))) == 1


@pytest.mark.parametrize(
    "result",
    [
        _result(1, MAVEN_MISSING, _fetch(f"{LANG3}.jar", 502, "upstream-error")),
        _result(1, MAVEN_MISSING, _fetch(f"{LANG3}.jar", 503, "offline")),
        dataclasses.replace(_result(1, MAVEN_COMPILE_ERROR), timed_out=True),
        dataclasses.replace(_result(1, MAVEN_COMPILE_ERROR), oom_killed=True),
        dataclasses.replace(_result(1, MAVEN_COMPILE_ERROR), workspace_exceeded=True),
        _result(137, MAVEN_COMPILE_ERROR),
    ],
    ids=["unreachable", "offline", "timed-out", "out-of-memory", "workspace-full", "killed"],
)
def test_an_unsettled_outcome_is_asked_again(result: SandboxResult) -> None:
    assert _twice(result) == 2


def test_the_resolver_classifies_what_it_ran_against_the_request_cache() -> None:
    resolver = _resolver(_Runs(_result(0, MAVEN_HEADER, _fetch(f"{JUNIT}.jar"))), {"maven/abc"})
    resolution = resolver.resolve(MAVEN_PROJECT, MAVEN, _request(), "oracle")
    assert (resolution.status, resolution.cache) == (ResolutionStatus.RESOLVED, "maven/abc")
