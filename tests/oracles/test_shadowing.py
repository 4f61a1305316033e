"""No shadowing: sources in the platform's, a test library's or a dependency's packages,
and Go's routes to building a local copy in place of a module."""

from __future__ import annotations

import pytest

from migration_evals.core.model import Evidence, Verdict
from migration_evals.core.ports import SandboxResult
from migration_evals.core.specs import Recipe, SpecSet
from migration_evals.oracles.baselines import BaselineCache
from migration_evals.oracles.builds import Builds
from migration_evals.oracles.ecosystems.registry import check_shadowing
from migration_evals.oracles.shadowing import check_go_shadowing, go_replaces, java_package
from migration_evals.oracles.tiers.apply import ApplyOracle
from migration_evals.oracles.tiers.compile import CompileOracle
from migration_evals.oracles.tree import ChangeKind, FileChange, MemoryTree
from migration_evals.oracles.workspace import tree_hash
from tests.conftest import TrialFactory
from tests.fakes import BuildScript, FakeSandbox
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


# -- Go ----------------------------------------------------------------------------------


GO_MOD = "module example.com/kv\n\ngo 1.21\n\nrequire golang.org/x/text v0.21.0\n"
GO = {"go.mod": GO_MOD, "kv/store.go": "package kv\n"}


def test_go_replaces_reads_lines_and_blocks() -> None:
    source = (
        b"module m\nreplace a => ./a\nreplace (\n\tb v1.0.0 => ../b // why\n\tc => d v1.2.0\n)\n"
    )
    assert go_replaces(source) == {"a": ("./a", 2), "b": ("../b", 4), "c": ("d", 5)}


def test_a_local_replace_the_patch_adds_fails_and_a_versioned_one_passes(specs: SpecSet) -> None:
    go = specs.recipe("go-import-rewrite")
    local = GO_MOD + "replace golang.org/x/text => ./fork\n"
    evidence = only(check_shadowing(go, tree(GO, {"go.mod": local})))
    assert evidence.message.startswith("go.mod replaces golang.org/x/text with the folder ./fork")
    assert (evidence.path, evidence.line) == ("go.mod", 6)
    versioned = GO_MOD + "replace golang.org/x/text => golang.org/x/text v0.22.0\n"
    assert check_shadowing(go, tree(GO, {"go.mod": versioned})) == []


def test_a_replace_the_base_already_had_may_stay(specs: SpecSet) -> None:
    go = specs.recipe("go-import-rewrite")
    base = {**GO, "go.mod": GO_MOD + "replace github.com/pkg/errors => ./third_party/pkgerrors\n"}
    changed = base["go.mod"].replace("go 1.21", "go 1.22")
    assert check_shadowing(go, tree(base, {"go.mod": changed})) == []


def test_a_vendored_copy_the_patch_changes_fails(specs: SpecSet) -> None:
    go = specs.recipe("go-import-rewrite")
    path = "vendor/github.com/stretchr/testify/assert/assertions.go"
    base = {**GO, path: "package assert\n"}
    evidence = only(check_shadowing(go, tree(base, {path: "package assert\n\nfunc True() {}\n"})))
    assert (
        evidence.message
        == f"{path} is a vendored copy of github.com/stretchr/testify/assert: the patch may"
        " not change it"
    )


def test_a_module_renamed_to_a_standard_library_path_fails(specs: SpecSet) -> None:
    go = specs.recipe("go-import-rewrite")
    evidence = only(
        check_shadowing(go, tree(GO, {"go.mod": GO_MOD.replace("example.com/kv", "testing")}))
    )
    assert "renames its module to testing, a path of the standard library" in evidence.message


def test_a_file_under_a_dependency_modules_path_fails() -> None:
    files = {**GO, "x/go.mod": "module golang.org/x/text\n"}
    added = {"x/unicode/norm/norm.go": "package norm\n"}
    view = tree({**GO}, {**{p: c for p, c in files.items() if p not in GO}, **added})
    evidence = check_go_shadowing(view, ["golang.org/x/text"])
    assert [e.path for e in evidence] == ["x/unicode/norm/norm.go"]
    assert (
        "package golang.org/x/text/unicode/norm, under the dependency golang.org/x/text"
        in evidence[0].message
    )
    assert (
        check_go_shadowing(
            tree(GO, {"kv/store.go": "package kv\n\nvar X = 1\n"}), ["golang.org/x/text"]
        )
        == []
    )


def test_a_module_the_base_itself_declares_is_its_own() -> None:
    # go-pkgerrors: the base replaces the dependency with a local stand-in it owns.
    base = {
        **GO,
        "third_party/pkgerrors/go.mod": "module github.com/pkg/errors\n",
        "third_party/pkgerrors/errors.go": "package errors\n",
    }
    changed = {"third_party/pkgerrors/errors.go": "package errors\n\nvar X = 1\n"}
    assert check_go_shadowing(tree(base, changed), ["github.com/pkg/errors"]) == []


# -- the tiers ---------------------------------------------------------------------------


def test_tier_1_fails_an_added_junit_assert(make_trial: TrialFactory) -> None:
    context = make_trial(
        BASE, {"pom.xml": POM.format(release="17"), "src/main/java/org/junit/Assert.java": ASSERT}
    )
    outcome = ApplyOracle().evaluate(context)
    assert outcome.verdict is Verdict.FAIL
    assert outcome.reason.startswith(
        "the patch shadows code it does not own: src/main/java/org/junit/Assert.java:1:"
    )


def test_tier_1_fails_a_weakened_test_configuration(make_trial: TrialFactory) -> None:
    pom = POM.format(release="17").replace(
        "</properties>", "<skipTests>true</skipTests></properties>"
    )
    outcome = ApplyOracle().evaluate(make_trial(BASE, {"pom.xml": pom}))
    assert outcome.verdict is Verdict.FAIL
    assert outcome.reason.startswith(
        "the patch weakens the test configuration: pom.xml:4: test-skip:"
    )


def test_tier_2_fails_a_source_in_a_resolved_dependencys_package(make_trial: TrialFactory) -> None:
    shadow = "src/main/java/com/google/common/base/Strings.java"
    changes = {
        "pom.xml": POM.format(release="17"),
        shadow: "package com.google.common.base;\nclass Strings {}\n",
    }
    context = make_trial(BASE, changes)
    resolved = SandboxResult(0, image_id="sha256:r", packages=("com.google.common.base",))
    script = BuildScript(tree_hash(context.changeset.base_commit, None), resolved=resolved)
    sandbox = FakeSandbox(script)
    oracle = CompileOracle(sandbox, Builds(sandbox, BaselineCache(), registry=""))
    outcome = oracle.evaluate(context)
    assert outcome.verdict is Verdict.FAIL
    assert outcome.reason.startswith(f"the patch shadows a dependency: {shadow}:1:")
    assert [r.action.value for r in sandbox.requests] == ["resolve", "resolve"]  # no build


def test_tier_2_passes_a_tree_that_shadows_nothing(make_trial: TrialFactory) -> None:
    context = make_trial(BASE, {"pom.xml": POM.format(release="17")})
    resolved = SandboxResult(0, image_id="sha256:r", packages=("com.google.common.base",))
    script = BuildScript(tree_hash(context.changeset.base_commit, None), resolved=resolved)
    sandbox = FakeSandbox(script)
    outcome = CompileOracle(sandbox, Builds(sandbox, BaselineCache(), registry="")).evaluate(
        context
    )
    assert outcome.verdict is Verdict.PASS, outcome.reason


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


def test_tier_2_fails_a_go_file_under_a_resolved_dependency_module(
    make_trial: TrialFactory,
) -> None:
    # The module depends on a separately versioned module nested under its own path; a
    # package the patch writes there would be built instead of the dependency's.
    files = {
        "go.mod": "module example.com/kv\n\ngo 1.21\n\nrequire example.com/kv/sub v1.0.0\n",
        "kv/store.go": 'package kv\n\nimport "io/ioutil"\n\nvar _ = ioutil.ReadFile\n',
    }
    changes = {
        "kv/store.go": 'package kv\n\nimport "os"\n\nvar _ = os.ReadFile\n',
        "sub/fake.go": "package sub\n",
    }
    context = make_trial(files, changes, "go-import-rewrite")
    listing = (
        "go version go1.21.0 linux/amd64\n== modules ==\n"
        "example.com/kv\nexample.com/kv/sub v1.0.0\n"
    )
    resolved = SandboxResult(0, listing, image_id="sha256:r")
    script = BuildScript(tree_hash(context.changeset.base_commit, None), resolved=resolved)
    sandbox = FakeSandbox(script)
    outcome = CompileOracle(sandbox, Builds(sandbox, BaselineCache(), registry="")).evaluate(
        context
    )
    assert outcome.verdict is Verdict.FAIL
    assert outcome.reason == (
        "the patch shadows a dependency: sub/fake.go: sub/fake.go is in package"
        " example.com/kv/sub, under the dependency example.com/kv/sub: it would shadow it"
    )
