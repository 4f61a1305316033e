"""Turning compiler output (javac, Maven, go build/vet) into file:line evidence.

Paths come back relative to the repository so a check run can annotate them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.model import Evidence
from core.ports import SANDBOX_WORKDIR

__all__ = ["build_error_lines", "parse_build_output", "parse_compiler_output"]

_MAVEN = re.compile(r"^\[ERROR\] (?P<path>\S+\.java):\[(?P<line>\d+),(?P<col>\d+)\] (?P<msg>.+)$")
_JAVAC = re.compile(r"^(?P<path>\S+\.java):(?P<line>\d+): error: (?P<msg>.+)$")
_GO = re.compile(r"^(?:vet: )?(?P<path>\S+\.go):(?P<line>\d+)(?::(?P<col>\d+))?: (?P<msg>.+)$")


_STEP = re.compile(r"^Step (?P<step>\d+)/(?P<of>\d+) : (?P<instruction>.+)$")


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
    for raw in output.splitlines():
        evidence = _match(raw.strip(), root)
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


_MAVEN_NOISE = re.compile(
    r"^\[ERROR\] *(-> \[Help|To see the full stack|Re-run Maven|For more information|"
    r"\[Help \d|After correcting|  mvn <args>|$)"
)
_GO_ERROR = re.compile(r"^(go: |# |\S+\.go:\d+|FAIL|vet: |build failed|cannot |package )")


def build_error_lines(output: str, *, limit: int = 10) -> list[str]:
    """The build tool's own error lines: Maven's ``[ERROR]`` lines, or the go command's
    messages; failing both, the last lines it printed. Never empty for non-empty output."""
    lines = [line.rstrip() for line in output.splitlines() if line.strip()]
    maven = [line for line in lines if line.startswith("[ERROR]") and not _MAVEN_NOISE.match(line)]
    chosen = maven or [line for line in lines if _GO_ERROR.match(line)] or lines[-limit:]
    return [line[:500] for line in chosen[:limit]]
