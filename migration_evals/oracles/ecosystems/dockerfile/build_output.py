"""An image build's output (the classic builder's ``Step N/M : ...`` lines) as evidence
on the Dockerfile line of the step that failed."""

from __future__ import annotations

import re
from collections.abc import Sequence

from migration_evals.core.model import Evidence

__all__ = ["parse_build_output"]

_STEP = re.compile(r"^Step (?P<step>\d+)/(?P<of>\d+) : (?P<instruction>.+)$")


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
