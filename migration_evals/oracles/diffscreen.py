"""Tier 1(a): read a unified diff's file headers and refuse anything unsafe.

The parser is strict on purpose: hunk line counts are followed exactly, so a removed line
that happens to start with ``--`` is never mistaken for a file header, and anything it does
not understand is reported as a corrupt patch rather than skipped. After ``git apply`` runs,
the workspace cross-checks that git touched only the paths declared here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from migration_evals.core.model import Evidence
from migration_evals.oracles.tree import ChangeKind, FileChange

__all__ = [
    "DiffSection",
    "ParsedDiff",
    "ScreenLimits",
    "diff_sections",
    "parse_diff",
    "screen_diff",
]

SYMLINK_MODE = "120000"
GITLINK_MODE = "160000"
_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_ESCAPES = {
    ord("a"): 7,
    ord("b"): 8,
    ord("t"): 9,
    ord("n"): 10,
    ord("v"): 11,
    ord("f"): 12,
    ord("r"): 13,
    ord('"'): 34,
    ord("\\"): 92,
}
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class ScreenLimits:
    max_files: int
    max_patch_bytes: int


@dataclass
class _Entry:
    """A file section while it is being read."""

    line: int
    git_paths: tuple[str | None, str | None] = (None, None)
    old_path: str | None = None
    new_path: str | None = None
    old_mode: str | None = None
    new_mode: str | None = None
    kind: ChangeKind = ChangeKind.MODIFY
    binary: bool = False
    added: int = 0
    removed: int = 0
    saw_minus: bool = False

    def finish(self) -> FileChange:
        old = self.old_path if self.old_path is not None else self.git_paths[0]
        new = self.new_path if self.new_path is not None else self.git_paths[1]
        if self.kind is ChangeKind.ADD:
            old = None
        elif self.kind is ChangeKind.DELETE:
            new = None
        return FileChange(
            kind=self.kind,
            old_path=old,
            new_path=new,
            old_mode=self.old_mode,
            new_mode=self.new_mode,
            binary=self.binary,
            added_lines=self.added,
            removed_lines=self.removed,
        )


@dataclass
class ParsedDiff:
    changes: list[FileChange] = field(default_factory=list)
    problems: list[Evidence] = field(default_factory=list)


class _Corrupt(ValueError):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"corrupt patch at line {line}: {message}")


def _unquote(raw: bytes, line: int) -> str:
    """Undo git's C-style path quoting (``"a/tab\\there"``, octal bytes)."""
    if not (raw.startswith(b'"') and raw.endswith(b'"') and len(raw) >= 2):
        return _decode(raw, line)
    body, out, i = raw[1:-1], bytearray(), 0
    while i < len(body):
        char = body[i]
        if char != ord("\\"):
            out.append(char)
            i += 1
            continue
        nxt = body[i + 1 : i + 2]
        if nxt and nxt[0] in _ESCAPES:
            out.append(_ESCAPES[nxt[0]])
            i += 2
        elif re.fullmatch(rb"[0-7]{3}", body[i + 1 : i + 4]):
            out.append(int(body[i + 1 : i + 4], 8))
            i += 4
        else:
            raise _Corrupt(line, "bad escape in quoted path")
    return _decode(bytes(out), line)


def _decode(raw: bytes, line: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _Corrupt(line, "path is not valid UTF-8") from None


def _strip_prefix(path: str, prefix: str) -> str:
    return path[len(prefix) :] if path.startswith(prefix) else path


def _header_path(raw: bytes, line: int, prefix: str) -> str | None:
    """A ``---``/``+++`` path: /dev/null → None; drop a trailing tab and timestamp."""
    raw = raw.rstrip(b"\r")
    if not raw.startswith(b'"') and b"\t" in raw:
        raw = raw.split(b"\t", 1)[0]
    path = _unquote(raw, line)
    return None if path == "/dev/null" else _strip_prefix(path, prefix)


def _git_header_paths(rest: bytes, line: int) -> tuple[str | None, str | None]:
    """Paths of ``diff --git a/X b/Y``; only trusted when they are unambiguous."""
    if rest.startswith(b'"'):
        end = rest.index(b'"', 1) if b'"' in rest[1:] else -1
        while end > 0 and rest[end - 1 : end] == b"\\":
            end = rest.index(b'"', end + 1)
        first, second = rest[: end + 1], rest[end + 2 :]
        return _strip_prefix(_unquote(first, line), "a/"), _strip_prefix(
            _unquote(second, line), "b/"
        )
    text = _decode(rest, line)
    half = (len(text) - 1) // 2
    if (
        text.startswith("a/")
        and text[half + 1 :].startswith("b/")
        and text[2:half] == text[half + 3 :]
    ):
        return text[2:half], text[half + 3 :]
    if " b/" in text and text.startswith("a/"):
        old, new = text.rsplit(" b/", 1)
        return old[2:], new
    raise _Corrupt(line, "cannot read the paths of the diff --git header")


_MODE_HEADERS = {
    b"old mode ": "old_mode",
    b"new mode ": "new_mode",
    b"deleted file mode ": "old_mode",
    b"new file mode ": "new_mode",
}


def _extended_header(entry: _Entry, text: bytes, number: int) -> bool:
    """Apply one git extended header line to ``entry``; False if it is not one."""
    for prefix, attribute in _MODE_HEADERS.items():
        if text.startswith(prefix):
            setattr(entry, attribute, _decode(text[len(prefix) :].strip(), number))
            if prefix.startswith(b"deleted"):
                entry.kind = ChangeKind.DELETE
            elif prefix.startswith(b"new file"):
                entry.kind = ChangeKind.ADD
            return True
    for prefix, kind, attribute in (
        (b"rename from ", ChangeKind.RENAME, "old_path"),
        (b"rename to ", ChangeKind.RENAME, "new_path"),
        (b"copy from ", ChangeKind.COPY, "old_path"),
        (b"copy to ", ChangeKind.COPY, "new_path"),
    ):
        if text.startswith(prefix):
            setattr(entry, attribute, _unquote(text[len(prefix) :].rstrip(b"\r"), number))
            entry.kind = kind
            return True
    if text.startswith(b"index "):
        parts = text.split()
        if len(parts) == 3:
            entry.old_mode = entry.old_mode or _decode(parts[2], number)
            entry.new_mode = entry.new_mode or _decode(parts[2], number)
        return True
    return text.startswith((b"similarity index ", b"dissimilarity index "))


def _hunk_lines(lines: list[bytes], start: int, entry: _Entry) -> int:
    """Consume one hunk starting at ``lines[start]``; return the index after it."""
    match = _HUNK.match(lines[start])
    if not match:
        raise _Corrupt(start + 1, "malformed hunk header")
    old_left = int(match.group(2) or 1)
    new_left = int(match.group(4) or 1)
    i = start + 1
    while old_left > 0 or new_left > 0:
        if i >= len(lines):
            raise _Corrupt(i, "hunk ends before its line counts are used up")
        body = lines[i]
        tag = body[:1]
        if tag == b" " or body in (b"", b"\r"):  # git reads an empty line as context
            old_left, new_left = old_left - 1, new_left - 1
        elif tag == b"-":
            old_left, entry.removed = old_left - 1, entry.removed + 1
        elif tag == b"+":
            new_left, entry.added = new_left - 1, entry.added + 1
        elif tag != b"\\":
            raise _Corrupt(i + 1, "unexpected line inside a hunk")
        i += 1
        if old_left < 0 or new_left < 0:
            raise _Corrupt(i, "hunk has more lines than its header says")
    while i < len(lines) and lines[i].startswith(b"\\"):
        i += 1  # "\ No newline at end of file"
    return i


def _file_header(entry: _Entry, lines: list[bytes], i: int) -> None:
    """Read a ``---``/``+++`` pair into ``entry``."""
    entry.saw_minus = True
    entry.old_path = _header_path(lines[i][4:], i + 1, "a/")
    entry.new_path = _header_path(lines[i + 1][4:], i + 2, "b/")
    if entry.old_path is None:
        entry.kind = ChangeKind.ADD
    elif entry.new_path is None:
        entry.kind = ChangeKind.DELETE


def _body_line(entry: _Entry, lines: list[bytes], i: int) -> int:
    """Consume one line (or hunk) inside a file section; return the next index."""
    text = lines[i]
    if text.startswith(b"@@ ") and entry.saw_minus:
        return _hunk_lines(lines, i, entry)
    if text.startswith((b"GIT binary patch", b"Binary files ")):
        entry.binary = True
        return i + 1
    if not entry.saw_minus and _extended_header(entry, text, i + 1):
        return i + 1
    if entry.binary or text.startswith(b"diff "):
        return i + 1  # binary payload, plain "diff -u" separator lines
    raise _Corrupt(i + 1, "line is neither a header nor part of a hunk")


def _sections(lines: list[bytes]) -> Iterator[_Entry]:
    """Walk the diff, yielding each file section once it is complete."""
    i, entry = 0, None
    while i < len(lines):
        text = lines[i]
        is_pair = (
            text.startswith(b"--- ") and i + 1 < len(lines) and lines[i + 1].startswith(b"+++ ")
        )
        if text.startswith(b"diff --git "):
            if entry is not None:
                yield entry
            entry = _Entry(line=i + 1, git_paths=_git_header_paths(text[11:].rstrip(b"\r"), i + 1))
            i += 1
        elif is_pair:
            if entry is None or entry.saw_minus:
                if entry is not None:
                    yield entry
                entry = _Entry(line=i + 1)
            _file_header(entry, lines, i)
            i += 2
        elif entry is None:
            i += 1  # preamble, such as a commit message
        elif text.rstrip(b"\r") == b"-- ":
            break  # format-patch signature: nothing after it is part of the diff
        else:
            i = _body_line(entry, lines, i)
    if entry is not None:
        yield entry


def parse_diff(patch: bytes) -> ParsedDiff:
    """Read the file entries of ``patch``; corrupt input becomes a problem, not an exception."""
    parsed = ParsedDiff()
    lines = patch.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # the newline ending the last line starts no line of its own
    try:
        for entry in _sections(lines):
            parsed.changes.append(entry.finish())
    except _Corrupt as exc:
        parsed.problems.append(Evidence(str(exc)))
    return parsed


@dataclass(frozen=True, slots=True)
class DiffSection:
    """One file's part of a diff: its entry and its lines, exactly as they came."""

    change: FileChange
    text: bytes


def diff_sections(patch: bytes) -> tuple[bytes, list[DiffSection]] | None:
    """The text before the first file section, and each file's section, read by the
    parser tier 1 uses (quoted paths, renames, headers without ``diff --git``); joined
    again they give ``patch`` back. None when the diff is corrupt: a caller that would
    cut it up must leave it whole, for tier 1 to refuse."""
    parts = patch.split(b"\n")  # as parse_diff splits: a lone CR ends no line
    lines = [part + b"\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
    bare = [line.removesuffix(b"\n") for line in lines]
    try:
        entries = list(_sections(bare))
    except _Corrupt:
        return None
    if not entries:
        return patch, []
    starts = [entry.line - 1 for entry in entries]
    ends = [*starts[1:], len(lines)]
    sections = [
        DiffSection(entry.finish(), b"".join(lines[start:end]))
        for entry, start, end in zip(entries, starts, ends, strict=True)
    ]
    return b"".join(lines[: starts[0]]), sections


def _path_problem(path: str) -> str | None:
    if not path:
        return "empty path"
    if path.startswith("/"):
        return "absolute path"
    if "\\" in path or _CONTROL.search(path):
        return "path contains a backslash or a control character"
    parts = path.split("/")
    if any(part in ("", ".") for part in parts):
        return "path has an empty or '.' component"
    if ".." in parts:
        return "path has a '..' component"
    # Case-insensitive and trailing dots/spaces: what case-folding or Windows file systems
    # would resolve to .git.
    if any(part.lower().rstrip(". ") == ".git" for part in parts):
        return "path is inside .git/"
    return None


def _change_problems(change: FileChange) -> Iterator[str]:
    for path in dict.fromkeys(change.paths()):
        problem = _path_problem(path)
        if problem:
            yield f"{problem}: {path!r}"
    modes = {change.old_mode, change.new_mode}
    if SYMLINK_MODE in modes:
        yield f"symbolic link (mode 120000) at {change.path!r}"
    if GITLINK_MODE in modes:
        yield f"submodule (mode 160000) at {change.path!r}"
    if change.binary:
        yield f"binary patch for {change.path!r}"


def screen_diff(patch: bytes, limits: ScreenLimits) -> ParsedDiff:
    """Parse ``patch`` and collect every reason tier 1 must refuse it before applying."""
    if len(patch) > limits.max_patch_bytes:
        reason = f"patch is {len(patch)} bytes; the limit is {limits.max_patch_bytes}"
        return ParsedDiff(problems=[Evidence(reason)])
    parsed = parse_diff(patch)
    if parsed.problems:
        return parsed
    if not parsed.changes:
        parsed.problems.append(Evidence("the patch changes no files"))
    if len(parsed.changes) > limits.max_files:
        parsed.problems.append(
            Evidence(f"patch touches {len(parsed.changes)} files; the limit is {limits.max_files}")
        )
    for change in parsed.changes:
        parsed.problems.extend(Evidence(p, path=None) for p in _change_problems(change))
    return parsed
