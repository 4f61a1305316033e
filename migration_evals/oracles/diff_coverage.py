"""Diff coverage: of the lines a patch adds or changes in the main code, which ones the
base commit's tests executed on the graded tree.

The coverage guard (``migration_evals.oracles.coverage``) compares whole trees, so a pass can still
rest on changed code that no test reaches. This reads the patch's own diff (the patched line
number of every added line, in files outside the recipe's test paths; a line only
deleted has nothing left to execute) against the graded run's coverage report, the line
ranges it knows as code and whether they ran (``Coverage.code``):

* a changed line is *code* when the report knows it as code: a JaCoCo ``<line>``, or a
  line inside a Go profile's block of statements that is not blank or only a comment
  (a block spans lines; its blank and comment lines hold no statement). A changed line
  the report does not know (an import, a comment, ``pom.xml``, ``go.mod``) is not main
  code, and neither is a file outside every project the tier built;
* it is *covered* when a range holding it ran.

A changed Go file holding a ``//line`` directive is not measured: the profile numbers its
lines as the directive says, not as they are.

A file is found in the report as the report names it: Java by the package its source
declares and its file name, in the nearest module folder whose report has it (one
report per module, ``migration_evals.oracles.coverage``); Go by the module path and the file's path
in the module. The result (``migration_evals.core.diff_coverage``) counts per file and in all; its
state says "untested change" when there are changed lines of code and none ran.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from migration_evals.core.diff_coverage import ChangedFile, DiffCoverage
from migration_evals.core.model import patch_bytes
from migration_evals.oracles.coverage import CodeRange, Coverage, CoverageFormat, scoped
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
# The package a JVM source declares (Java, Kotlin, Groovy, Scala): JaCoCo names its
# source file by it, wherever the file lies.
_PACKAGE = re.compile(
    rb"^\s*package\s+([A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*)", re.MULTILINE
)
# Comments, which may hold a line that looks like a package declaration and is none.
_COMMENT = re.compile(rb"/\*.*?(?:\*/|\Z)|//[^\n]*", re.DOTALL)
# A Go line directive renumbers the lines after it, and go test's profile follows it
# (golang/go#41222): a file holding one cannot be matched with its own lines.
_LINE_DIRECTIVE = re.compile(rb"^//line |/\*line ", re.MULTILINE)
# The source files each format's tool measures: a change to none of them changes no main
# code, whether or not the run's coverage could be read.
_SOURCES = {
    CoverageFormat.JACOCO_XML: (".java", ".kt", ".groovy", ".scala"),
    CoverageFormat.GO_PROFILE: (".go",),
}

Read = Callable[[str], bytes | None]


@dataclass(frozen=True, slots=True)
class ProjectCoverage:
    """One project's graded run: its folder ("" the repository's root), its Go module
    path (None for Maven) and the coverage it measured, named as its report names it."""

    root: str
    module: str | None
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
        sources = any(path.endswith(_SOURCES[report_format]) for path in changed)
        return DiffCoverage(problem=problem) if sources else DiffCoverage()
    files = []
    for path, lines in sorted(changed.items()):
        project = _owner(projects, path)
        if project is None:
            continue  # in no project the tier built: nothing of it ran or could
        text = read(path) or b""
        if report_format is CoverageFormat.GO_PROFILE and _LINE_DIRECTIVE.search(text):
            return DiffCoverage(problem=f"{path} has a //line directive, which moves its lines")
        ranges = _ranges(project, path, report_format, read)
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


def _ranges(
    project: ProjectCoverage, path: str, report_format: CoverageFormat, read: Read
) -> tuple[CodeRange, ...]:
    """The code ranges the project's report holds for the file at ``path``."""
    code = project.coverage.code
    relative = project.relative(path)
    if report_format is CoverageFormat.GO_PROFILE:
        if project.module is None:
            return ()
        return code.get(f"{project.module}/{relative}", ())
    name = _jvm_source_name(relative, read(path))
    for module in _module_folders(relative):
        ranges = code.get(scoped(module, name))
        if ranges is not None:
            return ranges
    return ()


def _jvm_source_name(relative: str, content: bytes | None) -> str:
    """``package/File.java`` as JaCoCo names the source file: the declared package's
    folders and the file's own name (the default package: the name alone)."""
    declared = _PACKAGE.search(_COMMENT.sub(b"", content or b""))
    base = posixpath.basename(relative)
    if declared is None:
        return base
    package = re.sub(rb"\s", b"", declared.group(1)).decode("ascii", "replace")
    return f"{package.replace('.', '/')}/{base}"


def _module_folders(relative: str) -> Iterable[str | None]:
    """The folders a module holding ``relative`` could be, nearest first; None is the
    project's own folder (its report's files keep their bare names)."""
    folder = posixpath.dirname(relative)
    while folder:
        yield folder
        folder = posixpath.dirname(folder)
    yield None


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
        if report_format is CoverageFormat.GO_PROFILE and not _holds_statement(source, number):
            continue
        found[number] = ran > 0
    return found


def _holds_statement(source: Sequence[bytes], number: int) -> bool:
    """Whether a line inside a Go block can hold a statement: not blank, not only a
    comment."""
    if not 0 < number <= len(source):
        return False
    line = source[number - 1].strip()
    return bool(line) and not line.startswith(b"//")


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
