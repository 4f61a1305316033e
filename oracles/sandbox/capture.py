"""Capturing a sandboxed command's output with a size cap.

The whole stream is drained (a writer blocked on a full pipe would stall the run until
its timeout) but only ``limit`` bytes are kept: the head of the output and its tail,
where build tools print their summaries (Maven's reactor summary and totals, go test's
last ``ok``/``FAIL`` lines and the package's final event). What falls between is counted,
and the kept text says where and how much was cut. Memory stays bounded whatever the
command prints: the tail is a window that slides over the stream.
"""

from __future__ import annotations

import threading

__all__ = ["OutputCap"]

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


def _decode(data: bytes) -> str:
    # A cut in the middle of a multi-byte character must not fail the decode.
    return data.decode("utf-8", "replace")
