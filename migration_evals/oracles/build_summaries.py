"""What the build tool itself printed about a test run, and whether the reports agree: the
types every ecosystem's cross-check uses.

Tier 3 grades from machine reports. The tool prints its own account beside them (Maven's
``Results:`` blocks, ``go test``'s package lines: ``ecosystems.<name>.summaries``). The
candidate's code can write reports and print lines, but it cannot make every account agree
with a lie, nor set the exit status the tool's own process returns. So any disagreement
between the reports, the printed summaries and the exit status is never a pass: a report
saying all passed while the build printed a failure, counts that differ, a package with no
result, or a run that exits 0 with a failure logged.

A log cut by the output limit cannot be checked against anything, so it is a
disagreement too: padding the output cannot hide the summary.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "Counts",
    "Disagreement",
    "DisagreementKind",
    "TestTotals",
    "unreadable",
]


class DisagreementKind(StrEnum):
    """``exit`` (a failure logged, exit status 0) is a setting a base may have itself;
    the others mean the reports cannot be read for sure."""

    COUNTS = "counts"
    MISSING = "missing"
    EXIT = "exit"
    UNREADABLE = "unreadable"


@dataclass(frozen=True, slots=True)
class Disagreement:
    kind: DisagreementKind
    message: str


@dataclass(frozen=True, slots=True)
class Counts:
    """Tests run (skipped included), failed (failures and errors) and skipped."""

    run: int = 0
    failed: int = 0
    skipped: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(
            self.run + other.run, self.failed + other.failed, self.skipped + other.skipped
        )

    def describe(self) -> str:
        return f"{self.run} run, {self.failed} failed, {self.skipped} skipped"


@dataclass(frozen=True, slots=True)
class TestTotals:
    """A run's totals as the tool prints them, for people to read (``Counts`` is what the
    cross-checks compare): run (skipped included), failures, errors and skipped apart, as
    Surefire words them. go test has no errors: a test passes, fails or is skipped."""

    __test__ = False  # not a pytest test class, despite the name

    run: int = 0
    failures: int = 0
    errors: int = 0
    skipped: int = 0

    def __add__(self, other: TestTotals) -> TestTotals:
        return TestTotals(
            self.run + other.run,
            self.failures + other.failures,
            self.errors + other.errors,
            self.skipped + other.skipped,
        )

    def counts(self) -> Counts:
        return Counts(self.run, self.failures + self.errors, self.skipped)

    def to_dict(self) -> dict[str, int]:
        return {
            "tests_run": self.run,
            "tests_failed": self.failures,
            "tests_errors": self.errors,
            "tests_skipped": self.skipped,
        }


def unreadable(what: str) -> tuple[Disagreement, ...]:
    """The disagreement of a run whose output the output limit cut (``what`` printed it)."""
    message = f"{what} output exceeded the output limit; its summary cannot be checked"
    return (Disagreement(DisagreementKind.UNREADABLE, message),)
