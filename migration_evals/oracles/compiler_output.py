"""Turning build output into evidence and reasons, as the build tool's own reader says.

Each ecosystem supplies a ``BuildOutputReader`` for its tool (Maven's and javac's in
``ecosystems.maven.build_output``, the go command's in ``ecosystems.go.build_output``):
its compilers' diagnostics at file:line, its error lines ranked with the decisive one
first, where a build that stopped early stopped and why. This module reads the output
once for all of them and keeps what is common: paths come back relative to the
repository so a check run can annotate them, each line is read without colour codes or
a level prefix (``[ERROR]``), a reason never repeats itself, and where the tool names
nothing, the last lines it printed stand for it (without the lines it prints around every
failure, which say nothing of the cause).

A long output is its head and its tail around the sandbox's cut marker
(``migration_evals.oracles.sandbox.capture``): the marker and the line the cut left
partial are read as nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from migration_evals.core.model import Evidence
from migration_evals.core.ports import SANDBOX_WORKDIR

__all__ = [
    "BuildOutputReader",
    "Line",
    "build_error_lines",
    "describe_build_stop",
    "diagnostic",
    "parse_compiler_output",
    "readable_lines",
    "shortened",
]

# -- reading the output -------------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_LEVEL = re.compile(r"^(?:\[(?P<level>ERROR|WARNING|WARN|INFO|FATAL|DEBUG)\] ?)+")
# Where the sandbox cut the output, or says it kept it by test
# (``migration_evals.oracles.sandbox.capture``).
_CUT = re.compile(r"^\[output (?:truncated|kept by test)\b.*\]$")


@dataclass(frozen=True, slots=True)
class Line:
    """One line of output, read once: ``text`` as printed (stripped), ``message`` as the
    tool meant it (no level prefix, no pointer the tool appends), and whether it is an
    error: an ``[ERROR]``/``[FATAL]`` line or one with no level (compilers, stack
    traces); warnings name problems the tool went on past."""

    text: str
    message: str
    is_error: bool

    @classmethod
    def read(cls, text: str, pointer: re.Pattern[str] | None = None) -> Line:
        text = text.strip()
        level = _LEVEL.match(text)
        message = text[level.end() :] if level else text
        message = pointer.sub("", message) if pointer is not None else message
        return cls(text, message.strip(), level is None or level["level"] in {"ERROR", "FATAL"})


@dataclass(frozen=True, slots=True)
class BuildOutputReader:
    """How one build tool's output reads.

    ``diagnostics``: its compilers' lines at file:line (groups ``path``, ``line``,
    ``msg``, optionally ``col``); ``error_lines``: its error lines, the decisive first;
    ``stop``: where a build that stopped early stopped, and why (None: it did not say);
    ``noise``: the lines it prints around every failure, which never name the cause;
    ``pointer``: what it appends to a message that is no part of it; ``event_output``:
    the tool's own text of a structured line (one starting ``{``), "" for none of its own.
    """

    diagnostics: tuple[re.Pattern[str], ...]
    error_lines: Callable[[Sequence[Line]], list[str]]
    stop: Callable[[Sequence[Line]], str | None]
    noise: re.Pattern[str] | None = None
    pointer: re.Pattern[str] | None = None
    event_output: Callable[[str], str] | None = None

    def is_noise(self, text: str) -> bool:
        return self.noise is not None and self.noise.match(text) is not None


def readable_lines(output: str, reader: BuildOutputReader | None = None) -> list[Line]:
    """The output's non-blank lines as the tool printed them: without colour codes, with
    a structured line read for the tool's own text it carries, and without the sandbox's
    cut marker. The line just before a cut is left out too: the kept head ends at a byte
    count, so that line is partial and would read as a shorter, different message."""
    pointer = reader.pointer if reader is not None else None
    events = reader.event_output if reader is not None else None
    lines: list[Line] = []
    previous = ""
    for raw in output.splitlines():
        line = _ANSI.sub("", raw).strip()
        if _CUT.match(line):
            if previous and lines:
                lines.pop()
        elif line.startswith("{") and events is not None:
            text = events(line)
            lines += [Line.read(text, pointer)] if text else []
        elif line:
            lines.append(Line.read(line, pointer))
        previous = line
    return lines


# -- compiler diagnostics ------------------------------------------------------------------


def _relative(path: str, root: str = "") -> str:
    """A repository-relative path: absolute sandbox paths lose the workspace prefix,
    paths relative to the project's folder gain it."""
    prefix = SANDBOX_WORKDIR.rstrip("/") + "/"
    if path.startswith(prefix):
        return path[len(prefix) :]
    path = path.removeprefix("./")
    return f"{root}/{path}" if root and not path.startswith("/") else path


def diagnostic(line: str, patterns: Iterable[re.Pattern[str]], root: str = "") -> Evidence | None:
    """``line`` as a compiler diagnostic at file:line, if one of ``patterns`` reads it;
    a path the tool printed relative to its folder ``root`` is made repository-relative."""
    for pattern in patterns:
        found = pattern.match(line)
        if found:
            column = found.groupdict().get("col")
            return Evidence(
                message=found["msg"].strip(),
                path=_relative(found["path"], root),
                line=int(found["line"]),
                column=int(column) if column else None,
            )
    return None


def parse_compiler_output(
    output: str, reader: BuildOutputReader | None, *, limit: int = 50, root: str = ""
) -> list[Evidence]:
    """Every distinct compiler diagnostic in ``output``, at most ``limit`` of them; paths
    the tool printed relative to its folder ``root`` are made repository-relative."""
    if reader is None:
        return []
    found: dict[tuple[str | None, int | None, str], Evidence] = {}
    for line in readable_lines(output, reader):
        evidence = diagnostic(line.text, reader.diagnostics, root)
        if evidence is not None:
            found.setdefault((evidence.path, evidence.line, evidence.message), evidence)
        if len(found) >= limit:
            break
    return list(found.values())


# -- the decisive lines ----------------------------------------------------------------------

_CAUSE_CHARS = 300  # of a cause kept in a reason


def shortened(text: str, limit: int = _CAUSE_CHARS) -> str:
    """``text`` cut to ``limit`` characters, an ellipsis saying so."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _distinct(texts: Iterable[str], limit: int) -> list[str]:
    """The first ``limit`` texts, each once; one an earlier text already says in full
    adds nothing."""
    kept: list[str] = []
    for text in texts:
        if len(kept) == limit:
            break
        if text and not any(text in earlier for earlier in kept):
            kept.append(text)
    return kept


def build_error_lines(
    output: str, reader: BuildOutputReader | None, *, limit: int = 10
) -> list[str]:
    """The build tool's own error lines, the decisive one first, as its reader ranks
    them; failing that, the last lines it printed, without its noise. Never empty for
    non-empty output."""
    lines = readable_lines(output, reader)
    chosen = _distinct(reader.error_lines(lines), limit) if reader is not None else []
    if not chosen:
        said = [line.message for line in lines if line.message]
        chosen = [text for text in said if not (reader and reader.is_noise(text))][-limit:]
        chosen = chosen or [line.text for line in lines[-limit:]]
    return [line[:500] for line in chosen[:limit]]


def describe_build_stop(output: str, reader: BuildOutputReader | None) -> str | None:
    """Where a build that stopped early stopped, and why, from its output, as its reader
    says it ("the build stopped at maven-plugin-plugin:3.6.0:descriptor (Unsupported
    class file major version 61)"); None if it did not say.

    Only ever words a reason: it reads lines the candidate's code may print as well."""
    return reader.stop(readable_lines(output, reader)) if reader is not None else None
