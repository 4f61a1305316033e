"""Diff coverage: of the lines a patch adds or changes in the main code, which ones the
base commit's tests executed on the graded tree.

The coverage guard (``migration_evals.oracles.coverage``) compares whole trees, so a pass can still
rest on changed code that no test reaches. This reads the patch's own diff (the patched line
number of every added line, in files outside the recipe's test paths; a line only
deleted has nothing left to execute) against the graded run's coverage report, the line
ranges it knows as code and whether they ran (``Coverage.code``):

* a changed line is *code* when the report knows it as code: inside a range the report
  holds for its file, on a line the format says can hold code (a Go block spans lines;
  its blank and comment lines hold no statement). A changed line the report does not
  know (an import, a comment, a build file) is not main code, and neither is a file
  outside every project the tier built;
* it is *covered* when a range holding it ran.

A file is found in the report as the report names it, which its coverage format says
(``CoverageFormat.ranges``: a JVM source by its declared package in the nearest module's
report, a Go file by its module path); a changed file the format cannot match with its
lines (a Go ``//line`` directive renumbers them) leaves the change not measured. The
result (``migration_evals.core.diff_coverage``) counts per file and in all; its state
says "untested change" when there are changed lines of code and none ran.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from migration_evals.core.diff_coverage import ChangedFile, DiffCoverage
from migration_evals.core.model import patch_bytes
from migration_evals.oracles.coverage import CodeRange, Coverage, CoverageFormat
from migration_evals.oracles.diffscreen import diff_sections
from migration_evals.oracles.grading import path_matches

__all__ = [
    "ProjectCoverage",
    "added_lines",
    "diff_coverage",
    "diff_without_coverage",
]

_FILES_KEPT = 50  # files listed in the details; the counts cover all of them
_LINES_KEPT = 20  # uncovered lines listed per file
_HUNK = re.compile(rb"^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
Read = Callable[[str], bytes | None]


@dataclass(frozen=True, slots=True)
class ProjectCoverage:
    """One project's graded run: its folder ("" the repository's root), its coverage scope
    (``Ecosystem.coverage_scope``: a Go module path; None for none) and the coverage it
    measured, named as its report names it."""

    root: str
    scope: str | None
    coverage: Coverage

    def owns(self, path: str) -> bool:
        return not self.root or path.startswith(self.root + "/")

    def relative(self, path: str) -> str:
        return path[len(self.root) + 1 :] if self.root else path


def added_lines(patch: str) -> dict[str, tuple[int, ...]]:
    """Each file the patch leaves behind, with the patched line numbers of the lines it
    adds (a changed line is a removed one and an added one); files it only deletes
    lines from, deletes or changes in binary are not listed."""
    split = diff_sections(patch_bytes(patch))
    if split is None:
        return {}  # a corrupt diff never gets past tier 1
    added: dict[str, tuple[int, ...]] = {}
    for section in split[1]:
        change = section.change
        if change.new_path is None or change.binary:
            continue
        lines = _hunk_additions(section.text.split(b"\n"))
        if lines:
            added[change.new_path] = (*added.get(change.new_path, ()), *lines)
    return added


def _hunk_additions(lines: Sequence[bytes]) -> list[int]:
    """The new side's numbers of the ``+`` lines of every hunk in a file's section (the
    section was read whole by tier 1's parser, so the hunks' counts hold)."""
    found: list[int] = []
    i = 0
    while i < len(lines):
        header = _HUNK.match(lines[i])
        i += 1
        if header is None:
            continue
        old_left = int(header.group(1) or 1)
        number, new_left = int(header.group(2)), int(header.group(3) or 1)
        while (old_left > 0 or new_left > 0) and i < len(lines):
            tag = lines[i][:1]
            if tag == b"+":
                found.append(number)
                number, new_left = number + 1, new_left - 1
            elif tag == b"-":
                old_left -= 1
            elif tag != b"\\":  # context; git reads an empty line as context too
                number, old_left, new_left = number + 1, old_left - 1, new_left - 1
            i += 1
    return found


def diff_coverage(
    patch: str,
    test_paths: Sequence[str],
    projects: Sequence[ProjectCoverage],
    report_format: CoverageFormat,
    read: Read,
    *,
    problem: str | None = None,
) -> DiffCoverage:
    """The changed lines of main code of every project in ``projects`` and how many ran.
    ``problem``: why the graded run's coverage could not be read (then not measured,
    unless the patch changes no source file the format's tool measures)."""
    changed = _main_changes(patch, test_paths)
    if problem is not None:
        sources = any(path.endswith(report_format.sources) for path in changed)
        return DiffCoverage(problem=problem) if sources else DiffCoverage()
    files = []
    for path, lines in sorted(changed.items()):
        project = _owner(projects, path)
        if project is None:
            continue  # in no project the tier built: nothing of it ran or could
        text = read(path) or b""
        unmatched = report_format.unmatched(path, text)
        if unmatched is not None:
            return DiffCoverage(problem=unmatched)
        ranges = report_format.ranges(
            project.coverage.code, project.scope, project.relative(path), text
        )
        if ranges:
            code = _code_lines(lines, ranges, report_format, text)
            if code:
                files.append(_changed_file(path, code))
    return _summed(files)


def diff_without_coverage(
    patch: str, test_paths: Sequence[str], not_code: Callable[[str], bool], why: str
) -> DiffCoverage:
    """For a recipe whose tests measure no coverage: no changed main code when every
    file the patch changes outside the tests is one ``not_code`` names (the build
    descriptions the recipe itself rebuilds), else not measured, for ``why``."""
    changed = _main_changes(patch, test_paths)
    if all(not_code(path) for path in changed):
        return DiffCoverage()
    return DiffCoverage(problem=why)


def _main_changes(patch: str, test_paths: Sequence[str]) -> dict[str, tuple[int, ...]]:
    return {
        path: lines
        for path, lines in added_lines(patch).items()
        if not path_matches(path, test_paths)
    }


def _owner(projects: Sequence[ProjectCoverage], path: str) -> ProjectCoverage | None:
    """The project of the nearest folder above ``path`` among those that ran."""
    owners = [p for p in projects if p.owns(path)]
    return max(owners, key=lambda p: len(p.root), default=None)


def _code_lines(
    lines: Iterable[int], ranges: Sequence[CodeRange], report_format: CoverageFormat, text: bytes
) -> dict[int, bool]:
    """Of the changed ``lines``, those the ranges hold as code, with whether one that
    holds it ran. One sweep over the ranges' ends, so that a report and a patch as large
    as their limits allow cost their sizes added, not multiplied."""
    source = text.split(b"\n")
    # (line, +1 or -1, ran): a range opens at its first line and closes after its last.
    ends = sorted([(r.first, 1, r.ran) for r in ranges] + [(r.last + 1, -1, r.ran) for r in ranges])
    found: dict[int, bool] = {}
    holding = ran = i = 0
    for number in sorted(set(lines)):
        while i < len(ends) and ends[i][0] <= number:
            _, step, hit = ends[i]
            holding, ran, i = holding + step, ran + step * hit, i + 1
        if not holding:
            continue
        if not report_format.holds_code(source, number):
            continue
        found[number] = ran > 0
    return found


def _changed_file(path: str, code: Mapping[int, bool]) -> ChangedFile:
    uncovered = tuple(sorted(n for n, ran in code.items() if not ran))
    covered = len(code) - len(uncovered)
    return ChangedFile(path, len(code), covered, uncovered[:_LINES_KEPT])


def _summed(files: Sequence[ChangedFile]) -> DiffCoverage:
    """All files' counts; the details list the least covered files first."""
    listed = sorted(files, key=lambda f: (f.covered / f.changed, f.path))
    return DiffCoverage(
        changed=sum(f.changed for f in files),
        covered=sum(f.covered for f in files),
        files=tuple(listed[:_FILES_KEPT]),
        files_left_out=max(len(files) - _FILES_KEPT, 0),
    )
