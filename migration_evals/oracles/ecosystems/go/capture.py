"""Keeping a ``go test -json`` stream by event (the ``go-test-json`` report format's
capture, which the sandbox is handed through the registry).

Every test's and package's actions are kept and, of what each one printed, its first and
last lines and go's own framing lines. A suite that logs tens of megabytes from passing
tests still has every result read. Once what is kept passes the cap, a test that passes or
is skipped keeps its result alone (and any ``--- FAIL:`` line it printed, which the
cross-checks weigh), and go's progress events (``run``/``pause``/``cont`` and their
``=== RUN`` lines) are no longer kept for tests that finish: tens of thousands of
table-driven subtests then fit. Only a stream whose kept results alone are over the budget
is cut.
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from dataclasses import dataclass, field

from migration_evals.oracles.ecosystems.go.framing import GO_FAILED_TEST, GO_FRAMING

__all__ = ["GO_TEST_EVENTS", "GoTestEvents"]

GO_TEST_EVENTS = "go-test-json"  # a request's ``output_events`` for go test -json streams


# go's progress lines in a test's output ("=== RUN", "=== PAUSE", "=== CONT", "=== NAME"),
# which no reader of the report weighs.
_GO_PROGRESS = re.compile(r"^\s*=== \w+")
_FINAL_ACTIONS = frozenset({"pass", "fail", "skip"})
# One decoder for every line: json.loads would look for the encoding of each one again.
_DECODER = json.JSONDecoder()
_PROGRESS_ACTIONS = frozenset({"pause", "cont"})


@dataclass
class _Printed:
    """What one test (or package) printed, held until its final action: the first and the
    last lines, go's framing lines between them, and how many others were left out."""

    head: list[bytes] = field(default_factory=list)
    middle: list[bytes] = field(default_factory=list)
    tail: deque[tuple[bytes, bool]] = field(default_factory=deque)  # (line, go's framing)
    dropped: int = 0
    size: int = 0  # bytes held
    run: bytes = b""  # its run event, held once the stream is kept compactly
    fail_lines: list[bytes] = field(default_factory=list)  # its "--- FAIL:" lines


class GoTestEvents:
    """Keeps a ``go test -json`` stream by event, within ``budget_factor`` × ``limit``
    bytes: every non-output event and every line that is not an event (build errors), and
    per test or package the first and last ``lines`` of its output events and go's framing
    lines between them. A test's output is written out, in order, just before its final
    action. Safe to feed from another thread."""

    def __init__(self, limit: int, *, lines: int = 20, budget_factor: int = 8) -> None:
        self.limit = limit
        self.lines = lines
        self.budget = limit * budget_factor
        self.total = 0
        self._over = False
        self._partial = bytearray()
        self._kept: list[bytes] = []
        self._size = 0  # bytes kept
        self._held_size = 0  # bytes held for tests that have not finished
        self._held: dict[tuple[str, str], _Printed] = {}
        self._compact = False  # what is kept has passed the cap (see the module's text)
        self._lock = threading.Lock()

    @property
    def truncated(self) -> bool:
        return self._over

    def feed(self, chunk: bytes) -> None:
        with self._lock:
            self.total += len(chunk)
            if self._over:
                return
            self._partial += chunk
            *lines, rest = self._partial.split(b"\n")
            self._partial = bytearray(rest)
            for line in lines:
                self._line(bytes(line) + b"\n")
            if len(self._partial) > self.limit:  # one line longer than the whole cap
                self._over = True

    def _line(self, line: bytes) -> None:
        event = _event(line)
        if event is None:
            self._keep(line)
            return
        key = (str(event.get("Package", "")), str(event.get("Test") or ""))
        action = event.get("Action")
        self._compact = self._compact or self._size + self._held_size > self.limit
        if self._compact and key[1] and self._progress(key, line, action, event.get("Output")):
            return
        if action == "output":
            self._hold(key, line, event.get("Output"))
            return
        if action in _FINAL_ACTIONS:
            if self._compact and key[1] and action != "fail":
                self._release_result(key)
            else:
                self._release(key)
        self._keep(line)

    def _progress(self, key: tuple[str, str], line: bytes, action: object, output: object) -> bool:
        """A test's progress event in a compact stream: its run event is held with the
        test (written out only if the test fails or never finishes), the others are not
        kept. False for any other event."""
        if action == "run":
            printed = self._held.setdefault(key, _Printed())
            printed.run = line
            printed.size += len(line)
            self._held_size += len(line)
            self._check_budget()
            return True
        progress = action == "output" and isinstance(output, str) and _GO_PROGRESS.match(output)
        return action in _PROGRESS_ACTIONS or bool(progress)

    def _hold(self, key: tuple[str, str], line: bytes, output: object) -> None:
        printed = self._held.setdefault(key, _Printed())
        if isinstance(output, str) and GO_FAILED_TEST.match(output):
            printed.fail_lines.append(line)
        printed.size += len(line)
        self._held_size += len(line)
        if len(printed.head) < self.lines:
            printed.head.append(line)
        else:
            if len(printed.tail) == self.lines:
                self._let_go(printed, *printed.tail.popleft())
            framing = isinstance(output, str) and bool(GO_FRAMING.match(output))
            printed.tail.append((line, framing))
        self._check_budget()

    def _let_go(self, printed: _Printed, line: bytes, framing: bool) -> None:
        """A line that leaves the tail window: kept if it is go's framing, else counted."""
        if framing:
            printed.middle.append(line)
            return
        printed.dropped += 1
        printed.size -= len(line)
        self._held_size -= len(line)

    def _release(self, key: tuple[str, str]) -> None:
        printed = self._held.pop(key, None)
        if printed is not None:
            self._held_size -= printed.size
            for line in _written_out(key, printed):
                self._keep(line)

    def _release_result(self, key: tuple[str, str]) -> None:
        """A test that passed or was skipped in a compact stream: of what it held, only
        the ``--- FAIL:`` lines it printed are kept."""
        printed = self._held.pop(key, None)
        if printed is not None:
            self._held_size -= printed.size
            for line in printed.fail_lines:
                self._keep(line)

    def _keep(self, line: bytes) -> None:
        self._kept.append(line)
        self._size += len(line)
        self._check_budget()

    def _check_budget(self) -> None:
        if self._size + self._held_size > self.budget:
            self._over = True

    def text(self) -> str:
        with self._lock:
            kept = list(self._kept)
            held = list(self._held.items())
            partial = bytes(self._partial)
            over, total, compact = self._over, self.total, self._compact
        for key, printed in held:  # tests that never finished (a timeout, a crash)
            kept.extend(_written_out(key, printed))
        body = _decode(b"".join(kept) + partial)
        if over:
            return body + f"\n[output truncated: over the limit of {self.budget} bytes kept]\n"
        if total > self.limit:
            how = " (passing tests by their results alone)" if compact else ""
            return body + f"\n[output kept by test{how}: {total} bytes printed in all]\n"
        return body


def _event(line: bytes) -> dict[str, object] | None:
    if not line.startswith(b"{"):
        return None
    try:
        event = _DECODER.decode(line.decode("utf-8", "replace"))
    except ValueError:
        return None
    return event if isinstance(event, dict) else None


def _written_out(key: tuple[str, str], printed: _Printed) -> list[bytes]:
    """A test's held output in order, with a line saying how much was left out."""
    lines = [*([printed.run] if printed.run else []), *printed.head, *printed.middle]
    if printed.dropped:
        package, test = key
        note: dict[str, str] = {"Action": "output", "Package": package}
        if test:
            note["Test"] = test
        note["Output"] = f"[{printed.dropped} more output line(s) not kept]\n"
        lines.append(json.dumps(note).encode() + b"\n")
    return [*lines, *(line for line, _framing in printed.tail)]


def _decode(data: bytes) -> str:
    # A cut in the middle of a multi-byte character must not fail the decode.
    return data.decode("utf-8", "replace")
