"""Maven's resolution runs: the coordinates of what went through the gate, the artifacts
Maven says it could not get, its versions, and a local repository per project and tree."""

from __future__ import annotations

import pytest

from migration_evals.oracles.deps import ResolutionStatus, classify
from migration_evals.oracles.ecosystems.maven.resolution import RESOLUTION as MAVEN
from migration_evals.oracles.ecosystems.maven.resolution import maven_coordinates_of
from migration_evals.oracles.projects import Project
from tests.oracles.resolution_runs import (
    JUNIT,
    LANG3,
    MAVEN_COMPILE_ERROR,
    MAVEN_HEADER,
    MAVEN_MISSING,
    MAVEN_PROJECT,
)
from tests.oracles.resolution_runs import fetch as _fetch
from tests.oracles.resolution_runs import result as _result


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
    resolution = classify(MAVEN_PROJECT, result, "maven/abc", MAVEN)
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
    resolution = classify(MAVEN_PROJECT, result, "maven/abc", MAVEN)
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
    assert classify(MAVEN_PROJECT, result, "m", MAVEN).missing == (
        "org.example:nope-maven-plugin:9.9",
    )


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
    assert classify(MAVEN_PROJECT, result, "m", MAVEN).missing == (
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
    resolution = classify(MAVEN_PROJECT, result, "m", MAVEN)
    assert resolution.status is ResolutionStatus.INCOMPLETE
    assert resolution.missing == ()
    assert resolution.detail == "resolution exit 1"


def test_each_project_and_tree_has_its_own_local_repository() -> None:
    core = MAVEN.cache(Project("maven", "core"), "tree-a")
    root = MAVEN.cache(MAVEN_PROJECT, "tree-a")
    other_tree = MAVEN.cache(MAVEN_PROJECT, "tree-b")
    assert all(name.startswith("maven/") for name in (core, root, other_tree))
    assert len({core, root, other_tree}) == 3
    assert MAVEN.cache(MAVEN_PROJECT, "tree-a") == root
