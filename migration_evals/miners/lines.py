"""How many of the lines a change added are still its own at a later commit.

A line is known by where ``git blame -w -M -C`` says it came from: the change's commit,
the file's path in that commit and the line's number there (an ``Origin``). Blame follows
a line through re-indents (``-w``), moves within a file (``-M``), moves and copies between
files and renames (``-C``), so its origin stays the same while the line lives on.

* **Added** (``added_lines``): the change's own ``+`` lines at the merge (``git diff
  before merge``) whose origin is one of the change's commits. Whitespace-only lines are
  not counted; a ``+`` line blame gives to an older commit (an old line re-indented, or
  moved in from another file) is not the change's own and is not counted either.
* **Alive** (``surviving_lines``): the added origins found again in the tree at a later
  commit, each counted once. A line there that blame credits to the change without being
  one of its added lines (a later copy of a line it added, a duplicate) is reported
  separately and never counted, so alive can never exceed added.

Blame runs over ``before..at`` only: whatever came from before the change is blamed on the
boundary, which is all this needs to know about it, and old history is never walked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from migration_evals.miners.history import LandedPR, git_text

__all__ = ["AddedLines", "Origin", "Survival", "added_lines", "line_ranges", "surviving_lines"]

_BLAME_OPTIONS = ("-w", "-M", "-C")
_BLAME_HEADER = re.compile(r"^([0-9a-f]{40}(?:[0-9a-f]{24})?) (\d+) (\d+)")
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True, slots=True, order=True)
class Origin:
    """Where blame says a line was born: commit, path in that commit, line number there."""

    commit: str
    path: str
    line: int


@dataclass(frozen=True, slots=True)
class AddedLines:
    """The lines a change added, as counted, and the ``+`` lines left out and why."""

    origins: frozenset[Origin]
    counted: Mapping[str, tuple[int, ...]]  # path at the merge -> line numbers counted
    whitespace_only: int = 0
    not_own: int = 0  # re-indented old lines, lines moved in from other files

    @property
    def count(self) -> int:
        return len(self.origins)

    def to_dict(self) -> dict[str, object]:
        return {
            "counted": {path: line_ranges(lines) for path, lines in sorted(self.counted.items())},
            "whitespace_only_not_counted": self.whitespace_only,
            "older_lines_not_counted": self.not_own,
        }


@dataclass(frozen=True, slots=True)
class Survival:
    """Added lines still the change's own at a commit; credit beyond them kept apart."""

    added: int
    alive: int
    credited_not_added: int = 0
    alive_by_file: Mapping[str, int] = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        # A change that only deletes lines has nothing that can die; only a revert rejects it.
        return self.alive / self.added if self.added else 1.0


@dataclass(frozen=True, slots=True)
class _BlamedLine:
    origin: Origin
    final_line: int
    blank: bool


def line_ranges(lines: tuple[int, ...]) -> str:
    """``(3, 4, 5, 9)`` -> ``"3-5,9"``: line numbers as a person would write them."""
    spans: list[str] = []
    start = previous = None
    for number in sorted(lines):
        if previous is not None and number == previous + 1:
            previous = number
            continue
        if start is not None:
            spans.append(f"{start}-{previous}" if start != previous else str(start))
        start = previous = number
    if start is not None:
        spans.append(f"{start}-{previous}" if start != previous else str(start))
    return ",".join(spans)


def _blame(git_dir: Path, since: str, at: str, path: str) -> Iterator[_BlamedLine]:
    out = git_text(
        git_dir,
        "-c",
        "core.quotePath=false",
        "blame",
        *_BLAME_OPTIONS,
        "--line-porcelain",
        f"{since}..{at}",
        "--",
        path,
    )
    header: re.Match[str] | None = None
    origin_path = path
    for line in out.splitlines():
        if line.startswith("\t"):
            if header is not None:
                origin = Origin(header.group(1), origin_path, int(header.group(2)))
                yield _BlamedLine(origin, int(header.group(3)), not line[1:].strip())
            header = None
        elif line.startswith("filename "):
            origin_path = line.removeprefix("filename ")
        elif (found := _BLAME_HEADER.match(line)) is not None:
            header = found


def _plus_lines(git_dir: Path, landed: LandedPR, path: str) -> dict[int, bool]:
    """Line numbers (in ``path`` at the merge) of the change's ``+`` lines: blank or not."""
    diff = git_text(
        git_dir,
        "diff",
        "--no-color",
        "--no-ext-diff",
        "-U0",
        "-M",
        landed.before,
        landed.merge_commit,
        "--",
        *landed.renamed_from.get(path, ()),
        path,
    )
    plus: dict[int, bool] = {}
    number = 0
    for line in diff.splitlines():
        hunk = _HUNK.match(line)
        if hunk is not None:
            number = int(hunk.group(1))
        elif line.startswith("+") and not line.startswith("+++"):
            plus[number] = not line[1:].strip()
            number += 1
    return plus


def added_lines(git_dir: Path, landed: LandedPR) -> AddedLines:
    """The lines ``landed`` added: its non-blank ``+`` lines that blame gives to its commits."""
    origins: set[Origin] = set()
    counted: dict[str, tuple[int, ...]] = {}
    whitespace_only = not_own = 0
    for path in landed.files:
        plus = _plus_lines(git_dir, landed, path)
        whitespace_only += sum(plus.values())
        own: list[int] = []
        for blamed in _blame(git_dir, landed.before, landed.merge_commit, path):
            if blamed.final_line not in plus or blamed.blank:
                continue
            if blamed.origin.commit in landed.commits:
                origins.add(blamed.origin)
                own.append(blamed.final_line)
            else:
                not_own += 1
        if own:
            counted[path] = tuple(own)
    return AddedLines(frozenset(origins), counted, whitespace_only, not_own)


def _touched(git_dir: Path, since: str, until: str) -> list[set[str]]:
    """Files touched by each commit in ``since..until``, oldest first; a rename gives both
    its old and its new name."""
    log = git_text(
        git_dir,
        "log",
        "--reverse",
        "-M",
        "-C",
        "--name-status",
        "--format=%x1e",
        f"{since}..{until}",
    )
    touched = []
    for chunk in log.split("\x1e"):
        # "M\tpath", "A\tpath", "R087\told\tnew", "C100\tfrom\tto"
        paths = {p for line in chunk.splitlines() if line for p in line.split("\t")[1:]}
        if paths:
            touched.append(paths)
    return touched


def _candidate_files(git_dir: Path, landed: LandedPR, at: str) -> list[str]:
    """Where the change's lines may live at ``at``: its files, and files that took lines
    from them (a file joins when a commit touched it together with one already in the set,
    so renames and moves are followed); only files present at ``at`` count."""
    candidates = set(landed.files)
    for files in _touched(git_dir, landed.merge_commit, at):
        if candidates.intersection(files):
            candidates.update(files)
    present = set(git_text(git_dir, "ls-tree", "-r", "-z", "--name-only", at).split("\0"))
    return sorted(candidates & present)


def surviving_lines(git_dir: Path, landed: LandedPR, added: AddedLines, at: str) -> Survival:
    """How many of ``added`` are still attributed to the change at ``at``, each once."""
    if at == landed.merge_commit:
        return Survival(added.count, added.count, 0, {p: len(n) for p, n in added.counted.items()})
    seen: set[Origin] = set()
    credited_not_added = 0
    by_file: dict[str, int] = {}
    for path in _candidate_files(git_dir, landed, at):
        for blamed in _blame(git_dir, landed.before, at, path):
            if blamed.blank or blamed.origin.commit not in landed.commits:
                continue
            if blamed.origin in added.origins and blamed.origin not in seen:
                seen.add(blamed.origin)
                by_file[path] = by_file.get(path, 0) + 1
            else:
                credited_not_added += 1
    return Survival(added.count, len(seen), credited_not_added, by_file)
