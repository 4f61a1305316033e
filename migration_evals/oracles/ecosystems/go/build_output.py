"""The go command's output, read for the decisive line (``BuildOutputReader``): its
compilers' and vet's diagnostics at file:line first, then its own messages (``go:``,
``FAIL``, a ``# package`` header last: it only says where the next lines come from),
without the progress it prints on the way. ``go test -json`` carries the build's output
in events: go 1.24 writes build errors as ``build-output`` events, and every go its
``FAIL pkg [build failed]`` line as a package's output; what a test printed is not the
tool's.

Where a build stopped is the package that did not build: "the build stopped at package
m/kv (kv/kv.go:12:3: undefined: x)".
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from migration_evals.oracles.compiler_output import (
    BuildOutputReader,
    Line,
    diagnostic,
    shortened,
)

__all__ = ["GO_OUTPUT"]

_GO = re.compile(r"^(?:vet: )?(?P<path>\S+\.go):(?P<line>\d+)(?::(?P<col>\d+))?: (?P<msg>.+)$")
_DIAGNOSTICS = (_GO,)
_GO_ERROR = re.compile(r"^(go: |# |\S+\.go:\d+|FAIL|vet: |build failed|cannot |package )")
# go's progress, printed on the way to an error it did not cause.
_GO_PROGRESS = re.compile(r"^go: (?:downloading|finding|extracting) ")
_GO_HEADER = re.compile(r"^# (?P<package>\S+)(?: \[\S+\])?$")
_GO_BUILD_FAILED = re.compile(r"^FAIL\s+(?P<package>\S+)\s+\[(?:build|setup) failed\]$")
# The testing package's framing ("--- FAIL: TestX"), which only names a test.
_FRAMING = re.compile(r"^-{3,}.*$")


_GO_BUILD_EVENTS = frozenset({"build-output", "output"})


def _go_event_output(line: str) -> str:
    """What a ``go test -json`` event says of the build or a package as a whole: go 1.24
    writes build errors as ``build-output`` events, and every go its ``FAIL pkg [build
    failed]`` line as a package's output. What a test printed is not the tool's ("")."""
    try:
        event = json.loads(line)
    except json.JSONDecodeError:
        return line
    if not isinstance(event, dict) or event.get("Test"):
        return ""
    return str(event.get("Output", "")).strip() if event.get("Action") in _GO_BUILD_EVENTS else ""


def _go_error_lines(lines: Sequence[Line]) -> list[str]:
    found = [
        line.text
        for line in lines
        if _GO_ERROR.match(line.text) and not _GO_PROGRESS.match(line.text)
    ]
    # A "# package" header only says where the next lines come from: it never leads.
    return sorted(found, key=lambda line: line.startswith("# "))


def _error_lines(lines: Sequence[Line]) -> list[str]:
    """The diagnostics first, then the go command's own messages."""
    found = (diagnostic(line.text, _DIAGNOSTICS) for line in lines)
    return [*(str(each) for each in found if each is not None), *_go_error_lines(lines)]


def _go_stop(lines: Sequence[Line]) -> str | None:
    failed: list[str] = []
    causes: dict[str, str] = {}
    package: str | None = None
    for line in (line.text for line in lines):
        if header := _GO_HEADER.match(line):
            package = header["package"]
        elif found := _GO_BUILD_FAILED.match(line):
            failed += [found["package"]] if found["package"] not in failed else []
        elif package and (said := diagnostic(line, _DIAGNOSTICS)):
            causes.setdefault(package, str(said))
    packages = failed or list(causes)  # go build prints no FAIL line, only the headers
    if not packages:
        return None
    where = f"package {packages[0]}"
    if len(packages) > 1:
        where += f" and {len(packages) - 1} other package(s)"
    # A package can fail because a package it imports did not build: that one's error.
    cause = causes.get(packages[0]) or next(iter(causes.values()), "")
    return f"the build stopped at {where}" + (f" ({shortened(cause)})" if cause else "")


GO_OUTPUT = BuildOutputReader(
    diagnostics=_DIAGNOSTICS,
    error_lines=_error_lines,
    stop=_go_stop,
    noise=_FRAMING,
    event_output=_go_event_output,
)
