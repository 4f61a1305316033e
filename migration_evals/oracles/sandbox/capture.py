"""Capturing a sandboxed command's output with a size cap.

The whole stream is drained (a writer blocked on a full pipe would stall the run until
its timeout) but only ``limit`` bytes are kept: the head of the output and its tail,
where build tools print their summaries and totals. What falls between is counted, and
the kept text says where and how much was cut. Memory stays bounded whatever the command
prints: the tail is a window that slides over the stream.

A request may ask for its output to be kept another way (``SandboxRequest.output_events``,
a report format's name for its event stream, such as a test runner's stream kept by
test). The sandbox knows no such format itself: it is handed ``Captures``, each name's
capture factory, the way the registry gate is handed its routes (the ecosystems declare
them on their report formats; the bot collects them and builds the sandbox with them).
A name the sandbox was not handed is an infrastructure error, never the plain capture.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Protocol

from migration_evals.core.errors import SandboxError

__all__ = ["Capture", "CaptureFactory", "Captures", "OutputCap", "capture_for"]

# The share of the cap kept from the end of the output (the rest is its head).
_TAIL_SHARE = 4


class OutputCap:
    """Keeps the first and the last bytes written to it, ``limit`` in all; safe to feed
    from another thread."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.total = 0
        self._tail_limit = limit // _TAIL_SHARE
        self._head_limit = limit - self._tail_limit
        self._head = bytearray()
        self._tail = bytearray()
        self._lock = threading.Lock()

    def feed(self, chunk: bytes) -> None:
        with self._lock:
            self.total += len(chunk)
            room = self._head_limit - len(self._head)
            if room > 0:
                self._head += chunk[:room]
                chunk = chunk[room:]
            if not chunk or not self._tail_limit:
                return
            self._tail += chunk[-self._tail_limit :]
            # Trimmed in batches, so a stream of small chunks costs no copy per chunk.
            if len(self._tail) > 2 * self._tail_limit:
                del self._tail[: len(self._tail) - self._tail_limit]

    @property
    def truncated(self) -> bool:
        return self.total > self.limit

    def text(self) -> str:
        with self._lock:
            head = bytes(self._head)
            tail = bytes(self._tail[-self._tail_limit :]) if self._tail_limit else b""
            total = self.total
        if total <= self.limit:
            return _decode(head + tail)
        # The tail starts at a line of its own, so line-based readers see whole lines.
        start = tail.find(b"\n") + 1
        if 0 < start < len(tail):
            tail = tail[start:]
        dropped = total - len(head) - len(tail)
        marker = (
            f"\n[output truncated: {dropped} bytes not kept here; the last {len(tail)} follow]\n"
        )
        return _decode(head) + marker + _decode(tail)


class Capture(Protocol):
    """What the sandbox feeds a command's output into and reads back."""

    def feed(self, chunk: bytes) -> None: ...

    @property
    def truncated(self) -> bool: ...

    def text(self) -> str: ...


# A capture kept within ``limit`` bytes, and the captures a sandbox is handed, by the
# ``output_events`` name a request asks for.
CaptureFactory = Callable[[int], Capture]
Captures = Mapping[str, CaptureFactory]


def capture_for(events: str, limit: int, captures: Captures) -> Capture:
    """The capture for a request's ``output_events``: "" is plain output (head and tail),
    any other name must be one of ``captures``."""
    if not events:
        return OutputCap(limit)
    factory = captures.get(events)
    if factory is None:
        known = ", ".join(sorted(captures)) or "none"
        raise SandboxError(
            f"the sandbox has no capture for output events {events!r} (it has: {known})"
        )
    return factory(limit)


def _decode(data: bytes) -> str:
    # A cut in the middle of a multi-byte character must not fail the decode.
    return data.decode("utf-8", "replace")
