"""The coverage guard: how much of the main code the base commit's tests exercise, on the
base tree and on the graded (patched) tree, and whether the patch lowered it.

Tier 3's runs measure coverage themselves (the recipe's test command, with a tool of its
ecosystem). This module reads the reports the harness collected, per source file (per
module too, so that one file name in two modules stays two files), each in its
``CoverageFormat`` (an ecosystem's: ``migration_evals.oracles.ecosystems.maven.coverage``
reads JaCoCo XML, ``migration_evals.oracles.ecosystems.go.coverage`` Go profiles), and
applies the rule:

* a drop of the whole tree's coverage by more than the recipe's ``max_coverage_drop``
  (percentage points) is ``fail``, naming the files whose coverage fell;
* coverage that cannot be measured at the base (the tool is not in the dependency cache,
  no report) is said in the reason and decides nothing: it is not the candidate's fault;
* a module the tool ran for but wrote no report of (its log is there, its report not)
  makes the whole tree unmeasured, as a missing report does: a number without it would
  compare different code. A module whose tests never ran is no such case: its report is
  there, its lines not covered, on both trees alike;
* coverage measured at the base but not on the patched tree, with the tool as available
  there as at the base, is ``fail``: a patch must not switch the measurement off
  (an agent override in the build files, a JVM that never writes its data).

Each report also gives the line ranges it knows as code and whether they ran
(``Coverage.code``). Diff coverage (``migration_evals.oracles.diff_coverage``) reads the
patched tree's, and asks the format how a changed file is named in it.

Reports come from a hostile tree: they are size-capped when collected, and a cut report
is not read; each format's parser refuses what it cannot read safely.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, NamedTuple
from urllib.parse import unquote

from migration_evals.core.model import Evidence, Verdict
from migration_evals.oracles.grading import path_matches

__all__ = [
    "DEFAULT_MAX_DROP",
    "CodeRange",
    "Coverage",
    "CoverageCheck",
    "CoverageFormat",
    "FileCoverage",
    "add_counts",
    "check_coverage",
    "merge_coverage",
    "read_coverage",
    "report_files",
    "scoped",
    "tools_in",
    "unmeasured",
    "within_scope",
]

DEFAULT_MAX_DROP = 1.0  # percentage points, when the recipe does not say
_TRUNCATED = "\n[truncated]"
_SHOWN_FILES = 10
_ROOT = "."  # the module at the run's own folder: its files keep their bare names
_SAID = 160  # characters of a tool's log quoted in a reason


@dataclass(frozen=True, slots=True)
class FileCoverage:
    covered: int
    total: int

    @property
    def percent(self) -> float:
        return 100.0 * self.covered / self.total if self.total else 0.0


class CodeRange(NamedTuple):
    """Lines ``first`` to ``last`` of a source file hold code the report counts; ``ran``:
    a test executed it (a JaCoCo line, one line; a Go block, the lines it spans)."""

    first: int
    last: int
    ran: bool


@dataclass(frozen=True, slots=True)
class Coverage:
    """One tree's coverage per source file, or why it could not be measured; ``code``
    holds the same files' ranges of code, named alike."""

    files: Mapping[str, FileCoverage] = field(default_factory=dict)
    unit: str = "lines"
    problem: str | None = None  # None: measured
    code: Mapping[str, tuple[CodeRange, ...]] = field(default_factory=dict)

    @property
    def measured(self) -> bool:
        return self.problem is None

    @property
    def covered(self) -> int:
        return sum(f.covered for f in self.files.values())

    @property
    def total(self) -> int:
        return sum(f.total for f in self.files.values())

    @property
    def percent(self) -> float:
        return 100.0 * self.covered / self.total if self.total else 0.0

    def summary(self) -> dict[str, Any]:
        if not self.measured:
            return {"measured": False, "problem": self.problem}
        return {
            "measured": True,
            "percent": round(self.percent, 2),
            "covered": self.covered,
            "total": self.total,
            "unit": self.unit,
            "files": len(self.files),
        }


def unmeasured(problem: str, unit: str = "lines") -> Coverage:
    return Coverage(unit=unit, problem=problem)


CodeMap = Mapping[str, tuple[CodeRange, ...]]


def _any_line(source: Sequence[bytes], number: int) -> bool:
    return True


def _always_matched(path: str, text: bytes) -> str | None:
    return None


def _first_line(lines: Sequence[str]) -> str:
    return next(iter(lines), "")


@dataclass(frozen=True, slots=True)
class CoverageFormat:
    """A ``coverage.format`` an ecosystem's builds write (``Ecosystem.coverage_formats``).

    ``parse`` reads one report; ``unit`` is what it counts. For diff coverage: ``sources``
    are the suffixes of the files its tool measures, ``ranges`` finds a changed file's
    code ranges in a project's report (the report's code, the project's coverage scope,
    the file's path in the project and its content), ``holds_code`` says whether a line
    inside a range can be code, and ``unmatched`` why a changed file's lines cannot be
    matched with the report at all (None: they can). ``log_cause`` picks what a tool's
    log says went wrong from its non-blank lines."""

    name: str
    unit: str
    parse: Callable[[str], Coverage]
    sources: tuple[str, ...]
    ranges: Callable[[CodeMap, str | None, str, bytes], tuple[CodeRange, ...]]
    holds_code: Callable[[Sequence[bytes], int], bool] = _any_line
    unmatched: Callable[[str, bytes], str | None] = _always_matched
    log_cause: Callable[[Sequence[str]], str] = _first_line


# -- reading reports ----------------------------------------------------------------------


def add_counts(sum_so_far: FileCoverage | None, more: FileCoverage) -> FileCoverage:
    """One file's counts with ``more`` of the same file (a second class or block of it)."""
    if sum_so_far is None:
        return more
    return FileCoverage(sum_so_far.covered + more.covered, sum_so_far.total + more.total)


def read_coverage(
    report_format: CoverageFormat,
    artifacts: Mapping[str, str],
    report: str,
    *,
    tools_available: bool = True,
) -> Coverage:
    """One run's coverage from what the harness collected: the report at ``report``, or
    for a pattern, one report per module (``_read_modules``)."""
    if not tools_available:
        return unmeasured("the coverage tool is not in the dependency cache", report_format.unit)
    if _is_pattern(report):
        return _read_modules(report_format, artifacts, report)
    return _read_report(report_format, artifacts.get(report), report)


def report_files(report: str) -> tuple[str, ...]:
    """What the harness collects for a coverage ``report`` (none of it a test report):
    the report, or for per-module reports, each one and the tool's log beside it."""
    return (report, _log_pattern(report)) if _is_pattern(report) else (report,)


def _is_pattern(report: str) -> bool:
    return "*" in report or "?" in report


def _log_pattern(pattern: str) -> str:
    return str(PurePosixPath(pattern).with_suffix(".log"))


def _read_report(report_format: CoverageFormat, text: str | None, report: str) -> Coverage:
    unit = report_format.unit
    if text is None:
        return unmeasured(f"the run wrote no coverage report ({report})", unit)
    if text.endswith(_TRUNCATED) or text.startswith("[not read"):
        return unmeasured("the coverage report exceeded the size limit for reports", unit)
    return report_format.parse(text)


def _read_modules(
    report_format: CoverageFormat, artifacts: Mapping[str, str], pattern: str
) -> Coverage:
    """Each module's report (named by the module's folder, escaped as in a URL; "." the
    run's own) merged, keyed by module. The tool's log beside each names every module it
    ran for, so one it failed on (a log, no report) is said, not left out."""
    unit = report_format.unit
    reports = {_module_of(p): p for p in artifacts if path_matches(p, [pattern])}
    logs = {_module_of(p): p for p in artifacts if path_matches(p, [_log_pattern(pattern)])}
    if not reports and not logs:
        return unmeasured(f"the run wrote no coverage report ({pattern})", unit)
    parts: list[tuple[str | None, Coverage]] = []
    for module in sorted(reports.keys() | logs.keys()):
        if module in reports:
            report = reports[module]
            coverage = _read_report(report_format, artifacts[report], report)
        else:
            said = _cause(artifacts[logs[module]], report_format)
            coverage = unmeasured(f"the coverage tool wrote no report ({said})", unit)
        parts.append((None if module == _ROOT else module, coverage))
    return merge_coverage(parts)


def _module_of(path: str) -> str:
    return unquote(PurePosixPath(path).stem)


def _cause(log: str, report_format: CoverageFormat) -> str:
    """What a tool's log says went wrong, as its format reads it, cut to a reason's size."""
    line = report_format.log_cause([line.strip() for line in log.splitlines() if line.strip()])
    if not line:
        return "it said nothing"
    return line if len(line) <= _SAID else line[: _SAID - 3] + "..."


def merge_coverage(parts: Sequence[tuple[str | None, Coverage]]) -> Coverage:
    """Several projects' (or modules') coverage as one, file names scoped by label; any
    part that could not be measured makes the whole unmeasured (a partial number would
    compare different code)."""
    if not parts:
        return unmeasured("no project ran its tests")
    unit = parts[0][1].unit
    files: dict[str, FileCoverage] = {}
    code: dict[str, tuple[CodeRange, ...]] = {}
    for label, coverage in parts:
        if not coverage.measured:
            where = f"{label}: " if label else ""
            return unmeasured(f"{where}{coverage.problem}", unit)
        for name, counts in coverage.files.items():
            files[scoped(label, name)] = counts
        for name, ranges in coverage.code.items():
            code[scoped(label, name)] = ranges
    return Coverage(files, unit, code=code)


def scoped(label: str | None, name: str) -> str:
    """A file's name in merged coverage: scoped by its module's or project's label."""
    return f"{label}: {name}" if label else name


# -- the rule -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CoverageCheck:
    """The guard's finding: ``verdict`` is FAIL or PASS (PASS also when not measured)."""

    verdict: Verdict
    reason: str
    base: Coverage
    patched: Coverage
    max_drop: float
    # (file, base % or None for a file the patch added, patched %)
    fell: tuple[tuple[str, float | None, float], ...] = ()

    @property
    def compared(self) -> bool:
        """Whether the rule compared the two trees: a PASS also means it could not."""
        return self.base.measured and bool(self.base.total) and self.patched.measured

    @property
    def evidence(self) -> tuple[Evidence, ...]:
        return tuple(_fell_evidence(*fell) for fell in self.fell[:_SHOWN_FILES])

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "base": self.base.summary(),
            "patched": self.patched.summary(),
            "max_drop": self.max_drop,
            "verdict": self.verdict.value,
            "reason": self.reason,
        }
        if self.base.measured and self.patched.measured:
            data["drop"] = round(self.base.percent - self.patched.percent, 2)
        if self.fell:
            data["fell"] = [
                {
                    "file": path,
                    "base": None if before is None else round(before, 2),
                    "patched": round(after, 2),
                }
                for path, before, after in self.fell
            ]
        return data


def _fell_evidence(path: str, before: float | None, after: float) -> Evidence:
    if before is None:
        return Evidence(f"a file the patch added, {after:.1f}% covered", path)
    return Evidence(f"coverage fell from {before:.1f}% to {after:.1f}%", path)


def files_that_fell(base: Coverage, patched: Coverage) -> list[tuple[str, float | None, float]]:
    """Files whose coverage is lower on the patched tree (a removed file at 0%), then
    files the patch added that are less covered than the base was overall: both pull the
    number down. Largest fall first."""
    fell: list[tuple[str, float | None, float]] = []
    for path, before in base.files.items():
        after = patched.files.get(path)
        now = after.percent if after is not None else 0.0
        if before.covered and now < before.percent:
            fell.append((path, before.percent, now))
    fell.sort(key=lambda item: (item[2] - (item[1] or 0.0), item[0]))
    added = [
        (path, None, counts.percent)
        for path, counts in sorted(patched.files.items())
        if path not in base.files and counts.total and counts.percent < base.percent
    ]
    return fell + sorted(added, key=lambda item: (item[2], item[0]))


def check_coverage(
    base: Coverage, patched: Coverage, max_drop: float, *, patched_tools: bool = True
) -> CoverageCheck:
    """The drop rule (see the module docstring). ``patched_tools``: whether the coverage
    tool was available to the patched tree's run, as far as the harness itself saw."""
    unit = base.unit
    if not base.measured:
        reason = f"coverage not measured at the base commit: {base.problem}"
        return CoverageCheck(Verdict.PASS, reason, base, patched, max_drop)
    if not base.total:
        reason = "coverage not compared: the base's report names no main code"
        return CoverageCheck(Verdict.PASS, reason, base, patched, max_drop)
    if not patched.measured and not patched_tools:
        reason = f"coverage not measured on the patched tree: {patched.problem}"
        return CoverageCheck(Verdict.PASS, reason, base, patched, max_drop)
    if not patched.measured:
        reason = (
            f"coverage was measured at the base commit ({base.percent:.1f}% of {unit}) but "
            f"not on the patched tree ({patched.problem}): a patch may not switch the "
            "coverage measurement off"
        )
        return CoverageCheck(Verdict.FAIL, reason, base, patched, max_drop)
    drop = base.percent - patched.percent
    numbers = f"{base.percent:.1f}% of {unit} at the base commit, {patched.percent:.1f}% patched"
    if drop <= max_drop:
        return CoverageCheck(Verdict.PASS, f"coverage {numbers}", base, patched, max_drop)
    fell = tuple(files_that_fell(base, patched))
    names = ", ".join(path for path, _before, _after in fell[:3]) or "no single file"
    reason = (
        f"coverage of the main code fell by {drop:.1f} points ({numbers}; the recipe allows "
        f"{max_drop:g}): {names}"
    )
    return CoverageCheck(Verdict.FAIL, reason, base, patched, max_drop, fell)


def within_scope(coverage: Coverage, scope: str | None) -> Coverage:
    """Only the files of a project's own code (``Ecosystem.coverage_scope``, a path prefix;
    None: all of them): a dependency built from a folder may be profiled too, and a
    migration that drops the dependency must not count as a fall."""
    if scope is None or not coverage.measured:
        return coverage
    files = {
        path: counts for path, counts in coverage.files.items() if path.startswith(scope + "/")
    }
    code = {path: ranges for path, ranges in coverage.code.items() if path in files}
    return Coverage(files, coverage.unit, code=code)


def tools_in(resolved: Iterable[str], tools: Sequence[str]) -> bool:
    """Whether a resolution fetched every coverage tool (``group:artifact:version``), by
    the registry gate's own log."""
    fetched = set(resolved)
    return all(tool in fetched for tool in tools)
