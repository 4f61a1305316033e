"""go test's own lines among a test's output, as the capture, the report and the
cross-checks read them: one definition for all three."""

from __future__ import annotations

import re

__all__ = ["GO_FAILED_TEST", "GO_FRAMING"]

# cmd/go's and the testing package's framing: "=== RUN", "--- FAIL: T", "ok  pkg",
# "FAIL pkg", "?   pkg". What a test printed itself is anything else.
GO_FRAMING = re.compile(r"^\s*(?:=== \w+|--- \w+|(?:ok|FAIL|PASS|\?)(?:\s|$))")
# The line the testing package prints for a failed test, naming it.
GO_FAILED_TEST = re.compile(r"^\s*--- FAIL: (?P<test>\S+)")
