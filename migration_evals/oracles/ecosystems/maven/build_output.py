"""Maven's and javac's output, read for the decisive line (``BuildOutputReader``).

A failed build is told by its *decisive* line, never by a banner (``BUILD FAILURE``,
``COMPILATION ERROR :``, ``-> [Help 1]``, separators, timings). Ranked: a compiler
diagnostic at file:line; a Java level javac refuses (``Source option 6 is no longer
supported``, ``release version 5 not supported``); an enforcer rule's message; a
dependency that could not be resolved; a forked test VM that crashed; last, what a
failed plugin goal says itself, shortened to the goal and its cause (the innermost
``Caused by:``, or the text after ``failed:``). The goal's own words come last because
they are often a pointer to the others ("Some Enforcer rules have failed", "Compilation
failure"). Then Maven's own ``[ERROR]`` lines, without its banners.

Where a build stopped is the last ``Failed to execute goal``: "the build stopped at
maven-plugin-plugin:3.6.0:descriptor (Unsupported class file major version 61)".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from migration_evals.oracles.compiler_output import (
    BuildOutputReader,
    Line,
    diagnostic,
    shortened,
)

__all__ = ["MAVEN_OUTPUT"]

_MAVEN = re.compile(r"^\[ERROR\] (?P<path>\S+\.java):\[(?P<line>\d+),(?P<col>\d+)\] (?P<msg>.+)$")
_JAVAC = re.compile(r"^(?P<path>\S+\.java):(?P<line>\d+): error: (?P<msg>.+)$")
_DIAGNOSTICS = (_MAVEN, _JAVAC)
_HELP = re.compile(r"\s*-> \[Help \d+\]$")

# Maven's framing around the error, which says nothing about the cause.
_BANNER = re.compile(
    r"^(?:-{3,}.*|COMPILATION (?:ERROR|WARNING)\s*:?|BUILD (?:FAILURE|SUCCESS)|\[Help \d+\].*"
    r"|To see the full stack trace.*|Re-run Maven using.*|For more information about the errors.*"
    r"|Total time:.*|Finished at:.*|After correcting the problems.*|mvn <args>.*|\d+ errors?"
    r"|Some problems were encountered while processing the POMs:?|Reactor Summary.*"
    r"|at [\w$.<>/]+ ?\(.*\)|\.\.\. \d+ more)$"
)
_JAVA_LEVEL = re.compile(
    r"(?:error: )?(?:(?:Source|Target) option \S+ is no longer supported\. Use \S+ or later\."
    r"|release version \S+ not supported|invalid (?:source|target) release: \S+"
    r"|invalid flag: --release)"
)
_ENFORCER_RULE = re.compile(r"^Rule \d+: \S+ failed with message:")
# Most telling first: one line can carry several ("could not resolve dependencies ...:
# Could not find artifact a:b:jar:1 in central").
_UNRESOLVED = tuple(
    re.compile(pattern)
    for pattern in (
        r"Plugin \S+ or one of its dependencies could not be resolved:",
        r"Non-resolvable (?:parent|import) POM",
        r"Could not find artifact \S+",
        r"Failure to find \S+",
        r"Could not transfer artifact \S+",
        r"Cannot access \S+ \(\S+\) in offline mode and the artifact \S+",
        r"Could not resolve dependencies for project",
    )
)
_FORKED_VM = re.compile(
    r"(?:The forked VM terminated\b|There was an error in the forked process\b).*"
)
_FAILED_GOAL = re.compile(
    r"^Failed to execute goal (?:(?P<coordinates>\S+) \((?P<execution>[^)]*)\) )?"
    r"on project (?P<project>[^\s:]+)(?::\s*(?P<message>.*))?$"
)
# "--- compiler:3.1:compile (default-compile) @ app ---" (Maven 3.9) or with the plugin's
# artifactId ("maven-compiler-plugin:3.1:compile") before it.
_MOJO = re.compile(
    r"^--- \S+?:(?P<version>[^:\s]+):(?P<goal>[\w-]+) \((?P<execution>[^)]*)\) "
    r"@ (?P<project>\S+) ---$"
)
_CAUSED_BY = re.compile(r"^Caused by: (?P<cause>.+)$")


def _with_next_line(text: str, lines: Sequence[Line], index: int) -> str:
    """``text`` (a header such as "... failed with message:") with the line after it,
    which holds the detail."""
    following = lines[index + 1].message if index + 1 < len(lines) else ""
    if not following or _BANNER.match(following):
        return text.rstrip(":")
    return f"{text.rstrip(':')}: {following}"


def _diagnostics(lines: Sequence[Line]) -> Iterator[str]:
    for line in lines:
        found = diagnostic(line.text, _DIAGNOSTICS)
        if found is not None:
            yield str(found)


def _refused_java_levels(lines: Sequence[Line]) -> Iterator[str]:
    for line in lines:
        found = _JAVA_LEVEL.search(line.message) if line.is_error else None
        if found:
            yield found[0]


def _enforcer_rules(lines: Sequence[Line]) -> Iterator[str]:
    # Enforcer 1.x prints a failed rule as a warning, with its message on an unprefixed
    # line; 3.x as errors. Either way the rule's message says what is wrong.
    for index, line in enumerate(lines):
        if _ENFORCER_RULE.match(line.message):
            yield _with_next_line(line.message, lines, index)


def _unresolved(lines: Sequence[Line]) -> Iterator[str]:
    for line in lines:
        text = line.message if line.is_error else ""
        for pattern in _UNRESOLVED:
            found = pattern.search(text)
            if found:
                yield text[found.start() :]
                break


def _forked_vm(lines: Sequence[Line]) -> Iterator[str]:
    for index, line in enumerate(lines):
        found = _FORKED_VM.search(line.message) if line.is_error else None
        if found and found[0].endswith("forked process"):
            yield _with_next_line(found[0], lines, index)
        elif found:
            yield found[0]


_SPECIFIC: tuple[Callable[[Sequence[Line]], Iterator[str]], ...] = (
    _diagnostics,
    _refused_java_levels,
    _enforcer_rules,
    _unresolved,
    _forked_vm,
)


def _specific(lines: Sequence[Line]) -> list[str]:
    """What names the cause itself, most decisive first."""
    return [text for finder in _SPECIFIC for text in finder(lines)]


@dataclass(frozen=True, slots=True)
class _GoalFailure:
    """One ``Failed to execute goal`` of Maven's: ``goal`` is ``artifactId:version:goal``
    (None: resolving ``project``'s dependencies failed, before any goal)."""

    index: int
    goal: str | None
    execution: str
    project: str
    cause: str

    def what(self) -> str:
        return self.goal or f"resolving the dependencies of {self.project}"

    def describe(self) -> str:
        return f"{self.what()} failed: {self.cause}" if self.cause else f"{self.what()} failed"


def _collapsed(message: str) -> str:
    """``message`` without the repeats Maven chains ("Compilation failure: Compilation
    failure:")."""
    parts: list[str] = []
    for part in message.rstrip(": ").split(": "):
        if not parts or parts[-1] != part:
            parts.append(part)
    return ": ".join(parts)


def _goal_cause(message: str, after: Sequence[Line]) -> str:
    """The innermost ``Caused by:`` of the stack trace printed after the goal's line (with
    ``-e``), else the text after ``failed:``, else the message, else the first decisive
    line after it (a message that continues on the next lines)."""
    causes = [found for line in after if (found := _CAUSED_BY.match(line.message))]
    if causes:
        return shortened(causes[-1]["cause"])
    if " failed: " in message:
        return shortened(message.split(" failed: ", 1)[1])
    if message := _collapsed(message):
        return shortened(message)
    details = _specific(after) or [x.message for x in after if not _BANNER.match(x.message)]
    return shortened(details[0]) if details else ""


def _goal_failures(lines: Sequence[Line]) -> list[_GoalFailure]:
    starts = [
        (i, found) for i, line in enumerate(lines) if (found := _FAILED_GOAL.match(line.message))
    ]
    failures = []
    for n, (index, found) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(lines)
        coordinates = found["coordinates"]
        goal = ":".join(coordinates.split(":")[-3:]) if coordinates else None
        cause = _goal_cause(found["message"] or "", lines[index + 1 : end])
        failures.append(
            _GoalFailure(index, goal, found["execution"] or "", found["project"], cause)
        )
    return failures


def _goal_output(lines: Sequence[Line], failure: _GoalFailure) -> list[Line]:
    """What the failed goal printed: from its last ``--- plugin ---`` header to the next."""
    if failure.goal is None:
        return []
    version, goal = failure.goal.split(":")[-2:]
    wanted = (version, goal, failure.execution, failure.project)
    headers = [
        (index, (found["version"], found["goal"], found["execution"], found["project"]))
        for index, line in enumerate(lines[: failure.index])
        if (found := _MOJO.match(line.message))
    ]
    ours = [n for n, (_, key) in enumerate(headers) if key == wanted]
    if not ours:
        return []
    start = headers[ours[-1]][0]
    end = headers[ours[-1] + 1][0] if ours[-1] + 1 < len(headers) else failure.index
    return list(lines[start:end])


def _decisive_scope(lines: Sequence[Line], failures: Sequence[_GoalFailure]) -> list[Line]:
    """The lines that can say why the build failed: each failed goal's own output and
    everything from the first ``Failed to execute goal`` on; all of them when there is
    none (go, javac). A rule the enforcer only warns about, or an earlier goal's noise,
    is not why a later goal failed."""
    if not failures:
        return list(lines)
    scope = [line for failure in failures for line in _goal_output(lines, failure)]
    return [*scope, *lines[failures[0].index :]]


def _maven_error_lines(lines: Sequence[Line], failures: Sequence[_GoalFailure]) -> list[str]:
    described = {failure.index: failure.describe() for failure in failures}
    chosen = []
    for index, line in enumerate(lines):
        if not line.text.startswith(("[ERROR]", "[FATAL]")):
            continue
        text = described.get(index) or line.message
        read = diagnostic(line.text, _DIAGNOSTICS)
        chosen.append(str(read) if read else text)
    return [text for text in chosen if text and not _BANNER.match(text)]


def _maven_stop(lines: Sequence[Line]) -> str | None:
    failures = _goal_failures(lines)
    if not failures:
        return None
    last = failures[-1]
    found = _specific(_decisive_scope(lines, [last]))
    cause = shortened(found[0]) if found else last.cause
    where = f"at {last.goal}" if last.goal else last.what()
    return f"the build stopped {where}" + (f" ({cause})" if cause else "")


def _error_lines(lines: Sequence[Line]) -> list[str]:
    """The decisive lines of the failed goals' scope, the goals' own words, then
    Maven's ``[ERROR]`` lines."""
    failures = _goal_failures(lines)
    decisive = [*_specific(_decisive_scope(lines, failures)), *(f.describe() for f in failures)]
    return [*decisive, *_maven_error_lines(lines, failures)]


MAVEN_OUTPUT = BuildOutputReader(
    diagnostics=_DIAGNOSTICS,
    error_lines=_error_lines,
    stop=_maven_stop,
    noise=_BANNER,
    pointer=_HELP,
)
