"""Turning build output (javac, Maven, go build/vet, go test) into evidence and reasons.

Paths come back relative to the repository so a check run can annotate them.

A failed build is told by its *decisive* line, never by a banner (``BUILD FAILURE``,
``COMPILATION ERROR :``, ``-> [Help 1]``, separators, timings). Ranked: a compiler
diagnostic at file:line; a Java level javac refuses (``Source option 6 is no longer
supported``, ``release version 5 not supported``); an enforcer rule's message; a
dependency that could not be resolved; a forked test VM that crashed; last, what a
failed plugin goal says itself, shortened to the goal and its cause (the innermost
``Caused by:``, or the text after ``failed:``). The goal's own words come last because
they are often a pointer to the others ("Some Enforcer rules have failed", "Compilation
failure").

Maven's lines may be coloured and carry ``[ERROR]``/``[WARNING]`` prefixes, and a long
output is its head and its tail around the sandbox's cut marker
(``migration_evals.oracles.sandbox.capture``): the marker and the line the cut left partial are read
as nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from migration_evals.core.model import Evidence
from migration_evals.core.ports import SANDBOX_WORKDIR

__all__ = [
    "build_error_lines",
    "describe_build_stop",
    "parse_build_output",
    "parse_compiler_output",
]

_MAVEN = re.compile(r"^\[ERROR\] (?P<path>\S+\.java):\[(?P<line>\d+),(?P<col>\d+)\] (?P<msg>.+)$")
_JAVAC = re.compile(r"^(?P<path>\S+\.java):(?P<line>\d+): error: (?P<msg>.+)$")
_GO = re.compile(r"^(?:vet: )?(?P<path>\S+\.go):(?P<line>\d+)(?::(?P<col>\d+))?: (?P<msg>.+)$")


_STEP = re.compile(r"^Step (?P<step>\d+)/(?P<of>\d+) : (?P<instruction>.+)$")

# -- reading the output -------------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_LEVEL = re.compile(r"^(?:\[(?P<level>ERROR|WARNING|WARN|INFO|FATAL|DEBUG)\] ?)+")
_HELP = re.compile(r"\s*-> \[Help \d+\]$")
# Where the sandbox cut the output, or says it kept it by test
# (``migration_evals.oracles.sandbox.capture``).
_CUT = re.compile(r"^\[output (?:truncated|kept by test)\b.*\]$")


@dataclass(frozen=True, slots=True)
class _Line:
    """One line of output, read once: ``text`` as printed (stripped), ``message`` as the
    tool meant it (no level prefix, no ``-> [Help 1]`` pointer), and whether it is an
    error: an ``[ERROR]``/``[FATAL]`` line or one with no level (javac, go, stack traces);
    Maven's warnings name problems it went on past."""

    text: str
    message: str
    is_error: bool

    @classmethod
    def read(cls, text: str) -> _Line:
        text = text.strip()
        level = _LEVEL.match(text)
        message = _HELP.sub("", text[level.end() :] if level else text).strip()
        return cls(text, message, level is None or level["level"] in {"ERROR", "FATAL"})


def _readable_lines(output: str) -> list[_Line]:
    """The output's non-blank lines as the tool printed them: without colour codes, with
    a ``go test -json`` event read for the build's or package's output it carries, and
    without the sandbox's cut marker. The line just before a cut is left out too: the
    kept head ends at a byte count, so that line is partial and would read as a shorter,
    different message."""
    lines: list[_Line] = []
    previous = ""
    for raw in output.splitlines():
        line = _ANSI.sub("", raw).strip()
        if _CUT.match(line):
            if previous and lines:
                lines.pop()
        elif line.startswith("{"):
            text = _go_event_output(line)
            lines += [_Line.read(text)] if text else []
        elif line:
            lines.append(_Line.read(line))
        previous = line
    return lines


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


# -- compiler diagnostics ------------------------------------------------------------------


def _relative(path: str, root: str = "") -> str:
    """A repository-relative path: absolute sandbox paths lose the workspace prefix,
    paths relative to the project's folder gain it."""
    prefix = SANDBOX_WORKDIR.rstrip("/") + "/"
    if path.startswith(prefix):
        return path[len(prefix) :]
    path = path.removeprefix("./")
    return f"{root}/{path}" if root and not path.startswith("/") else path


def _match(line: str, root: str) -> Evidence | None:
    for pattern in (_MAVEN, _JAVAC, _GO):
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


def parse_compiler_output(output: str, *, limit: int = 50, root: str = "") -> list[Evidence]:
    """Every distinct compiler diagnostic in ``output``, at most ``limit`` of them; paths
    the tool printed relative to its folder ``root`` are made repository-relative."""
    found: dict[tuple[str | None, int | None, str], Evidence] = {}
    for line in _readable_lines(output):
        evidence = _match(line.text, root)
        if evidence is not None:
            found.setdefault((evidence.path, evidence.line, evidence.message), evidence)
        if len(found) >= limit:
            break
    return list(found.values())


def parse_build_output(
    output: str, *, dockerfile: str, instruction_lines: Sequence[int] = ()
) -> list[Evidence]:
    """The failing step of an image build as evidence on its Dockerfile line.

    ``instruction_lines`` maps step N to the line of the Nth instruction; the build's last
    started step is the one that failed.
    """
    lines = output.splitlines()
    steps = [(i, _STEP.match(line)) for i, line in enumerate(lines)]
    started = [(i, found) for i, found in steps if found]
    if not started:
        return []
    index, step = started[-1]
    number = int(step["step"])
    after = [line.strip() for line in lines[index + 1 :] if line.strip()]
    error = next((line for line in reversed(after) if not line.startswith("--->")), "")
    message = f"step {number}/{step['of']} failed: {step['instruction']}"
    if error:
        message += f": {error}"
    line = instruction_lines[number - 1] if 0 < number <= len(instruction_lines) else None
    return [Evidence(message[:500], dockerfile, line)]


# -- the decisive lines, ranked -------------------------------------------------------------

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
_CAUSE_CHARS = 300  # of a cause kept in a reason


def _shortened(text: str, limit: int = _CAUSE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _with_next_line(text: str, lines: Sequence[_Line], index: int) -> str:
    """``text`` (a header such as "... failed with message:") with the line after it,
    which holds the detail."""
    following = lines[index + 1].message if index + 1 < len(lines) else ""
    if not following or _BANNER.match(following):
        return text.rstrip(":")
    return f"{text.rstrip(':')}: {following}"


def _diagnostics(lines: Sequence[_Line]) -> Iterator[str]:
    for line in lines:
        found = _match(line.text, "")
        if found is not None:
            yield str(found)


def _refused_java_levels(lines: Sequence[_Line]) -> Iterator[str]:
    for line in lines:
        found = _JAVA_LEVEL.search(line.message) if line.is_error else None
        if found:
            yield found[0]


def _enforcer_rules(lines: Sequence[_Line]) -> Iterator[str]:
    # Enforcer 1.x prints a failed rule as a warning, with its message on an unprefixed
    # line; 3.x as errors. Either way the rule's message says what is wrong.
    for index, line in enumerate(lines):
        if _ENFORCER_RULE.match(line.message):
            yield _with_next_line(line.message, lines, index)


def _unresolved(lines: Sequence[_Line]) -> Iterator[str]:
    for line in lines:
        text = line.message if line.is_error else ""
        for pattern in _UNRESOLVED:
            found = pattern.search(text)
            if found:
                yield text[found.start() :]
                break


def _forked_vm(lines: Sequence[_Line]) -> Iterator[str]:
    for index, line in enumerate(lines):
        found = _FORKED_VM.search(line.message) if line.is_error else None
        if found and found[0].endswith("forked process"):
            yield _with_next_line(found[0], lines, index)
        elif found:
            yield found[0]


_SPECIFIC: tuple[Callable[[Sequence[_Line]], Iterator[str]], ...] = (
    _diagnostics,
    _refused_java_levels,
    _enforcer_rules,
    _unresolved,
    _forked_vm,
)


def _specific(lines: Sequence[_Line]) -> list[str]:
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


def _goal_cause(message: str, after: Sequence[_Line]) -> str:
    """The innermost ``Caused by:`` of the stack trace printed after the goal's line (with
    ``-e``), else the text after ``failed:``, else the message, else the first decisive
    line after it (a message that continues on the next lines)."""
    causes = [found for line in after if (found := _CAUSED_BY.match(line.message))]
    if causes:
        return _shortened(causes[-1]["cause"])
    if " failed: " in message:
        return _shortened(message.split(" failed: ", 1)[1])
    if message := _collapsed(message):
        return _shortened(message)
    details = _specific(after) or [x.message for x in after if not _BANNER.match(x.message)]
    return _shortened(details[0]) if details else ""


def _goal_failures(lines: Sequence[_Line]) -> list[_GoalFailure]:
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


def _goal_output(lines: Sequence[_Line], failure: _GoalFailure) -> list[_Line]:
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


def _decisive_scope(lines: Sequence[_Line], failures: Sequence[_GoalFailure]) -> list[_Line]:
    """The lines that can say why the build failed: each failed goal's own output and
    everything from the first ``Failed to execute goal`` on; all of them when there is
    none (go, javac). A rule the enforcer only warns about, or an earlier goal's noise,
    is not why a later goal failed."""
    if not failures:
        return list(lines)
    scope = [line for failure in failures for line in _goal_output(lines, failure)]
    return [*scope, *lines[failures[0].index :]]


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


# -- the tool's own error lines -------------------------------------------------------------

_GO_ERROR = re.compile(r"^(go: |# |\S+\.go:\d+|FAIL|vet: |build failed|cannot |package )")
# go's progress, printed on the way to an error it did not cause.
_GO_PROGRESS = re.compile(r"^go: (?:downloading|finding|extracting) ")


def _maven_error_lines(lines: Sequence[_Line], failures: Sequence[_GoalFailure]) -> list[str]:
    described = {failure.index: failure.describe() for failure in failures}
    chosen = []
    for index, line in enumerate(lines):
        if not line.text.startswith(("[ERROR]", "[FATAL]")):
            continue
        text = described.get(index) or line.message
        diagnostic = _match(line.text, "")
        chosen.append(str(diagnostic) if diagnostic else text)
    return [text for text in chosen if text and not _BANNER.match(text)]


def _go_error_lines(lines: Sequence[_Line]) -> list[str]:
    found = [
        line.text
        for line in lines
        if _GO_ERROR.match(line.text) and not _GO_PROGRESS.match(line.text)
    ]
    # A "# package" header only says where the next lines come from: it never leads.
    return sorted(found, key=lambda line: line.startswith("# "))


def build_error_lines(output: str, *, limit: int = 10) -> list[str]:
    """The build tool's own error lines, the decisive one first (see the module's text):
    Maven's ``[ERROR]`` lines without its banners, or the go command's messages; failing
    both, the last lines it printed. Never empty for non-empty output."""
    lines = _readable_lines(output)
    failures = _goal_failures(lines)
    decisive = [*_specific(_decisive_scope(lines, failures)), *(f.describe() for f in failures)]
    tool = _maven_error_lines(lines, failures) or _go_error_lines(lines)
    chosen = _distinct([*decisive, *tool], limit)
    if not chosen:
        said = [line.message for line in lines if line.message]
        chosen = [text for text in said if not _BANNER.match(text)][-limit:]
        chosen = chosen or [line.text for line in lines[-limit:]]
    return [line[:500] for line in chosen[:limit]]


# -- where a build stopped ------------------------------------------------------------------

_GO_HEADER = re.compile(r"^# (?P<package>\S+)(?: \[\S+\])?$")
_GO_BUILD_FAILED = re.compile(r"^FAIL\s+(?P<package>\S+)\s+\[(?:build|setup) failed\]$")


def describe_build_stop(output: str) -> str | None:
    """Where a build that stopped early stopped, and why, from its output; None if it
    did not say. For Maven the last ``Failed to execute goal``: "the build stopped at
    maven-plugin-plugin:3.6.0:descriptor (Unsupported class file major version 61)";
    for Go the package that did not build: "the build stopped at package m/kv
    (kv/kv.go:12:3: undefined: x)".

    Only ever words a reason: it reads lines the candidate's code may print as well."""
    lines = _readable_lines(output)
    return _maven_stop(lines) or _go_stop(lines)


def _maven_stop(lines: Sequence[_Line]) -> str | None:
    failures = _goal_failures(lines)
    if not failures:
        return None
    last = failures[-1]
    found = _specific(_decisive_scope(lines, [last]))
    cause = _shortened(found[0]) if found else last.cause
    where = f"at {last.goal}" if last.goal else last.what()
    return f"the build stopped {where}" + (f" ({cause})" if cause else "")


def _go_stop(lines: Sequence[_Line]) -> str | None:
    failed: list[str] = []
    causes: dict[str, str] = {}
    package: str | None = None
    for line in (line.text for line in lines):
        if header := _GO_HEADER.match(line):
            package = header["package"]
        elif found := _GO_BUILD_FAILED.match(line):
            failed += [found["package"]] if found["package"] not in failed else []
        elif package and (diagnostic := _match(line, "")):
            causes.setdefault(package, str(diagnostic))
    packages = failed or list(causes)  # go build prints no FAIL line, only the headers
    if not packages:
        return None
    where = f"package {packages[0]}"
    if len(packages) > 1:
        where += f" and {len(packages) - 1} other package(s)"
    # A package can fail because a package it imports did not build: that one's error.
    cause = causes.get(packages[0]) or next(iter(causes.values()), "")
    return f"the build stopped at {where}" + (f" ({_shortened(cause)})" if cause else "")
