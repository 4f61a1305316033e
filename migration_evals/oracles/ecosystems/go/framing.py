"""go test's own lines among a test's output, as the capture, the report and the
cross-checks read them: one definition for all three, and the events of a
``go test -json`` stream."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

__all__ = ["GO_FAILED_TEST", "GO_FRAMING", "json_events"]

# cmd/go's and the testing package's framing: "=== RUN", "--- FAIL: T", "ok  pkg",
# "FAIL pkg", "?   pkg". What a test printed itself is anything else.
GO_FRAMING = re.compile(r"^\s*(?:=== \w+|--- \w+|(?:ok|FAIL|PASS|\?)(?:\s|$))")
# The line the testing package prints for a failed test, naming it.
GO_FAILED_TEST = re.compile(r"^\s*--- FAIL: (?P<test>\S+)")


def json_events(output: str) -> Iterator[dict[str, Any]]:
    """The ``go test -json`` events of ``output``, in order; build output and any other
    line that is not a JSON object is passed over."""
    for line in output.splitlines():
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict):
            yield event
