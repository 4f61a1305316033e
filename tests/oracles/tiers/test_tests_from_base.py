"""Tier 3 grades the base commit's tests against the patched code: test files the patch
added are left out, edited ones are the base's unless the base's do not build, and an
edit that weakens a test fails before any run."""

from __future__ import annotations

import json
import tarfile
from collections.abc import Callable

from migration_evals.core.model import Verdict
from migration_evals.core.ports import SandboxAction, SandboxRequest, SandboxResult
from migration_evals.oracles.baselines import BaselineCache
from migration_evals.oracles.builds import Builds
from migration_evals.oracles.tiers.base import TierOutcome, TrialContext
from migration_evals.oracles.tiers.tests import TestsOracle
from migration_evals.oracles.workspace import tree_hash
from tests.conftest import TrialFactory
from tests.fakes import BuildScript, FakeSandbox, fake_result, maven_log

GO_MOD = "module m\n\ngo 1.19\n"
KV = (
    'package kv\n\nimport "io/ioutil"\n\n'
    "func Read(p string) ([]byte, error) { return ioutil.ReadFile(p) }\n"
)
KV_REWRITTEN = KV.replace('"io/ioutil"', '"os"').replace("ioutil.ReadFile", "os.ReadFile")
KV_TEST = """package kv

import (
	"io/ioutil"
	"testing"
)

func TestRead(t *testing.T) {
	dir, _ := ioutil.TempDir("", "kv")
	if _, err := Read(dir + "/none"); err == nil {
		t.Fatal("read a missing file")
	}
}

func name() string { return "none" }
"""
KV_TEST_REWRITTEN = KV_TEST.replace('"io/ioutil"', '"os"').replace("ioutil.TempDir", "os.MkdirTemp")
FILES = {"go.mod": GO_MOD, "kv/kv.go": KV, "kv/kv_test.go": KV_TEST}
REWRITE = {"kv/kv.go": KV_REWRITTEN}
TEST_MAIN = """package kv

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	m.Run()
	os.Exit(0)
}
"""

Tree = dict[str, str]


def _tree(request: SandboxRequest) -> Tree:
    assert request.tree is not None
    files: Tree = {}
    with request.tree(0, 0, request.workdir) as archive, tarfile.open(fileobj=archive) as tar:
        for member in tar:
            handle = tar.extractfile(member) if member.isreg() else None
            if handle is not None:
                files[member.name] = handle.read().decode()
    return files


def _events(passes: bool) -> str:
    action = "pass" if passes else "fail"
    return "\n".join(
        json.dumps(event)
        for event in (
            {"Action": "run", "Package": "m/kv", "Test": "TestRead"},
            {"Action": action, "Package": "m/kv", "Test": "TestRead"},
            {"Action": action, "Package": "m/kv"},
        )
    )


BUILD_FAILED = (
    "kv/kv_test.go:9:12: undefined: ioutil\n"
    + json.dumps({"Action": "output", "Package": "m/kv", "Output": "FAIL\tm/kv [build failed]\n"})
    + "\n"
    + json.dumps({"Action": "fail", "Package": "m/kv"})
)


def _evaluate(
    context: TrialContext, suite: Callable[[Tree], SandboxResult]
) -> tuple[TierOutcome, list[Tree]]:
    """Tier 3 with every test run answered by ``suite`` from the tree it was given; the
    trees of the patched side's test runs, in order."""
    trees: list[Tree] = []
    base = tree_hash(context.changeset.base_commit, None)

    def run(request: SandboxRequest, patched: bool) -> SandboxResult:
        if request.action is not SandboxAction.RUN or "test" not in request.command:
            return fake_result(request)
        tree = _tree(request)
        if patched:
            trees.append(tree)
        return suite(tree)

    sandbox = FakeSandbox(BuildScript(base, run=run))
    oracle = TestsOracle(sandbox, builds=Builds(sandbox, BaselineCache(), registry="gate"))
    return oracle.evaluate(context), trees


def _passes(_tree: Tree) -> SandboxResult:
    return SandboxResult(0, _events(True), image_id="sha256:fake")


def test_a_patch_that_leaves_the_tests_alone_is_graded_on_the_patched_tree(
    make_trial: TrialFactory,
) -> None:
    context = make_trial(FILES, REWRITE, "go-import-rewrite")
    graded = context.workspace.graded(["**/*_test.go"])
    assert graded.tree_hash == context.workspace.tree_hash()
    outcome, trees = _evaluate(context, _passes)
    assert outcome.verdict is Verdict.PASS, outcome.reason
    assert trees[0]["kv/kv.go"] == KV_REWRITTEN
    assert "test_edits" not in outcome.details


def test_an_added_test_main_is_left_out_and_named_when_the_tests_fail(
    make_trial: TrialFactory,
) -> None:
    """The TestMain would exit 0 whatever the tests did; it is never in the graded tree,
    so the real failure stands, and the evidence names the file left out."""
    context = make_trial(FILES, {**REWRITE, "kv/zz_main_test.go": TEST_MAIN}, "go-import-rewrite")
    assert context.workspace.graded(["**/*_test.go"]).tree_hash != context.workspace.tree_hash()

    def suite(tree: Tree) -> SandboxResult:
        """TestRead passes at base and fails after the patch; the TestMain, where it
        runs, makes the run exit 0 anyway."""
        if tree["kv/kv.go"] == KV:
            return _passes(tree)
        exits_zero = "kv/zz_main_test.go" in tree
        return SandboxResult(0 if exits_zero else 1, _events(False), image_id="sha256:fake")

    outcome, trees = _evaluate(context, suite)
    assert trees  # the first run and its re-runs
    assert not any("kv/zz_main_test.go" in tree for tree in trees)
    assert outcome.verdict is Verdict.FAIL
    left_out = [e for e in outcome.evidence if e.path == "kv/zz_main_test.go"]
    assert [e.message for e in left_out] == [
        "a new test file (defines TestMain): left out of grading"
    ]
    assert outcome.details["test_edits"] == [
        {
            "path": "kv/zz_main_test.go",
            "kind": "added",
            "reason": "a new test file (defines TestMain): left out of grading",
        }
    ]


def test_an_edit_of_a_test_file_is_not_graded_while_the_bases_tests_build(
    make_trial: TrialFactory,
) -> None:
    context = make_trial(
        FILES, {**REWRITE, "kv/kv_test.go": KV_TEST_REWRITTEN}, "go-import-rewrite"
    )
    outcome, trees = _evaluate(context, _passes)
    assert outcome.verdict is Verdict.PASS, outcome.reason
    assert [tree["kv/kv_test.go"] for tree in trees] == [KV_TEST]
    assert outcome.details["tests_from_patch"] == []
    assert outcome.details["tests_changed"] is False


def _builds_only_without_ioutil(tree: Tree) -> SandboxResult:
    """A suite whose tests cannot use io/ioutil any more once the code moved off it (as
    if the rewrite removed the helper they shared); the base builds as it is."""
    if "io/ioutil" in tree["kv/kv_test.go"] and tree["kv/kv.go"] != KV:
        return SandboxResult(1, BUILD_FAILED, image_id="sha256:fake")
    return _passes(tree)


def test_the_patchs_mechanical_test_edit_is_used_where_the_bases_tests_do_not_build(
    make_trial: TrialFactory,
) -> None:
    context = make_trial(
        FILES, {**REWRITE, "kv/kv_test.go": KV_TEST_REWRITTEN}, "go-import-rewrite"
    )
    outcome, trees = _evaluate(context, _builds_only_without_ioutil)
    assert [tree["kv/kv_test.go"] for tree in trees] == [KV_TEST, KV_TEST_REWRITTEN]
    assert outcome.verdict is Verdict.PASS, outcome.reason
    assert "tests changed" not in outcome.reason
    assert outcome.details["tests_from_patch"] == ["kv/kv_test.go"]
    assert outcome.details["tests_changed"] is False


def test_a_preserving_test_edit_used_marks_the_trial_tests_changed(
    make_trial: TrialFactory,
) -> None:
    preserving = KV_TEST_REWRITTEN.replace('return "none"', 'return "nothing"')
    context = make_trial(FILES, {**REWRITE, "kv/kv_test.go": preserving}, "go-import-rewrite")
    outcome, trees = _evaluate(context, _builds_only_without_ioutil)
    assert trees[-1]["kv/kv_test.go"] == preserving
    assert outcome.verdict is Verdict.PASS, outcome.reason
    assert "tests changed" in outcome.reason
    assert outcome.details["tests_changed"] is True
    assert outcome.details["test_edits"] == [
        {"path": "kv/kv_test.go", "kind": "preserving", "reason": "tests kept; other code changed"}
    ]


def test_a_weakened_test_fails_before_any_run(make_trial: TrialFactory) -> None:
    weakened = KV_TEST_REWRITTEN.replace("err == nil", "false")
    context = make_trial(FILES, {**REWRITE, "kv/kv_test.go": weakened}, "go-import-rewrite")
    outcome, trees = _evaluate(context, _passes)
    assert trees == []
    assert outcome.verdict is Verdict.FAIL
    assert outcome.reason == "the patch weakens the tests: func TestRead was changed"
    assert outcome.evidence[0].path == "kv/kv_test.go"
    assert outcome.evidence[0].line == 10
    assert '+if _, err := Read(dir + "/none"); false {' in outcome.evidence[0].message


POM = """<project>
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId><artifactId>app</artifactId><version>1</version>
  <properties><maven.compiler.release>{release}</maven.compiler.release></properties>
</project>
"""
JAVA_TEST = """package x;

import static org.junit.Assert.assertEquals;
import static org.mockito.Matchers.anyString;

import org.junit.Test;

public class ATest {
    @Test
    public void names() {
        assertEquals("a", new A().name(anyString()));
    }
}
"""
JAVA_TEST_RENAMED = JAVA_TEST.replace("org.mockito.Matchers", "org.mockito.ArgumentMatchers")
TEST_COMPILE_FAILED = (
    "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.11.0"
    ":testCompile (default-testCompile) on project app: Compilation failure\n"
)
REPORT = '<testsuite><testcase classname="x.ATest" name="names"/></testsuite>'


def test_a_java_suite_that_needs_the_mockito_rename_is_graded_with_it(
    make_trial: TrialFactory,
) -> None:
    """Mockito 2+ has no ``Matchers``: the base's test cannot compile against the
    upgraded build, and the patch's rename of it, the recipe's own, is graded instead."""
    test = "src/test/java/x/ATest.java"
    files = {
        "pom.xml": POM.format(release="8"),
        "src/main/java/x/A.java": "package x;\n\npublic class A {\n}\n",
        test: JAVA_TEST,
    }
    changes = {"pom.xml": POM.format(release="17"), test: JAVA_TEST_RENAMED}

    def suite(tree: Tree) -> SandboxResult:
        upgraded = "<maven.compiler.release>17" in tree["pom.xml"]
        if upgraded and "org.mockito.Matchers" in tree[test]:
            return SandboxResult(1, TEST_COMPILE_FAILED, image_id="sha256:fake")
        artifacts = {"target/surefire-reports/TEST-x.ATest.xml": REPORT}
        return SandboxResult(0, maven_log(1), image_id="sha256:fake", artifacts=artifacts)

    outcome, trees = _evaluate(make_trial(files, changes), suite)
    assert [tree[test] for tree in trees] == [JAVA_TEST, JAVA_TEST_RENAMED]
    assert outcome.verdict is Verdict.PASS, outcome.reason
    assert outcome.details["tests_from_patch"] == [test]
    assert outcome.details["test_edits"] == [{"path": test, "kind": "mechanical"}]


def test_a_test_copy_whose_import_a_package_var_replaces_fails_before_any_run(
    make_trial: TrialFactory,
) -> None:
    """The patch's ``var reflect`` makes the base's test stop compiling; its copy of the
    test, every token the same but for the import it drops, would call the patch's
    DeepEqual. The copy is not usable: the name no longer means what it meant."""
    test = KV_TEST.replace('\t"testing"\n', '\t"reflect"\n\t"testing"\n').replace(
        "err == nil {", "err == nil || !reflect.DeepEqual(dir, dir) {"
    )
    copy = test.replace('\t"reflect"\n', "").replace('"io/ioutil"', '"os"')
    copy = copy.replace("ioutil.TempDir", "os.MkdirTemp")
    lenient = (
        "package kv\n\ntype lenient struct{}\n\n"
        "func (lenient) DeepEqual(a, b interface{}) bool { return true }\n\n"
        "var reflect = lenient{}\n"
    )
    changes = {**REWRITE, "kv/lenient.go": lenient, "kv/kv_test.go": copy}
    context = make_trial({**FILES, "kv/kv_test.go": test}, changes, "go-import-rewrite")
    outcome, trees = _evaluate(context, _passes)
    assert trees == []
    assert outcome.verdict is Verdict.FAIL
    assert outcome.reason == (
        "the patch weakens the tests: a name the tests use is rebound: reflect means var"
        ' reflect (kv/lenient.go) in the patch, import "reflect" at the base'
    )
    assert outcome.evidence[0].path == "kv/kv_test.go"


def test_a_java_17_syntax_edit_graded_in_the_bases_place_is_tests_changed(
    make_trial: TrialFactory,
) -> None:
    """The rename the upgraded Mockito needs, written with var: mechanical, and since it
    is graded in place of the base's test, the judge reviews it."""
    test = "src/test/java/x/ATest.java"
    typed = JAVA_TEST.replace(
        '        assertEquals("a", new A().name(anyString()));',
        '        A a = new A();\n        assertEquals("a", a.name(anyString()));',
    )
    renamed = typed.replace("org.mockito.Matchers", "org.mockito.ArgumentMatchers")
    renamed = renamed.replace("A a = new A();", "var a = new A();")
    files = {
        "pom.xml": POM.format(release="8"),
        "src/main/java/x/A.java": "package x;\n\npublic class A {\n}\n",
        test: typed,
    }

    def suite(tree: Tree) -> SandboxResult:
        upgraded = "<maven.compiler.release>17" in tree["pom.xml"]
        if upgraded and "org.mockito.Matchers" in tree[test]:
            return SandboxResult(1, TEST_COMPILE_FAILED, image_id="sha256:fake")
        artifacts = {"target/surefire-reports/TEST-x.ATest.xml": REPORT}
        return SandboxResult(0, maven_log(1), image_id="sha256:fake", artifacts=artifacts)

    changes = {"pom.xml": POM.format(release="17"), test: renamed}
    outcome, trees = _evaluate(make_trial(files, changes), suite)
    assert [tree[test] for tree in trees] == [typed, renamed]
    assert outcome.verdict is Verdict.PASS, outcome.reason
    assert "tests changed" in outcome.reason
    assert outcome.details["tests_changed"] is True
    assert outcome.details["test_edits"] == [
        {
            "path": test,
            "kind": "mechanical",
            "reason": "tests changed (mechanical): Java 17 syntax only (var)",
            "syntax": ["var"],
        }
    ]
