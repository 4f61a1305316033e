"""Harness-owned test grading: pure functions over recorded reports.

Results come from machine reports the harness collects, each ecosystem reading its own
(``ReportFormat``, ``migration_evals.oracles.ecosystems.interface``) into a ``TestReport``,
never from text lines a patch could print. A patched tree passes only if every test that
passed at the baseline still passes and the number of tests did not drop; what the patch
did to the test files is decided before (``migration_evals.oracles.test_edits``), except
for recipes whose tests are scripts, where any edit of one fails (``grade_test_edits``).

Reports are cross-checked with what the engine observed: the suite's exit status is a
"suite" result beside the tests (``(exit status)``), and so is any suite-level result the
report itself holds (a Go package's pass/fail event). A test keeps its worst status over
all its events (``worst``), so a faked pass cannot hide the real failure event, the suite's
failure or the non-zero exit status.

The reports are also cross-checked with what the build tool printed
(``migration_evals.oracles.build_summaries``) and, where the harness keeps a record of its own,
with that (Maven's JUnit Platform listener): a disagreement is ``fail``, or ``error`` at the
baseline, never a pass. Each report format may compare the patched report with the base's
in its own ways as well (``ReportComparison``: a module the listener covered at the base
must be covered on the patched tree too; a Go test binary may not run itself more often
than at the base). The graded set is the base's passing tests;
tests failing at the base are left out and listed. A base where no test ran has nothing to
compare (``inconclusive``), and one whose suite cannot run at all is the infrastructure's
problem (``error``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import lru_cache

from migration_evals.core.model import Evidence, Severity, Verdict
from migration_evals.oracles.build_summaries import Disagreement, DisagreementKind
from migration_evals.oracles.tree import ChangeKind, FileChange

__all__ = [
    "DISAGREE",
    "EXIT_STATUS",
    "MESSAGE_CHARS",
    "ReportComparison",
    "TestGrade",
    "TestReport",
    "TestStatus",
    "changed_test_files",
    "exit_status_suite",
    "grade_test_edits",
    "grade_tests",
    "no_network_pattern",
    "parse_exit_code",
    "path_matches",
    "short_message",
    "worst",
]


class TestStatus(StrEnum):
    __test__ = False  # tells pytest this is not a test class

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"


_SEVERITY = {TestStatus.SKIPPED: 0, TestStatus.PASSED: 1, TestStatus.FAILED: 2}
EXIT_STATUS = "(exit status)"


def worst(current: TestStatus | None, new: TestStatus) -> TestStatus:
    """The worse of a test's status so far (None: none yet) and a new one."""
    if current is None or _SEVERITY[new] > _SEVERITY[current]:
        return new
    return current


@dataclass(frozen=True, slots=True)
class TestReport:
    """Each test's status, suite-level results (packages, the exit status) and anything
    that made the report unreadable. Only ``results`` count as tests."""

    __test__ = False

    results: Mapping[str, TestStatus] = field(default_factory=dict)
    problems: tuple[str, ...] = ()
    suites: Mapping[str, TestStatus] = field(default_factory=dict)
    # Where the reports and the build tool's own summary or exit status disagree.
    disagreements: tuple[Disagreement, ...] = ()
    # A failing test's message (the assertion text), shown as evidence; never graded.
    messages: Mapping[str, str] = field(default_factory=dict)
    # Per test binary (a Go package's), how often it was executed again while it ran, as
    # the harness's supervisor saw it from outside the binary (``supervise.go``).
    self_execs: Mapping[str, int] = field(default_factory=dict)
    # Failing tests whose failure says they could not reach a network while they ran.
    needs_network: frozenset[str] = frozenset()
    # Per module: what its results rest on (its report format's ``cross_checked``, or why
    # the reports alone, in its ecosystem's words).
    channels: Mapping[str, str] = field(default_factory=dict)

    def with_status(self, status: TestStatus) -> set[str]:
        return {name for name, value in self.results.items() if value is status}

    def passing(self) -> set[str]:
        """Tests and suites that passed."""
        everything = {**self.suites, **self.results}
        return {name for name, value in everything.items() if value is TestStatus.PASSED}

    def to_dict(self) -> dict[str, object]:
        counts = {s.value: len(self.with_status(s)) for s in TestStatus}
        suites = {name: status.value for name, status in sorted(self.suites.items())}
        return {
            "tests": len(self.results),
            **counts,
            "suites": suites,
            "problems": list(self.problems),
            "disagreements": [d.message for d in self.disagreements],
        }


def exit_status_suite(report: TestReport, exit_code: int) -> TestReport:
    """``report`` with the run's exit status as a suite result."""
    status = TestStatus.PASSED if exit_code == 0 else TestStatus.FAILED
    return replace(report, suites={**report.suites, EXIT_STATUS: status})


MESSAGE_CHARS = 300  # of a failing test's message kept as evidence
# A failure that says the test could not reach a network: something it downloads while it
# runs (Robolectric's Android jars, a schema, a module), which a test run, having no
# network, cannot get. It says nothing about the code. Only names and lookups of remote
# hosts count: a refused connection to a local server is the test's own business. These
# are the system's words; each ecosystem adds its language's (``no_network_pattern``).
_NO_NETWORK = r"Network is unreachable|Temporary failure in name resolution"


def no_network_pattern(own: str) -> re.Pattern[str]:
    """What says a test could not reach a network: the system's words, or ``own``, its
    language's (its exceptions, its resolver's messages)."""
    return re.compile(f"{own}|{_NO_NETWORK}", re.IGNORECASE)


def short_message(text: str) -> str:
    """A failing test's message on one line, at most ``MESSAGE_CHARS`` long."""
    line = " ".join(text.split())
    return line if len(line) <= MESSAGE_CHARS else line[: MESSAGE_CHARS - 1] + "…"


def parse_exit_code(exit_code: int, name: str = "smoke test") -> TestReport:
    """For suites with no machine report: one pseudo-test that passes on exit code 0."""
    return TestReport({name: TestStatus.PASSED if exit_code == 0 else TestStatus.FAILED})


@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def path_matches(path: str, patterns: Iterable[str]) -> bool:
    """Glob match where ``*`` stays inside one directory and ``**`` spans several."""
    return any(_glob_regex(pattern).match(path) for pattern in patterns)


def changed_test_files(changes: Sequence[FileChange], test_paths: Sequence[str]) -> list[str]:
    """Existing test files the patch modified, deleted or renamed away (additions are fine)."""
    touched = []
    for change in changes:
        if change.kind is ChangeKind.ADD or change.old_path is None:
            continue
        if path_matches(change.old_path, test_paths):
            touched.append(change.old_path)
    return touched


@dataclass(frozen=True, slots=True)
class TestGrade:
    __test__ = False

    verdict: Verdict
    reason: str
    evidence: tuple[Evidence, ...] = ()
    regressions: tuple[str, ...] = ()


def _lost(name: str, patched: TestReport) -> str:
    """How a test that passed at the base commit fails now (missing, skipped or failed,
    with its message)."""
    status = patched.results.get(name)
    if name in patched.suites:
        return ""
    if status is TestStatus.FAILED:
        message = patched.messages.get(name)
        return f": {message}" if message else ""
    return " (missing)" if status is None else f" (now {status.value})"


def _listed(names: Iterable[str], patched: TestReport, limit: int = 20) -> list[Evidence]:
    return [
        Evidence(f"no longer passes: {name}{_lost(name, patched)}")
        for name in sorted(names)[:limit]
    ]


def _left_out(baseline: TestReport, limit: int = 20) -> tuple[Evidence, ...]:
    """Tests failing at the base commit (flaky or broken there): not compared, listed."""
    failing = sorted(baseline.with_status(TestStatus.FAILED))
    listed = [
        Evidence(f"fails at the base commit, left out: {name}", severity=Severity.NOTICE)
        for name in failing[:limit]
    ]
    if len(failing) > limit:
        more = f"and {len(failing) - limit} more failing at the base commit"
        listed.append(Evidence(more, severity=Severity.NOTICE))
    return tuple(listed)


def _regression_reason(
    regressions: set[str],
    suite_names: Iterable[str],
    stopped: str | None = None,
    patched: TestReport | None = None,
) -> str:
    # Suites are told apart by where the report keeps them, not by their names: with
    # several projects every name is scoped ("core: (exit status)").
    suites = regressions & set(suite_names)
    tests = sorted(regressions - suites)
    if tests:
        # The first test by name, with how it fails now: the cause leads, not the count.
        first = f"{tests[0]}{_lost(tests[0], patched)}" if patched else tests[0]
        more = f" (and {len(tests) - 1} more)" if len(tests) > 1 else ""
        return f"{len(tests)} test(s) that passed at the base commit no longer pass: {first}{more}"
    # No test names the failure: where the build tool stopped does.
    why = f": {stopped}" if stopped else ""
    if any(name.endswith(EXIT_STATUS) for name in suites):
        return f"the test command now exits non-zero, although no test reports a failure{why}"
    return f"{len(suites)} package(s) that passed at the base commit now fail{why}"


def _dropped_reason(before: int, after: int, stopped: str | None) -> str:
    """Fewer tests reported than at the base commit, and where the build tool stopped
    (the reports cannot say why they are missing; the build's output can)."""
    reason = f"number of tests dropped from {before} to {after}"
    if stopped is None:
        return reason
    return f"{reason}: {stopped}" + (" before any test ran" if after == 0 else "")


def grade_test_edits(
    edited_tests: Sequence[str], *, allow_test_changes: bool = False
) -> TestGrade | None:
    """A failure when the patch modified or deleted test files the recipe protects."""
    if not edited_tests or allow_test_changes:
        return None
    evidence = tuple(Evidence("test file modified or deleted", path) for path in edited_tests)
    return TestGrade(Verdict.FAIL, f"the patch edits {len(edited_tests)} test file(s)", evidence)


# A report format's own check of the patched report against the base's (a second record
# of the results that went missing, a test binary that ran itself): a grade, or None.
ReportComparison = Callable[[TestReport, TestReport], TestGrade | None]

DISAGREE = "reports disagree with the build's own summary"


def _disagreement(baseline: TestReport, patched: TestReport) -> TestGrade | None:
    """At the base, any disagreement but a failure the base's own settings ignore (exit
    status 0) is the harness's; in the patched run it is the candidate's, unless the base
    ignored failures the same way."""
    tolerated = {DisagreementKind.EXIT}
    at_base = [d for d in baseline.disagreements if d.kind not in tolerated]
    if at_base:
        evidence = tuple(Evidence(d.message) for d in at_base)
        return TestGrade(Verdict.ERROR, f"baseline {DISAGREE}: {at_base[0].message}", evidence)
    if not any(d.kind is DisagreementKind.EXIT for d in baseline.disagreements):
        tolerated = set()
    found = [d for d in patched.disagreements if d.kind not in tolerated]
    if not found:
        return None
    # What regressed as far as the reports can tell is shown too; it is not re-run, since
    # no re-run makes the disagreement go away.
    lost = _listed(baseline.passing() - patched.passing(), patched)
    evidence = (*(Evidence(d.message) for d in found), *lost)
    return TestGrade(Verdict.FAIL, f"{DISAGREE}: {found[0].message}", evidence)


def _needs_network(baseline: TestReport, left_out: tuple[Evidence, ...]) -> TestGrade | None:
    """Tests that fail at the base commit here only because they need a network while they
    run (which no test run has) are not the base's failures but the environment's: a pass
    that leaves them out would claim what nobody checked. The patch is not blamed."""
    offline = sorted(baseline.needs_network & baseline.with_status(TestStatus.FAILED))
    if not offline:
        return None
    first = offline[0]
    said = baseline.messages.get(first)
    more = f" (and {len(offline) - 1} more)" if len(offline) > 1 else ""
    reason = (
        f"{len(offline)} test(s) fail at the base commit here because they need a network "
        f"while they run, which test runs do not have: {first}"
        f"{f': {said}' if said else ''}{more}; nothing checks them, so no pass"
    )
    return TestGrade(Verdict.ERROR, reason, left_out)


def _vacuous(baseline: TestReport, base_stopped: str | None = None) -> TestGrade | None:
    """No test ran at the base commit: nothing to compare; a suite that cannot run there
    at all is the infrastructure's problem, and where its build stopped says why."""
    if baseline.results:
        return None
    exits = [name for name in baseline.suites if name.endswith(EXIT_STATUS)]
    if any(baseline.suites[name] is TestStatus.FAILED for name in exits):
        why = f": {base_stopped}" if base_stopped else ""
        return TestGrade(Verdict.ERROR, f"the base commit's test suite does not run here{why}")
    return TestGrade(Verdict.INCONCLUSIVE, "no tests to compare: no test ran at the base commit")


def _none_passing(baseline: TestReport) -> TestGrade | None:
    if baseline.with_status(TestStatus.PASSED):
        return None
    reason = f"no tests to compare: none of the {len(baseline.results)} test(s) passes at the base"
    return TestGrade(Verdict.INCONCLUSIVE, reason + " commit", _left_out(baseline))


def grade_tests(
    baseline: TestReport,
    patched: TestReport,
    *,
    edited_tests: Sequence[str] = (),
    allow_test_changes: bool = False,
    comparisons: Sequence[ReportComparison] = (),
    stopped: str | None = None,
    base_stopped: str | None = None,
) -> TestGrade:
    """Compare the patched run against the baseline run (both harness-parsed).

    An unusable baseline report is the harness's problem (``error``); an unusable report
    from the patched tree, which the same harness read fine at baseline, is the
    candidate's (its code writes the reports and the output). The graded set is the
    base's passing tests: each must pass again, none missing, none newly skipped.
    ``comparisons`` are the report format's own (``ReportFormat.comparisons``), asked
    in order after the cross-checks.

    ``stopped`` says where the patched run's build stopped
    (``migration_evals.oracles.compiler_output.describe_build_stop``); it only words the reason when
    tests went missing or only a suite's status regressed, never changes the verdict;
    ``base_stopped`` words why a base suite that ran no test does not run.
    """
    if baseline.problems:
        return TestGrade(Verdict.ERROR, f"baseline test report unusable: {baseline.problems[0]}")
    if patched.problems:
        return TestGrade(Verdict.FAIL, f"test report unusable: {patched.problems[0]}")
    early = (
        _disagreement(baseline, patched)
        or next(filter(None, (compare(baseline, patched) for compare in comparisons)), None)
        or grade_test_edits(edited_tests, allow_test_changes=allow_test_changes)
        or _vacuous(baseline, base_stopped)
        or _none_passing(baseline)
    )
    if early is not None:
        return early
    left_out = _left_out(baseline)
    before, after = len(baseline.results), len(patched.results)
    if after < before:
        return TestGrade(Verdict.FAIL, _dropped_reason(before, after, stopped), left_out)
    regressions = baseline.passing() - patched.passing()
    if regressions:
        reason = _regression_reason(regressions, baseline.suites, stopped, patched)
        evidence = (*_listed(regressions, patched), *left_out)
        return TestGrade(Verdict.FAIL, reason, evidence, tuple(sorted(regressions)))
    offline = _needs_network(baseline, left_out)
    if offline is not None:
        return offline
    passed = len(patched.with_status(TestStatus.PASSED))
    reason = f"{passed} of {after} tests pass; none regressed"
    # A pass that could not check some tests says so where it is read, not only in the
    # evidence: they failed at the base here, so nothing says whether the patch keeps them.
    failing = len(baseline.with_status(TestStatus.FAILED))
    if failing:
        reason += f"; {failing} failing at the base commit here left out, unchecked"
    return TestGrade(Verdict.PASS, reason, left_out)
