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
from migration_evals.oracles.deps import (
    Resolution,
    ResolutionStatus,
    Resolver,
    classify,
    go_module_of,
    maven_coordinates_of,
    resolution_cache,
)
from migration_evals.oracles.projects import Project

MAVEN_PROJECT = Project("maven", "")
GO_PROJECT = Project("go", "svc")
LANG3 = "org/apache/commons/commons-lang3/3.99.0/commons-lang3-3.99.0"
JUNIT = "org/junit/jupiter/junit-jupiter-api/5.14.1/junit-jupiter-api-5.14.1"

# As the java17 image's Maven prints them (its colour resets included).
MAVEN_HEADER = (
    "\x1b[0m\x1b[0mApache Maven 3.8.7\n"
    "Maven home: /usr/share/maven\n"
    "Java version: 17.0.19, vendor: Debian, runtime: /usr/lib/jvm/java-17-openjdk-amd64\n"
    "[INFO] Scanning for projects...\n"
)
MAVEN_MISSING = MAVEN_HEADER + (
    "[INFO] BUILD FAILURE\n"
    "[ERROR] Failed to execute goal on project java-central: Could not resolve dependencies "
    "for project com.example:java-central:jar:0.3.0: Could not find artifact "
    "org.apache.commons:commons-lang3:jar:3.99.0 in migration-evals "
    "(http://127.0.0.1:3128/maven) -> [Help 1]\n"
    "[ERROR] \n"
)
MAVEN_COMPILE_ERROR = MAVEN_HEADER + (
    "[WARNING] The POM for org.example:jar-only:jar:1.0 is missing, no dependency "
    "information available\n"
    "[ERROR] COMPILATION ERROR : \n"
    "[ERROR] /workspace/src/main/java/x/A.java:[3,8] cannot find symbol\n"
    "[INFO] BUILD FAILURE\n"
)
GO_RESOLVED = (
    "go: downloading go1.23.4 (linux/amd64)\n"
    "go version go1.23.4 linux/amd64\n"
    "== modules ==\n"
    "example.com/go-modern\n"
    "golang.org/x/text v0.21.0\n"
    "golang.org/x/sync v0.10.0\n"
)


def _fetch(
    path: str, status: int = 200, source: str = "upstream", route: str = "maven"
) -> RegistryFetch:
    return RegistryFetch(route, path, status, source)


def _result(exit_code: int, output: str = "", *fetches: RegistryFetch) -> SandboxResult:
    return SandboxResult(exit_code, output, image_id="sha256:img", fetches=fetches)


# -- reading paths -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "coordinates"),
    [
        (f"{LANG3}.pom", "org.apache.commons:commons-lang3:3.99.0"),
        (f"{LANG3}.jar", "org.apache.commons:commons-lang3:3.99.0"),
        ("org/x/a/1.0/a-1.0-tests.jar", "org.x:a:1.0"),
        (f"{LANG3}.jar.sha1", None),
        ("org/apache/commons/commons-lang3/maven-metadata.xml", None),
        ("org/x/a/1.0/other-1.0.jar", None),
        ("a/1.0/a-1.0.jar", None),
    ],
)
def test_maven_coordinates_of_a_repository_path(path: str, coordinates: str | None) -> None:
    assert maven_coordinates_of(path) == coordinates


@pytest.mark.parametrize(
    ("path", "module"),
    [
        ("golang.org/x/text/@v/v0.21.0.zip", "golang.org/x/text@v0.21.0"),
        ("github.com/!some!user/x/@v/v9.9.9.info", "github.com/SomeUser/x@v9.9.9"),
        ("github.com/!burnt!sushi/toml/@v/v1.3.2.mod", "github.com/BurntSushi/toml@v1.3.2"),
        ("golang.org/x/text/@v/list", None),
        ("golang.org/x/text/@latest", None),
        ("sumdb/sum.golang.org/lookup/golang.org/x/text@v0.21.0", None),
    ],
)
def test_go_module_of_a_proxy_path_undoes_the_case_encoding(path: str, module: str | None) -> None:
    assert go_module_of(path) == module


# -- classify ----------------------------------------------------------------------------


def test_a_successful_maven_run_is_resolved_with_what_went_through_the_gate() -> None:
    result = _result(
        0,
        MAVEN_HEADER + "[INFO] BUILD SUCCESS\n",
        _fetch(f"{JUNIT}.pom", source="store"),
        _fetch(f"{JUNIT}.pom.sha1", source="store"),
        _fetch(f"{JUNIT}.jar"),
        _fetch("org/junit/jupiter/junit-jupiter-api/maven-metadata.xml"),
        _fetch("org/opentest4j/opentest4j/1.3.0/opentest4j-1.3.0.pom", 404),
    )
    resolution = classify(MAVEN_PROJECT, result, "maven/abc")
    assert resolution.status is ResolutionStatus.RESOLVED
    assert resolution.resolved == ("org.junit.jupiter:junit-jupiter-api:5.14.1",)
    assert resolution.toolchain == {"maven": "3.8.7", "java": "17.0.19"}
    assert resolution.cache == "maven/abc"


def test_a_maven_artifact_the_registry_lacks_and_maven_needs_is_missing() -> None:
    result = _result(
        1,
        MAVEN_MISSING,
        _fetch(f"{JUNIT}.jar"),
        _fetch(f"{LANG3}.pom", 404),
        _fetch(f"{LANG3}.jar", 404),
    )
    resolution = classify(MAVEN_PROJECT, result, "maven/abc")
    assert resolution.status is ResolutionStatus.MISSING
    assert resolution.missing == ("org.apache.commons:commons-lang3:3.99.0",)
    assert "org.apache.commons:commons-lang3:3.99.0" in resolution.detail


@pytest.mark.parametrize(
    "message",
    [
        "[ERROR] Plugin org.example:nope-maven-plugin:9.9 or one of its dependencies could not "
        "be resolved: Failed to read artifact descriptor for org.example:nope-maven-plugin:jar:9.9",
        "[ERROR] Failed to execute goal on project app: Could not resolve dependencies for "
        "project g:app:jar:1: Failure to find org.example:nope-maven-plugin:jar:9.9 in "
        "http://127.0.0.1:3128/maven was cached in the local repository",
    ],
)
def test_other_maven_wordings_of_a_missing_artifact_name_it(message: str) -> None:
    path = "org/example/nope-maven-plugin/9.9/nope-maven-plugin-9.9.pom"
    result = _result(1, MAVEN_HEADER + message + "\n", _fetch(path, 404))
    assert classify(MAVEN_PROJECT, result, "m").missing == ("org.example:nope-maven-plugin:9.9",)


@pytest.mark.parametrize("absent", ["", " (absent)"], ids=["maven-3.8", "maven-3.9"])
def test_every_artifact_of_a_multi_artifact_message_is_named(absent: str) -> None:
    # Maven names only the first artifact in "Could not find artifact"; the list before
    # it is the only place the others appear.
    output = MAVEN_HEADER + (
        "[ERROR] Failed to execute goal on project app: Could not resolve dependencies for "
        "project com.example:app:jar:1.0: The following artifacts could not be resolved: "
        f"org.example:one:jar:9.9{absent}, org.example:two:jar:tests:8.8{absent}: Could not "
        "find artifact org.example:one:jar:9.9 in migration-evals (http://127.0.0.1:3128/maven)\n"
    )
    result = _result(
        1,
        output,
        _fetch("org/example/one/9.9/one-9.9.jar", 404),
        _fetch("org/example/two/8.8/two-8.8-tests.jar", 404),
    )
    assert classify(MAVEN_PROJECT, result, "m").missing == (
        "org.example:one:9.9",
        "org.example:two:8.8",
    )


def test_a_404_maven_tolerated_is_not_missing() -> None:
    # A jar published without its POM: Maven warns and carries on; the run failed on a
    # compile error, which the build will judge.
    result = _result(
        1,
        MAVEN_COMPILE_ERROR,
        _fetch("org/example/jar-only/1.0/jar-only-1.0.pom", 404),
        _fetch("org/example/jar-only/1.0/jar-only-1.0.jar"),
    )
    resolution = classify(MAVEN_PROJECT, result, "m")
    assert resolution.status is ResolutionStatus.INCOMPLETE
    assert resolution.missing == ()
    assert resolution.detail == "resolution exit 1"


def test_a_registry_that_failed_is_unreachable_even_beside_a_404() -> None:
    result = _result(
        1,
        MAVEN_MISSING,
        _fetch(f"{LANG3}.pom", 404),
        _fetch(f"{JUNIT}.jar", 502, "upstream-error"),
    )
    resolution = classify(MAVEN_PROJECT, result, "m")
    assert resolution.status is ResolutionStatus.UNREACHABLE
    assert resolution.blocked
    assert f"{JUNIT}.jar" in resolution.detail


def test_offline_and_not_in_the_cache_is_offline() -> None:
    result = _result(1, MAVEN_MISSING, _fetch(f"{LANG3}.pom", 503, "offline"))
    resolution = classify(MAVEN_PROJECT, result, "m")
    assert resolution.status is ResolutionStatus.OFFLINE
    assert resolution.blocked
    assert resolution.missing == ()


def test_a_timed_out_run_is_never_resolved() -> None:
    result = SandboxResult(0, GO_RESOLVED, image_id="sha256:img", timed_out=True)
    resolution = classify(GO_PROJECT, result, "go")
    assert resolution.status is ResolutionStatus.INCOMPLETE
    assert resolution.detail == "resolution timed out"


def test_a_successful_go_run_lists_the_modules_after_the_marker() -> None:
    fetch = _fetch("golang.org/x/text/@v/v0.21.0.zip", route="go")
    resolution = classify(GO_PROJECT, _result(0, GO_RESOLVED, fetch), "go")
    assert resolution.status is ResolutionStatus.RESOLVED
    assert resolution.resolved == (
        "example.com/go-modern",
        "golang.org/x/sync v0.10.0",
        "golang.org/x/text v0.21.0",
    )
    assert resolution.toolchain == {"go": "go1.23.4"}


def test_the_build_cache_a_go_run_filled_is_named_for_its_builds() -> None:
    key = "0123456789abcdef0123456789abcdef"
    output = GO_RESOLVED.replace("== modules ==", f"== build cache == {key}\n== modules ==")
    resolution = classify(GO_PROJECT, _result(0, output), "go")
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
    assert classify(GO_PROJECT, _result(0, output), "go").build_cache == ""


def test_a_run_that_failed_names_no_build_cache() -> None:
    key = "0123456789abcdef0123456789abcdef"
    output = f"go version go1.22.12 linux/amd64\n== build cache == {key}\n"
    assert classify(GO_PROJECT, _result(1, output), "go").build_cache == ""


def test_a_go_run_that_stopped_before_the_marker_resolved_nothing() -> None:
    output = "go version go1.22.12 linux/amd64\ngo: updates to go.mod needed\n"
    assert classify(GO_PROJECT, _result(1, output), "go").resolved == ()


def test_a_go_module_version_the_proxy_lacks_is_missing_by_its_real_name() -> None:
    output = (
        "go version go1.22.12 linux/amd64\n"
        "go: github.com/SomeUser/x@v9.9.9: reading "
        "http://127.0.0.1:3128/go/github.com/!some!user/x/@v/v9.9.9.info: 404 Not Found\n"
    )
    fetches = (
        _fetch("golang.org/x/text/@v/v0.21.0.mod", route="go"),
        _fetch("github.com/!some!user/x/@v/v9.9.9.info", 404, route="go"),
    )
    resolution = classify(GO_PROJECT, _result(1, output, *fetches), "go")
    assert resolution.status is ResolutionStatus.MISSING
    assert resolution.missing == ("github.com/SomeUser/x@v9.9.9",)


def test_a_go_404_the_output_does_not_name_is_not_missing() -> None:
    output = "go version go1.22.12 linux/amd64\n./a.go:3:2: undefined: x\n"
    fetch = _fetch("example.com/probe/@v/v1.0.0.info", 404, route="go")
    resolution = classify(GO_PROJECT, _result(1, output, fetch), "go")
    assert resolution.status is ResolutionStatus.INCOMPLETE


# -- digests and caches ------------------------------------------------------------------


def _resolved(*fetches: RegistryFetch) -> Resolution:
    return classify(MAVEN_PROJECT, _result(0, MAVEN_HEADER, *fetches), "m")


def test_the_digest_names_the_resolved_set_whatever_the_fetch_order() -> None:
    junit, lang = _fetch(f"{JUNIT}.jar"), _fetch("org/x/a/1.0/a-1.0.jar")
    assert _resolved(junit, lang).digest == _resolved(lang, junit).digest
    assert _resolved(junit, lang).digest != _resolved(junit).digest
    newer = _fetch("org/x/a/1.1/a-1.1.jar")
    assert _resolved(junit, lang).digest != _resolved(junit, newer).digest


def test_the_digest_names_the_toolchain_too() -> None:
    go = GO_RESOLVED
    older = go.replace("go version go1.23.4", "go version go1.22.12")
    assert classify(GO_PROJECT, _result(0, go), "go").digest != (
        classify(GO_PROJECT, _result(0, older), "go").digest
    )


def test_each_project_and_tree_has_its_own_local_repository_and_go_shares_one() -> None:
    core = resolution_cache(Project("maven", "core"), "tree-a")
    root = resolution_cache(MAVEN_PROJECT, "tree-a")
    other_tree = resolution_cache(MAVEN_PROJECT, "tree-b")
    assert all(name.startswith("maven/") for name in (core, root, other_tree))
    assert len({core, root, other_tree}) == 3
    assert resolution_cache(MAVEN_PROJECT, "tree-a") == root
    assert resolution_cache(GO_PROJECT, "tree-a") == resolution_cache(GO_PROJECT, "tree-b") == "go"


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
        resolver.resolve(MAVEN_PROJECT, _request(), "oracle")
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
    resolution = resolver.resolve(MAVEN_PROJECT, _request(), "oracle")
    assert (resolution.status, resolution.cache) == (ResolutionStatus.RESOLVED, "maven/abc")
