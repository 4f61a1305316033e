"""Surefire's XML reports as the harness grades them: by test case, worst status, the
failure's message, and failures that say the test needed a network."""

from __future__ import annotations

import pytest

from migration_evals.core.model import Verdict
from migration_evals.oracles.ecosystems.maven.surefire import parse_surefire, stable_test_name
from migration_evals.oracles.grading import TestReport, TestStatus, grade_tests

SUREFIRE = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="x.CalcTest" tests="3" failures="1" errors="0" skipped="1">
  <testcase name="adds" classname="x.CalcTest" time="0.01"/>
  <testcase name="divides" classname="x.CalcTest" time="0.01">
    <failure message="expected 2">stack</failure>
  </testcase>
  <testcase name="later" classname="x.CalcTest"><skipped/></testcase>
</testsuite>
"""

P, F, S = TestStatus.PASSED, TestStatus.FAILED, TestStatus.SKIPPED


def test_surefire_reports_are_parsed_by_test_case() -> None:
    report = parse_surefire({"target/surefire-reports/TEST-x.CalcTest.xml": SUREFIRE})
    assert report.results == {"x.CalcTest#adds": P, "x.CalcTest#divides": F, "x.CalcTest#later": S}


def test_an_unreadable_report_is_a_problem_not_a_pass() -> None:
    """Unusable at baseline: the harness's problem. Unusable only after the patch, whose
    code writes the reports: the candidate's."""
    report = parse_surefire({"TEST-x.xml": "<testsuite><testcase"})
    assert report.problems
    assert grade_tests(TestReport(), report).verdict is Verdict.FAIL
    assert grade_tests(report, TestReport()).verdict is Verdict.ERROR


@pytest.mark.parametrize(
    ("written", "identity"),
    [
        ("formats{String, PageRequest}[1]", "formats[1]"),  # Surefire 2, JUnit 5
        ("formats(String, PageRequest)[1]", "formats[1]"),  # Surefire 3
        ("formats()", "formats"),
        ("formats", "formats"),
        ("formats[2]", "formats[2]"),
        ("[1] a, b", "[1] a, b"),  # a display name: left as written
    ],
)
def test_a_parameterized_tests_name_does_not_depend_on_how_the_reporter_writes_it(
    written: str, identity: str
) -> None:
    assert stable_test_name(written) == identity


def test_a_failing_tests_message_is_kept_as_evidence_not_graded() -> None:
    """The assertion text (Surefire's message) names the failure."""
    surefire = parse_surefire({"TEST-x.CalcTest.xml": SUREFIRE})
    assert surefire.messages == {"x.CalcTest#divides": "expected 2"}


_ROBOLECTRIC = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="x.CacheTest" tests="4" errors="3" failures="1">
  <testcase name="runsOnAndroid" classname="x.CacheTest">
    <error message="Unable to resolve artifact: Missing:&#10;1) org.robolectric:android-all:jar"
        type="org.apache.maven.artifact.resolver.ArtifactResolutionException">trace</error>
  </testcase>
  <testcase name="fetchesSchema" classname="x.CacheTest">
    <error message="registry.example.org" type="java.net.UnknownHostException">at x.Y</error>
  </testcase>
  <testcase name="talksToLocalServer" classname="x.CacheTest">
    <error message="Connection refused" type="java.net.ConnectException">trace</error>
  </testcase>
  <testcase name="evicts" classname="x.CacheTest">
    <failure message="expected:&lt;1&gt; but was:&lt;0&gt;" type="java.lang.AssertionError"/>
  </testcase>
  <testcase name="puts" classname="x.CacheTest"/>
</testsuite>
"""


def test_failures_that_say_no_network_was_there_are_told_apart() -> None:
    """A download while a test runs (Robolectric's Android jars, a remote schema) fails
    for want of a network; an assertion, or a refused local connection, does not."""
    report = parse_surefire({"TEST-x.CacheTest.xml": _ROBOLECTRIC})
    assert report.needs_network == {"x.CacheTest#runsOnAndroid", "x.CacheTest#fetchesSchema"}


def test_a_pass_is_refused_when_tests_left_out_failed_at_the_base_for_want_of_a_network() -> None:
    """They passed where their authors ran them; here nothing checks them, and that is the
    environment's doing, not the patch's: error, naming the first, never a pass."""
    baseline = parse_surefire({"TEST-x.CacheTest.xml": _ROBOLECTRIC})
    patched = TestReport({**baseline.results, "x.CacheTest#evicts": P})
    grade = grade_tests(baseline, patched)
    assert grade.verdict is Verdict.ERROR
    assert grade.reason.startswith(
        "2 test(s) fail at the base commit here because they need a network while they run, "
        "which test runs do not have: x.CacheTest#fetchesSchema: registry.example.org (and 1 more)"
    )
    assert "fails at the base commit, left out: x.CacheTest#runsOnAndroid" in [
        e.message for e in grade.evidence
    ]
    # A regression of a test that did pass at the base is still the patch's.
    broken = TestReport({**baseline.results, "x.CacheTest#puts": F})
    assert grade_tests(baseline, broken).verdict is Verdict.FAIL
    # Without such failures the same left-out test is listed and the pass stands.
    plain = TestReport({"x.CacheTest#puts": P, "x.CacheTest#evicts": F})
    assert (
        grade_tests(plain, TestReport({"x.CacheTest#puts": P, "x.CacheTest#evicts": F})).verdict
        is Verdict.PASS
    )
