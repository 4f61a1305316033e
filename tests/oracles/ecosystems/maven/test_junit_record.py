"""The harness's JUnit Platform record against Surefire's XML
(``migration_evals.oracles.ecosystems.maven.junit_record``), and how tier 3 grades what the check
finds."""

from __future__ import annotations

from migration_evals.core.model import Verdict
from migration_evals.core.ports import SandboxResult
from migration_evals.oracles.build_summaries import DisagreementKind
from migration_evals.oracles.ecosystems.maven.junit_record import (
    LISTENED,
    NO_LISTENER,
    UNLISTENED,
    RecordCheck,
    cross_check_record,
    record_line,
    run_key,
)
from migration_evals.oracles.ecosystems.maven.reports import SUREFIRE
from migration_evals.oracles.ecosystems.registry import read_report
from migration_evals.oracles.grading import TestReport, grade_tests

KEY = "0123456789abcdef0123456789abcdef"
OTHER_KEY = "fedcba9876543210fedcba9876543210"
CLASS = "com.example.SlugsTest"
XML_PATH = "target/surefire-reports/TEST-com.example.SlugsTest.xml"
RECORD_PATH = ".migration-evals/junit/4f2a.rec"
MAVEN_LOG = """[INFO] --- surefire:3.5.2:test (default-test) @ slugs ---
[INFO] Results:
[INFO] Tests run: 2, Failures: 0, Errors: 0, Skipped: 0
[INFO] BUILD SUCCESS
"""


def _xml(**tests: str) -> str:
    """A Surefire report of ``CLASS`` with each test's status (passed or failed)."""
    cases = "".join(
        f'<testcase name="{name}" classname="{CLASS}">'
        + ('<failure message="boom"/>' if status == "failed" else "")
        + "</testcase>"
        for name, status in tests.items()
    )
    failures = sum(status == "failed" for status in tests.values())
    return f'<testsuite tests="{len(tests)}" failures="{failures}">{cases}</testsuite>'


def _record(*tests: tuple[str, str], key: str = KEY, module: str = ".", name: str = "4f2a") -> str:
    """A record file as the listener writes it: its module and name, then (name, status)
    lines."""
    lines, previous = [], ""
    for fields in [
        ("start", module, name),
        *(("test", status, CLASS, name) for name, status in tests),
    ]:
        line, previous = record_line(key, previous, *fields)
        lines.append(line)
    return "\n".join(lines) + "\n"


def _output(key: str = KEY) -> str:
    return f"migration-evals-junit: key={key}\n{MAVEN_LOG}"


def _check(xml: str, *records: str, output: str | None = None) -> RecordCheck:
    files = {f".migration-evals/junit/{i}.rec": text for i, text in enumerate(records)}
    return cross_check_record({XML_PATH: xml}, files, _output() if output is None else output)


def test_an_agreeing_record_leaves_the_module_cross_checked() -> None:
    check = _check(_xml(a="passed", b="failed"), _record(("a", "passed"), ("b", "failed")))
    assert check.disagreements == ()
    assert check.channels == {".": LISTENED}


def test_a_passing_test_missing_from_the_record_is_a_disagreement_naming_it() -> None:
    check = _check(_xml(a="passed", b="passed"), _record(("a", "passed")))
    assert len(check.disagreements) == 1
    message = check.disagreements[0].message
    assert f"class {CLASS}" in message and "reports 2 passing" in message
    assert "saw 1 pass" in message


def test_a_failure_the_xml_turned_into_a_pass_is_named_with_what_the_listener_saw() -> None:
    check = _check(_xml(a="passed", b="passed"), _record(("a", "passed"), ("b", "failed")))
    (found,) = check.disagreements
    assert found.kind is DisagreementKind.COUNTS
    assert "b (passed in the XML; listener: failed)" in found.message


def test_a_pass_swapped_between_two_tests_is_caught_by_name() -> None:
    """The counts agree (one pass each side), but the two sides disagree on which."""
    check = _check(_xml(a="passed", b="failed"), _record(("a", "failed"), ("b", "passed")))
    assert len(check.disagreements) == 1
    assert "a (passed in the XML; listener: failed)" in check.disagreements[0].message


def test_a_forged_pass_appended_without_the_key_makes_the_record_untrustworthy() -> None:
    honest = _record(("a", "passed"))
    forged = honest + f"test\tpassed\t{CLASS}\tb\t{'0' * 64}\n"
    (found,) = _check(_xml(a="passed", b="passed"), forged).disagreements
    assert found.kind is DisagreementKind.UNREADABLE
    assert "line 3: not written by the harness's listener" in found.message


def test_a_forged_extra_pass_with_a_valid_mac_still_disagrees_with_the_reports() -> None:
    """A pass the listener never saw in the XML (test code that found the key and wrote a
    whole line) does not match Surefire's account either."""
    record = _record(("a", "passed"), ("ghost", "passed"))
    (found,) = _check(_xml(a="passed"), record).disagreements
    assert "ghost (passed for the listener; XML: no result)" in found.message


def test_a_record_under_another_key_is_refused() -> None:
    record = _record(("a", "passed"), key=OTHER_KEY)
    (found,) = _check(_xml(a="passed"), record).disagreements
    assert found.kind is DisagreementKind.UNREADABLE
    assert "line 1" in found.message


def test_lines_moved_between_files_break_the_chain() -> None:
    first = _record(("a", "passed")).splitlines()
    second = _record(("b", "passed"), name="77c1").splitlines()
    spliced = "\n".join([first[0], second[1]]) + "\n"
    (found,) = _check(_xml(b="passed"), spliced).disagreements
    assert "line 2" in found.message


def test_a_test_rerun_in_the_same_jvm_counts_its_pass_once() -> None:
    """Surefire's re-run of a flaky test: the XML keeps one passing case."""
    record = _record(("a", "failed"), ("a", "passed"))
    assert _check(_xml(a="passed"), record).disagreements == ()


def test_records_without_the_key_line_first_cannot_be_checked() -> None:
    late = f"{MAVEN_LOG}migration-evals-junit: key={KEY}\n"
    assert run_key(late) is None
    (found,) = _check(_xml(a="passed"), _record(("a", "passed")), output=late).disagreements
    assert found.kind is DisagreementKind.UNREADABLE and "no key line" in found.message


# The launcher's line for the coverage agent, from standard error, can be read before the
# key line the wrapper printed just before it to standard output.
_PICKED_UP = (
    "Picked up JAVA_TOOL_OPTIONS: -javaagent:/deps/jacoco/agent.jar=includes=com.example.*\n"
)


def test_the_launchers_lines_read_before_the_key_line_are_passed_over() -> None:
    assert run_key(f"{_PICKED_UP}migration-evals-junit: key={KEY}\n{MAVEN_LOG}") == KEY
    check = _check(_xml(a="passed"), _record(("a", "passed")), output=_PICKED_UP + _output())
    assert check.disagreements == () and check.channels == {".": LISTENED}


def test_nothing_but_the_launchers_lines_may_come_before_the_key_line() -> None:
    key_line = f"migration-evals-junit: key={KEY}\n"
    assert run_key(f"{_PICKED_UP}[INFO] Scanning for projects...\n{key_line}") is None
    assert run_key(f"Picked up JAVA_TOOL_OPTIONS:\n{key_line}") is None  # not the launcher's
    assert run_key(_PICKED_UP * 4 + key_line) is None  # more than the launcher prints
    assert run_key(_PICKED_UP) is None


def test_a_run_without_the_listener_says_its_results_rest_on_the_xml_only() -> None:
    assert _check(_xml(a="passed")).channels == {".": UNLISTENED}
    without_key = _check(_xml(a="passed"), output=MAVEN_LOG)
    assert without_key.disagreements == () and without_key.channels == {".": NO_LISTENER}


def test_modules_are_compared_each_with_its_own_record() -> None:
    reports = {
        "core/target/surefire-reports/TEST-x.xml": _xml(a="passed"),
        "app/target/surefire-reports/TEST-y.xml": _xml(a="passed"),
    }
    records = {RECORD_PATH: _record(("a", "passed"), module="core")}
    check = cross_check_record(reports, records, _output())
    assert check.disagreements == ()
    assert check.channels == {"core": LISTENED, "app": UNLISTENED}


def _report(xml: str, record: str | None, exit_code: int = 0) -> TestReport:
    artifacts = {XML_PATH: xml, **({RECORD_PATH: record} if record else {})}
    return read_report("surefire", SandboxResult(exit_code, _output(), artifacts))


def test_tier_3_fails_a_patched_run_whose_xml_the_listener_contradicts() -> None:
    """Maven's summary and exit status agree with the XML (a forged fork channel): only
    the listener's record tells the failure."""
    honest = _report(_xml(a="passed", b="passed"), _record(("a", "passed"), ("b", "passed")))
    forged = _report(_xml(a="passed", b="passed"), _record(("a", "passed"), ("b", "failed")))
    assert honest.disagreements == ()
    grade = grade_tests(honest, forged)
    assert grade.verdict is Verdict.FAIL
    assert "b (passed in the XML; listener: failed)" in grade.reason
    assert grade_tests(forged, honest).verdict is Verdict.ERROR  # at the base: ours


def test_tier_3_fails_a_patched_tree_that_keeps_the_listener_out() -> None:
    listened = _report(_xml(a="passed", b="passed"), _record(("a", "passed"), ("b", "passed")))
    unlistened = _report(_xml(a="passed", b="passed"), None)
    grade = grade_tests(listened, unlistened, comparisons=SUREFIRE.comparisons)
    assert grade.verdict is Verdict.FAIL
    assert "recorded no result in module ." in grade.reason
    assert grade_tests(unlistened, listened, comparisons=SUREFIRE.comparisons).verdict is (
        Verdict.PASS
    )


def test_a_class_each_side_names_otherwise_agrees_when_the_module_s_passes_do() -> None:
    """A provider may name a nested class or a dynamic test its own way: only the
    module's total and the tests both sides name are compared."""
    xml = _xml(a="passed", b="passed").replace(CLASS, "com.example.Outer$Inner")
    check = _check(xml, _record(("a", "passed"), ("b[1]", "passed")))
    assert check.disagreements == ()
    forged = _check(xml, _record(("a", "passed"), ("b[1]", "failed")))
    (found,) = forged.disagreements
    assert "reports 2 passing test(s), the harness's listener saw 1 pass" in found.message
