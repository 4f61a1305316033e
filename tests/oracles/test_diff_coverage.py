"""Diff coverage from a real ``git diff`` and real report formats: a JaCoCo XML report
(per-line ``<line nr mi ci>``, one report per module) and a Go cover profile (blocks of
statements, once per test binary). Which changed lines are code, which ran, per file."""

from __future__ import annotations

import time
from collections.abc import Mapping

import pytest

from migration_evals.core.diff_coverage import ChangedFile, DiffCoverage, DiffCoverageState
from migration_evals.oracles.coverage import CoverageFormat, read_coverage
from migration_evals.oracles.diff_coverage import (
    ProjectCoverage,
    added_lines,
    diff_coverage,
    diff_without_coverage,
)
from migration_evals.oracles.ecosystems.dockerfile.dockerfiles import is_dockerfile
from migration_evals.oracles.ecosystems.go.coverage import GO_PROFILE, parse_go_profile
from migration_evals.oracles.ecosystems.maven.coverage import JACOCO_XML
from tests.conftest import RepoFactory, diff_of

JAVA_TESTS = ("**/src/test/**",)
GO_TESTS = ("**/*_test.go", "**/testdata/**")

# -- Java -----------------------------------------------------------------------------------

CALCULATOR = """package com.example.calc;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;

public class Calculator {

    public static final List<String> OPERATORS =
            Collections.unmodifiableList(Arrays.asList("+", "-"));

    public int add(int left, int right) {
        return left + right;
    }

    public int divide(int left, int right) {
        if (right == 0) {
            throw new ArithmeticException("division by zero");
        }
        return left / right;
    }
}
"""
# Lines 7 (a comment), 8, 11 and 16 are the patch's; 8 and 11 are code the tests run, 16
# is code no test reaches (nothing divides by zero).
CALCULATOR_17 = """package com.example.calc;

import java.util.List;

public class Calculator {

    // Immutable since Java 9.
    public static final List<String> OPERATORS = List.of("+", "-");

    public int add(int left, int right) {
        return Math.addExact(left, right);
    }

    public int divide(int left, int right) {
        if (right == 0) {
            throw new IllegalArgumentException("division by zero");
        }
        return left / right;
    }
}
"""
POM = "<project><properties><release>{}</release></properties></project>\n"
CALC_TEST = "package com.example.calc;\n\nclass CalculatorTest {}\n"
JAVA_BASE = {
    "pom.xml": POM.format(8),
    "src/main/java/com/example/calc/Calculator.java": CALCULATOR,
    "src/test/java/com/example/calc/CalculatorTest.java": CALC_TEST,
}
JAVA_PATCH = {
    "pom.xml": POM.format(17),
    "src/main/java/com/example/calc/Calculator.java": CALCULATOR_17,
    "src/test/java/com/example/calc/CalculatorTest.java": CALC_TEST + "// edited\n",
}


def _package(ran: Mapping[int, bool], package: str = "com/example/calc") -> str:
    """A package's Calculator as JaCoCo's CLI writes it: one ``<line>`` per line of code
    with its missed and covered instructions and branches, and the counters."""
    lines = "".join(
        f'<line nr="{n}" mi="{0 if hit else 4}" ci="{4 if hit else 0}" mb="0" cb="0"/>'
        for n, hit in ran.items()
    )
    counter = f'<counter type="LINE" missed="{sum(not h for h in ran.values())}" ' + (
        f'covered="{sum(ran.values())}"/>'
    )
    return (
        f'<package name="{package}">'
        f'<class name="{package}/Calculator" sourcefilename="Calculator.java">{counter}'
        f'</class><sourcefile name="Calculator.java">{lines}{counter}</sourcefile>'
        f"{counter}</package>"
    )


def _report(*packages: str) -> str:
    """A whole report, its DOCTYPE as JaCoCo writes it."""
    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><!DOCTYPE report PUBLIC '
        '"-//JACOCO//DTD Report 1.1//EN" "report.dtd"><report name="JaCoCo Coverage Report">'
        f'<sessioninfo id="h-1" start="1" dump="2"/>{"".join(packages)}</report>'
    )


def _jacoco(ran: Mapping[int, bool]) -> str:
    return _report(_package(ran))


# The class's lines of code; no test divides by zero.
JACOCO = _jacoco({5: True, 8: True, 11: True, 15: True, 16: False, 18: True})
MODULES = ".migration-evals/coverage/modules"
MODULE_REPORTS = f"{MODULES}/*.xml"


def _files(
    patch: str, projects: list[ProjectCoverage], fmt: CoverageFormat, tree: Mapping[str, str]
) -> DiffCoverage:
    """Diff coverage of ``patch`` with the patched files' text in ``tree``."""
    return diff_coverage(
        patch,
        JAVA_TESTS if fmt is JACOCO_XML else GO_TESTS,
        projects,
        fmt,
        lambda path: tree[path].encode() if path in tree else None,
    )


def test_java_changed_lines_of_code_and_those_the_tests_ran(make_repo: RepoFactory) -> None:
    repo, _ = make_repo(JAVA_BASE)
    patch = diff_of(repo, JAVA_PATCH)
    coverage = read_coverage(JACOCO_XML, {f"{MODULES}/..xml": JACOCO}, MODULE_REPORTS)
    found = _files(patch, [ProjectCoverage("", None, coverage)], JACOCO_XML, JAVA_PATCH)
    # The comment, the imports, pom.xml and the test file are not main code.
    assert found.files == (
        ChangedFile("src/main/java/com/example/calc/Calculator.java", 3, 2, (16,)),
    )
    assert (found.changed, found.covered, found.state) == (3, 2, DiffCoverageState.EXECUTED)


def test_java_a_class_name_in_two_modules_is_read_from_its_own_modules_report(
    make_repo: RepoFactory,
) -> None:
    base = {
        "pom.xml": POM.format(8),
        "a/src/main/java/com/example/calc/Calculator.java": CALCULATOR,
        "b/src/main/java/com/example/calc/Calculator.java": CALCULATOR,
    }
    repo, _ = make_repo(base)
    changed = {"b/src/main/java/com/example/calc/Calculator.java": CALCULATOR_17}
    patch = diff_of(repo, changed)
    untested = _jacoco({5: True, 8: False, 11: False, 15: True, 16: False, 18: True})
    reports = {f"{MODULES}/a.xml": JACOCO, f"{MODULES}/b.xml": untested}
    coverage = read_coverage(JACOCO_XML, reports, MODULE_REPORTS)
    found = _files(patch, [ProjectCoverage("", None, coverage)], JACOCO_XML, changed)
    # Module a's report has the same class, run; b's, where the change is, does not.
    assert found.state is DiffCoverageState.UNTESTED
    assert found.files == (
        ChangedFile("b/src/main/java/com/example/calc/Calculator.java", 3, 0, (8, 11, 16)),
    )


def test_java_the_file_is_found_by_the_package_it_declares(make_repo: RepoFactory) -> None:
    """A source root the build adds elsewhere still names the class by its package; a file
    of the same name in another package is another file."""
    base = {"pom.xml": POM.format(8), "gen/calc/Calculator.java": CALCULATOR}
    repo, _ = make_repo(base)
    changed = {"gen/calc/Calculator.java": CALCULATOR_17}
    patch = diff_of(repo, changed)
    coverage = read_coverage(JACOCO_XML, {f"{MODULES}/..xml": JACOCO}, MODULE_REPORTS)
    found = _files(patch, [ProjectCoverage("", None, coverage)], JACOCO_XML, changed)
    assert (found.changed, found.covered) == (3, 2)
    elsewhere = {"gen/calc/Calculator.java": CALCULATOR_17.replace("com.example.calc", "org.other")}
    found = _files(patch, [ProjectCoverage("", None, coverage)], JACOCO_XML, elsewhere)
    assert found.state is DiffCoverageState.NO_MAIN_CODE


def test_java_a_package_line_in_a_comment_does_not_borrow_another_classs_coverage(
    make_repo: RepoFactory,
) -> None:
    """The file's own package decides the report entry it is read from: a comment that
    looks like the declaration of a tested class's package is no declaration."""
    base = {"pom.xml": POM.format(8), "src/main/java/org/other/Calculator.java": "x\n"}
    repo, _ = make_repo(base)
    disguised = "/*\npackage com.example.calc;\n*/\n" + CALCULATOR_17.replace(
        "package com.example.calc;", "package org.other;"
    )
    changed = {"src/main/java/org/other/Calculator.java": disguised}
    patch = diff_of(repo, changed)
    # The report knows com/example/calc/Calculator.java, run, and org/other's (its lines
    # three lower, under the comment), never run.
    tested = _package({5: True, 8: True, 11: True, 15: True, 16: False, 18: True})
    unrun = _package(dict.fromkeys((8, 11, 14, 18, 19, 21), False), "org/other")
    reports = {f"{MODULES}/..xml": _report(tested, unrun)}
    coverage = read_coverage(JACOCO_XML, reports, MODULE_REPORTS)
    found = _files(patch, [ProjectCoverage("", None, coverage)], JACOCO_XML, changed)
    assert found.files == (
        ChangedFile("src/main/java/org/other/Calculator.java", 6, 0, (8, 11, 14, 18, 19, 21)),
    )


def test_java_a_pom_only_patch_changes_no_main_code(make_repo: RepoFactory) -> None:
    repo, _ = make_repo(JAVA_BASE)
    patch = diff_of(repo, {"pom.xml": POM.format(17)})
    coverage = read_coverage(JACOCO_XML, {f"{MODULES}/..xml": JACOCO}, MODULE_REPORTS)
    found = _files(patch, [ProjectCoverage("", None, coverage)], JACOCO_XML, JAVA_PATCH)
    assert found.state is DiffCoverageState.NO_MAIN_CODE
    assert found.to_dict() == {
        "state": "no changed main code",
        "changed": 0,
        "covered": 0,
        "files": [],
    }


# -- Go -------------------------------------------------------------------------------------

STORE = """package kv

import (
	"io/ioutil"
	"path/filepath"
)

// Read returns the value stored under key.
func Read(dir, key string) ([]byte, error) {
	return ioutil.ReadFile(filepath.Join(dir, key))
}

// Keys lists the keys in dir.
func Keys(dir string) ([]string, error) {
	entries, err := ioutil.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, e := range entries {
		keys = append(keys, e.Name())
	}
	return keys, nil
}
"""
# Lines 4 (an import), 10 and 15 are the patch's.
STORE_REWRITTEN = STORE.replace('"io/ioutil"', '"os"').replace("ioutil.", "os.")
GO_BASE = {"go.mod": "module example.com/kv\n\ngo 1.21\n", "kv/store.go": STORE}
GO_PATCH = {"kv/store.go": STORE_REWRITTEN}
# As go test -coverpkg=./... writes it: each block once per test binary (two here), a
# block covered if any binary ran it. No test calls Read.
PROFILE = """mode: set
example.com/kv/kv/store.go:9.44,11.2 1 0
example.com/kv/kv/store.go:14.41,16.16 2 0
example.com/kv/kv/store.go:16.16,18.3 1 0
example.com/kv/kv/store.go:19.2,20.29 2 0
example.com/kv/kv/store.go:20.29,22.3 1 0
example.com/kv/kv/store.go:23.2,23.18 1 0
example.com/kv/kv/store.go:9.44,11.2 1 0
example.com/kv/kv/store.go:14.41,16.16 2 1
example.com/kv/kv/store.go:16.16,18.3 1 0
example.com/kv/kv/store.go:19.2,20.29 2 1
example.com/kv/kv/store.go:20.29,22.3 1 1
example.com/kv/kv/store.go:23.2,23.18 1 1
"""


def _go(
    patch: str, tree: Mapping[str, str], profile: str = PROFILE, root: str = ""
) -> DiffCoverage:
    module = "example.com/kv"
    project = ProjectCoverage(root, module, parse_go_profile(profile))
    return _files(patch, [project], GO_PROFILE, tree)


def test_go_changed_statements_and_those_a_test_binary_ran(make_repo: RepoFactory) -> None:
    repo, _ = make_repo(GO_BASE)
    found = _go(diff_of(repo, GO_PATCH), GO_PATCH)
    # The import is no statement; Read's block never ran in any binary, Keys' did.
    assert found.files == (ChangedFile("kv/store.go", 2, 1, (10,)),)
    assert found.describe() == (
        "the base's tests execute 1 of the 2 changed lines of main code (50%)"
    )


def test_go_blank_and_comment_lines_inside_a_block_are_no_statements(
    make_repo: RepoFactory,
) -> None:
    repo, _ = make_repo(GO_BASE)
    # A comment and a blank line added as lines 15-16, inside Keys' first block, which
    # ran: its profile spans them.
    commented = STORE.replace(
        "\tentries, err", "\t// ReadDir sorts the entries by name.\n\n\tentries, err"
    )
    profile = (
        "mode: set\n"
        "example.com/kv/kv/store.go:9.44,11.2 1 0\n"
        "example.com/kv/kv/store.go:14.41,18.16 2 1\n"
        "example.com/kv/kv/store.go:18.16,20.3 1 0\n"
        "example.com/kv/kv/store.go:21.2,22.29 2 1\n"
        "example.com/kv/kv/store.go:22.29,24.3 1 1\n"
        "example.com/kv/kv/store.go:25.2,25.18 1 1\n"
    )
    found = _go(diff_of(repo, {"kv/store.go": commented}), {"kv/store.go": commented}, profile)
    assert found.state is DiffCoverageState.NO_MAIN_CODE
    # The same lines as a statement count, and ran.
    statement = commented.replace("// ReadDir sorts the entries by name.", 'dir = dir + ""')
    found = _go(diff_of(repo, {"kv/store.go": statement}), {"kv/store.go": statement}, profile)
    assert found.files == (ChangedFile("kv/store.go", 1, 1),)


def test_go_a_change_no_test_runs_is_an_untested_change(make_repo: RepoFactory) -> None:
    repo, _ = make_repo(GO_BASE)
    untested = PROFILE.replace(" 1\n", " 0\n")
    found = _go(diff_of(repo, GO_PATCH), GO_PATCH, untested)
    assert found.state is DiffCoverageState.UNTESTED
    assert found.files == (ChangedFile("kv/store.go", 2, 0, (10, 15)),)


def test_go_a_line_directive_leaves_the_change_unmeasured(make_repo: RepoFactory) -> None:
    """The profile numbers the lines after a //line directive as it says (here, as the
    lines Keys' tested blocks hold): they cannot be matched with the file's own."""
    repo, _ = make_repo(GO_BASE)
    moved = STORE_REWRITTEN.replace("func Read(", "//line kv/store.go:14\nfunc Read(")
    found = _go(diff_of(repo, {"kv/store.go": moved}), {"kv/store.go": moved})
    assert found.state is DiffCoverageState.NOT_MEASURED
    assert found.problem == "kv/store.go has a //line directive, which moves its lines"


def test_go_a_module_in_a_folder_names_its_files_from_its_go_mod(make_repo: RepoFactory) -> None:
    base = {f"svc/{path}": text for path, text in GO_BASE.items()}
    base["other/store.go"] = STORE  # in no project that ran
    repo, _ = make_repo(base)
    changed = {"svc/kv/store.go": STORE_REWRITTEN, "other/store.go": STORE_REWRITTEN}
    found = _go(diff_of(repo, changed), changed, root="svc")
    assert found.files == (ChangedFile("svc/kv/store.go", 2, 1, (10,)),)


# -- the diff, and trees whose coverage is not measured ---------------------------------------


def test_added_lines_are_read_from_every_hunk_on_the_new_side(make_repo: RepoFactory) -> None:
    base = {
        "a.txt": "".join(f"{n}\n" for n in range(1, 31)),
        "gone.txt": "x\n",
        "shrunk.txt": "1\n2\n3\n",
        "tail.txt": "end",
    }
    repo, _ = make_repo(base)
    lines = [f"{n}\n" for n in range(1, 31)]
    lines[1] = "two\n"  # line 2 changed
    lines.insert(20, "new\n")  # line 21 added, in a second hunk
    patch = diff_of(
        repo,
        {
            "a.txt": "".join(lines),
            "gone.txt": None,
            "shrunk.txt": "1\n3\n",  # a deletion only
            "tail.txt": "end\nmore",  # no newline at the end, either side
            "new.txt": "a\nb\n",
        },
    )
    assert added_lines(patch) == {"a.txt": (2, 21), "tail.txt": (1, 2), "new.txt": (1, 2)}


def test_coverage_that_could_not_be_read_is_not_measured_where_main_code_changed(
    make_repo: RepoFactory,
) -> None:
    repo, _ = make_repo(JAVA_BASE)
    patch = diff_of(repo, JAVA_PATCH)
    found = diff_coverage(patch, JAVA_TESTS, [], JACOCO_XML, lambda _p: None, problem="no report")
    assert (found.state, found.describe()) == (
        DiffCoverageState.NOT_MEASURED,
        "not measured: no report",
    )
    only_build = diff_of(repo, {"pom.xml": POM.format(17)})
    found = diff_coverage(
        only_build, JAVA_TESTS, [], JACOCO_XML, lambda _p: None, problem="no report"
    )
    assert found.state is DiffCoverageState.NO_MAIN_CODE
    only_tests = diff_of(repo, {"src/test/java/com/example/calc/CalculatorTest.java": "x\n"})
    found = diff_coverage(
        only_tests, JAVA_TESTS, [], JACOCO_XML, lambda _p: None, problem="no report"
    )
    assert found.state is DiffCoverageState.NO_MAIN_CODE


@pytest.mark.parametrize(
    ("changed", "state"),
    [
        ({"Dockerfile": "FROM nginx:1.27\n"}, DiffCoverageState.NO_MAIN_CODE),
        (
            {"Dockerfile": "FROM nginx:1.27\n", "app.py": "print(2)\n"},
            DiffCoverageState.NOT_MEASURED,
        ),
    ],
)
def test_a_recipe_that_measures_no_coverage_knows_only_its_own_build_files(
    make_repo: RepoFactory, changed: Mapping[str, str], state: DiffCoverageState
) -> None:
    repo, _ = make_repo({"Dockerfile": "FROM nginx:1.25\n", "app.py": "print(1)\n"})
    patch = diff_of(repo, changed)
    found = diff_without_coverage(patch, ("smoke-test.sh",), is_dockerfile, "no coverage")
    assert found.state is state


def test_a_large_patch_against_a_large_report_costs_their_sizes_added(
    make_repo: RepoFactory,
) -> None:
    """Every line of a 60,000-line file changed, against a profile of as many blocks each
    spanning the whole file: counted in one sweep, not line by block."""
    size = 60_000
    repo, _ = make_repo({"go.mod": "module example.com/kv\n", "kv/big.go": "package kv\n"})
    big = "package kv\n" + "".join(f"var v{n} = {n}\n" for n in range(size))
    patch = diff_of(repo, {"kv/big.go": big})
    blocks = "".join(f"example.com/kv/kv/big.go:1.1,{size + 1}.2 1 {n % 2}\n" for n in range(size))
    started = time.monotonic()
    found = _go(patch, {"kv/big.go": big}, "mode: set\n" + blocks)
    assert (found.changed, found.covered) == (size, size)
    assert time.monotonic() - started < 20
