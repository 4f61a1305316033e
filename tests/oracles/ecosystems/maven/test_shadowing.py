"""Java's shadowing rule: sources in the platform's, a test library's or a dependency's
packages."""

from __future__ import annotations

import pytest

from migration_evals.core.model import Evidence
from migration_evals.core.specs import Recipe, SpecSet
from migration_evals.oracles.ecosystems.maven.shadowing import java_package
from migration_evals.oracles.ecosystems.registry import check_shadowing
from migration_evals.oracles.tree import ChangeKind, FileChange, MemoryTree
from tests.fakes import memory_tree as tree

ASSERT = (
    "package org.junit;\n\npublic class Assert {\n"
    "    public static void assertTrue(boolean c) {}\n}\n"
)
GUAVA = "src/main/java/com/google/common/base"
POM = """<project>
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId><artifactId>app</artifactId><version>1</version>
  <properties><maven.compiler.release>{release}</maven.compiler.release></properties>
</project>
"""
APP = "package com.example;\n\npublic class App {\n}\n"
BASE = {"pom.xml": POM.format(release="8"), "src/main/java/com/example/App.java": APP}


@pytest.fixture
def java(specs: SpecSet) -> Recipe:
    return specs.recipe("java8-to-17")


def only(evidence: list[Evidence]) -> Evidence:
    assert len(evidence) == 1, [str(e) for e in evidence]
    return evidence[0]


def test_java_package_reads_the_package_clause_not_comments() -> None:
    assert java_package(b"/* package fake; */\npackage  org.junit . rules;\nclass A {}\n") == (
        "org.junit.rules",
        2,
    )
    assert java_package(b"class A {}\n") is None


@pytest.mark.parametrize(
    ("path", "package", "owner"),
    [
        ("src/main/java/org/junit/Assert.java", "org.junit", "org.junit"),
        ("src/test/java/org/hamcrest/Matchers.java", "org.hamcrest", "org.hamcrest"),
        (
            "src/main/java/org/assertj/core/api/Assertions.java",
            "org.assertj.core.api",
            "org.assertj",
        ),
        ("src/main/java/org/mockito/Mockito.java", "org.mockito", "org.mockito"),
        ("src/main/java/java/util/Objects.java", "java.util", "java"),
        ("src/main/java/javax/annotation/Nullable.java", "javax.annotation", "javax"),
        ("src/main/java/jdk/internal/Misc.java", "jdk.internal", "jdk"),
        ("src/main/java/sun/misc/Unsafe.java", "sun.misc", "sun"),
    ],
)
def test_a_source_in_a_platform_or_test_library_package_fails_naming_both(
    java: Recipe, path: str, package: str, owner: str
) -> None:
    source = f"package {package};\n\npublic class X {{}}\n"
    evidence = only(check_shadowing(java, tree(BASE, {path: source})))
    assert evidence.path == path and evidence.line == 1
    assert f"declares package {package}, which belongs to {owner} (" in evidence.message


def test_a_package_whose_name_only_starts_like_a_prefix_passes(java: Recipe) -> None:
    source = "package javaxtras.util;\n\npublic class X {}\n"
    assert check_shadowing(java, tree(BASE, {"src/main/java/javaxtras/util/X.java": source})) == []


def test_the_repositorys_own_package_under_a_prefix_may_change(java: Recipe) -> None:
    # A test library migrating itself: its own org.junit sources are its code.
    base = {**BASE, "src/main/java/org/junit/Assert.java": ASSERT}
    changed = ASSERT.replace("boolean c", "boolean condition")
    assert check_shadowing(java, tree(base, {"src/main/java/org/junit/Assert.java": changed})) == []


def test_a_dependency_package_fails_unless_the_repository_has_it_too(java: Recipe) -> None:
    dependency = ["com.google.common.base"]
    added = {f"{GUAVA}/Strings.java": "package com.google.common.base;\nclass Strings {}\n"}
    evidence = only(check_shadowing(java, tree(BASE, added), dependency))
    assert "com.google.common.base, which belongs to a dependency of the build" in evidence.message
    # The same package the repository already has (a build fetching the project's last
    # release to compare APIs with): files changed or added in it are its own code.
    own = {
        **BASE,
        f"{GUAVA}/Mine.java": "package com.google.common.base;\nclass Mine {}\n",
    }
    changed = {f"{GUAVA}/Mine.java": "package com.google.common.base;\nclass Mine { }\n"}
    assert check_shadowing(java, tree(own, changed), dependency) == []
    assert check_shadowing(java, tree(own, added), dependency) == []


def test_deleting_a_shadowing_file_is_no_shadowing(java: Recipe) -> None:
    base = {
        **BASE,
        "src/main/java/org/junit/Assert.java": ASSERT,
        "src/main/java/org/junit/Other.java": ASSERT,
    }
    assert check_shadowing(java, tree(base, {"src/main/java/org/junit/Assert.java": None})) == []


def test_a_rename_into_a_shadowed_package_fails(java: Recipe) -> None:
    moved = "src/main/java/org/junit/App.java"
    view = MemoryTree(
        {p: c.encode() for p, c in BASE.items()},
        {
            "pom.xml": BASE["pom.xml"].encode(),
            moved: APP.replace("com.example", "org.junit").encode(),
        },
        [FileChange(ChangeKind.RENAME, "src/main/java/com/example/App.java", moved)],
    )
    assert only(check_shadowing(java, view)).path == moved
