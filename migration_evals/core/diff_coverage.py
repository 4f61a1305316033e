"""Diff coverage as tier 3 records it: of the lines a patch adds or changes in the main
code, how many are code and how many of those the base commit's tests executed.

Tier 3 computes it (``migration_evals.oracles.diff_coverage``) and keeps ``to_dict()`` in its
details under ``diff_coverage``; the judge's prompt, ``show``, the check run, the trial pages and
the report read it back with ``from_dict`` and word it with ``describe``, so they all say
the same. The state follows from the numbers:

* ``executed``: some changed lines of code ran under the base's tests;
* ``untested change``: there are changed lines of code and none of them ran;
* ``no changed main code``: the patch changes no line that is code (build files,
  comments, imports, test files only);
* ``not measured``: the graded run's coverage could not be read, or the recipe measures
  none, while the patch changes files that may hold code (``problem`` says why).

Paths come from the candidate's diff; whoever renders them escapes them. ``describe``
holds numbers only (and the problem, for ``not measured``), never a path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = ["DETAILS_KEY", "ChangedFile", "DiffCoverage", "DiffCoverageState", "line_runs"]

DETAILS_KEY = "diff_coverage"  # tier 3's details key


class DiffCoverageState(StrEnum):
    EXECUTED = "executed"
    UNTESTED = "untested change"
    NO_MAIN_CODE = "no changed main code"
    NOT_MEASURED = "not measured"


def line_runs(numbers: Sequence[int]) -> str:
    """``12-14, 20``: ascending line numbers as runs of consecutive ones."""
    runs: list[list[int]] = []
    for number in numbers:
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


@dataclass(frozen=True, slots=True)
class ChangedFile:
    """One main-code file's changed lines of code: how many, how many ran, and the first
    of those that did not (a sample: the ledger keeps at most a few)."""

    path: str
    changed: int
    covered: int
    uncovered: tuple[int, ...] = ()

    def uncovered_text(self) -> str:
        """The sample of lines not executed as runs: ``12-14, 20``."""
        return line_runs(self.uncovered)

    def describe(self) -> str:
        """``3 of 5 changed lines executed; not executed: 12-14`` (the path apart)."""
        said = f"{self.covered} of {self.changed} changed lines executed"
        if not self.uncovered:
            return said
        more = " ..." if len(self.uncovered) < self.changed - self.covered else ""
        return f"{said}; not executed: {self.uncovered_text()}{more}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "changed": self.changed,
            "covered": self.covered,
            "uncovered_lines": list(self.uncovered),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ChangedFile:
        lines = data.get("uncovered_lines") or ()
        return cls(
            str(data["path"]),
            int(data["changed"]),
            int(data["covered"]),
            tuple(int(n) for n in lines),
        )


@dataclass(frozen=True, slots=True)
class DiffCoverage:
    """The patch's changed lines of main code and how many ran, or why not measured."""

    changed: int = 0
    covered: int = 0
    files: tuple[ChangedFile, ...] = ()
    files_left_out: int = 0  # files with changed code beyond those listed
    problem: str = ""

    @property
    def state(self) -> DiffCoverageState:
        if self.problem:
            return DiffCoverageState.NOT_MEASURED
        if not self.changed:
            return DiffCoverageState.NO_MAIN_CODE
        if not self.covered:
            return DiffCoverageState.UNTESTED
        return DiffCoverageState.EXECUTED

    @property
    def has_changed_code(self) -> bool:
        return self.state in (DiffCoverageState.EXECUTED, DiffCoverageState.UNTESTED)

    @property
    def untested(self) -> bool:
        return self.state is DiffCoverageState.UNTESTED

    def describe(self) -> str:
        """One sentence: "the base's tests execute 5 of the 7 changed lines of main code
        (71%)", "untested change: ...", "no changed main code", "not measured: ..."."""
        state = self.state
        if state is DiffCoverageState.NOT_MEASURED:
            return f"not measured: {self.problem}"
        if state is DiffCoverageState.NO_MAIN_CODE:
            return "no changed main code: no line the patch adds or changes is code"
        lines = f"changed line{'s' if self.changed != 1 else ''} of main code"
        if state is DiffCoverageState.UNTESTED:
            return f"untested change: the base's tests execute none of the {self.changed} {lines}"
        share = 100.0 * self.covered / self.changed
        return (
            f"the base's tests execute {self.covered} of the {self.changed} {lines} ({share:.0f}%)"
        )

    def cell(self) -> str:
        """The trials table's cell: "5 of 7 lines", "untested change (0 of 7)", the state."""
        if self.state is DiffCoverageState.EXECUTED:
            return f"{self.covered} of {self.changed} lines"
        if self.untested:
            return f"untested change (0 of {self.changed})"
        return self.state.value

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "state": self.state.value,
            "changed": self.changed,
            "covered": self.covered,
            "files": [f.to_dict() for f in self.files],
        }
        if self.files_left_out:
            data["files_left_out"] = self.files_left_out
        if self.problem:
            data["problem"] = self.problem
        return data

    @classmethod
    def from_dict(cls, data: object) -> DiffCoverage | None:
        """What a stored ``to_dict()`` held; None for anything else (an envelope from
        before diff coverage was kept, or a value that is not one)."""
        if not isinstance(data, Mapping):
            return None
        try:
            return cls(
                changed=int(data["changed"]),
                covered=int(data["covered"]),
                files=tuple(ChangedFile.from_dict(f) for f in data.get("files") or ()),
                files_left_out=int(data.get("files_left_out") or 0),
                problem=str(data.get("problem") or ""),
            )
        except (KeyError, TypeError, ValueError):
            return None

    @classmethod
    def of_details(cls, details: Mapping[str, Any] | None) -> DiffCoverage | None:
        """Tier 3's diff coverage from its envelope's details, if it recorded one."""
        return cls.from_dict((details or {}).get(DETAILS_KEY))
