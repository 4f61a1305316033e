"""Turning compiler output (javac, Maven, go build/vet) into file:line evidence.

Paths come back relative to the repository so a check run can annotate them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.model import Evidence
from core.ports import SANDBOX_WORKDIR

__all__ = ["parse_build_output", "parse_compiler_output"]

_MAVEN = re.compile(r"^\[ERROR\] (?P<path>\S+\.java):\[(?P<line>\d+),(?P<col>\d+)\] (?P<msg>.+)$")
_JAVAC = re.compile(r"^(?P<path>\S+\.java):(?P<line>\d+): error: (?P<msg>.+)$")
_GO = re.compile(r"^(?:vet: )?(?P<path>\S+\.go):(?P<line>\d+)(?::(?P<col>\d+))?: (?P<msg>.+)$")


_STEP = re.compile(r"^Step (?P<step>\d+)/(?P<of>\d+) : (?P<instruction>.+)$")


def _relative(path: str) -> str:
    prefix = SANDBOX_WORKDIR.rstrip("/") + "/"
    if path.startswith(prefix):
        path = path[len(prefix) :]
    return path.removeprefix("./")


def _match(line: str) -> Evidence | None:
    for pattern in (_MAVEN, _JAVAC, _GO):
        found = pattern.match(line)
        if found:
            column = found.groupdict().get("col")
            return Evidence(
                message=found["msg"].strip(),
                path=_relative(found["path"]),
                line=int(found["line"]),
                column=int(column) if column else None,
            )
    return None


def parse_compiler_output(output: str, *, limit: int = 50) -> list[Evidence]:
    """Every distinct compiler diagnostic in ``output``, at most ``limit`` of them."""
    found: dict[tuple[str | None, int | None, str], Evidence] = {}
    for raw in output.splitlines():
        evidence = _match(raw.strip())
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
