"""Go's coverage profiles (``go test -coverprofile``, with ``-coverpkg=./...`` so every
package of the module counts, tested or not): statement coverage per file, named by its
module path; and how diff coverage finds a changed file in a profile, where a block spans
lines and a ``//line`` directive renumbers them."""

from __future__ import annotations

import re
from collections.abc import Sequence

from migration_evals.oracles.coverage import (
    CodeMap,
    CodeRange,
    Coverage,
    CoverageFormat,
    FileCoverage,
    add_counts,
    unmeasured,
)

__all__ = ["GO_PROFILE", "go_module_path", "parse_go_profile"]

_UNIT = "statements"
# "path/file.go:12.34,15.2 3 1": a block's range, its statement count and its hit count.
_GO_BLOCK = re.compile(r"^(?P<file>.+):(?P<range>\d+\.\d+,\d+\.\d+) (?P<stmts>\d+) (?P<count>\d+)$")
_GO_MODULE = re.compile(r"^module\s+(\S+)", re.MULTILINE)
# A Go line directive renumbers the lines after it, and go test's profile follows it
# (golang/go#41222): a file holding one cannot be matched with its own lines.
_LINE_DIRECTIVE = re.compile(rb"^//line |/\*line ", re.MULTILINE)


def parse_go_profile(text: str) -> Coverage:
    """Statement coverage per file of a ``go test -coverprofile`` profile.

    With ``-coverpkg`` every test binary reports every package, so one block appears
    once per binary: it counts once, covered if any binary ran it.
    """
    unit = _UNIT
    lines = text.splitlines()
    if not lines or not lines[0].startswith("mode: "):
        return unmeasured("the coverage profile has no mode line", unit)
    blocks: dict[tuple[str, str], tuple[int, bool]] = {}
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        block = _GO_BLOCK.match(line)
        if block is None:
            return unmeasured(f"the coverage profile's line {number} is not a block", unit)
        key = (block["file"], block["range"])
        ran = int(block["count"]) > 0 or blocks.get(key, (0, False))[1]
        blocks[key] = (int(block["stmts"]), ran)
    files: dict[str, FileCoverage] = {}
    code: dict[str, list[CodeRange]] = {}
    for (path, span), (statements, ran) in blocks.items():
        counts = FileCoverage(statements if ran else 0, statements)
        files[path] = add_counts(files.get(path), counts)
        if statements:
            first, last = (int(end.split(".")[0]) for end in span.split(","))
            code.setdefault(path, []).append(CodeRange(first, last, ran))
    return Coverage(files, unit, code={path: tuple(ranges) for path, ranges in code.items()})


def go_module_path(go_mod: bytes | None) -> str | None:
    """The module path a ``go.mod`` declares (quotes aside), if it declares one."""
    if go_mod is None:
        return None
    found = _GO_MODULE.search(go_mod.decode("utf-8", "replace"))
    return found.group(1).strip('"`') if found else None


def _profile_ranges(
    code: CodeMap, module: str | None, relative: str, content: bytes
) -> tuple[CodeRange, ...]:
    """The blocks a profile holds for the file at ``relative`` in the module ``module``."""
    if module is None:
        return ()
    return code.get(f"{module}/{relative}", ())


def _holds_statement(source: Sequence[bytes], number: int) -> bool:
    """Whether a line inside a Go block can hold a statement: not blank, not only a
    comment."""
    if not 0 < number <= len(source):
        return False
    line = source[number - 1].strip()
    return bool(line) and not line.startswith(b"//")


def _line_directive(path: str, text: bytes) -> str | None:
    if _LINE_DIRECTIVE.search(text):
        return f"{path} has a //line directive, which moves its lines"
    return None


GO_PROFILE = CoverageFormat(
    "go-profile",
    _UNIT,
    parse_go_profile,
    sources=(".go",),
    ranges=_profile_ranges,
    holds_code=_holds_statement,
    unmatched=_line_directive,
)
