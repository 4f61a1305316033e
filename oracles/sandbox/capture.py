"""Capturing a sandboxed command's output with a size cap.

The whole stream is drained (a writer blocked on a full pipe would stall the run until
its timeout) but only the first ``limit`` bytes are kept; the rest is counted.
"""

from __future__ import annotations

import threading

__all__ = ["OutputCap"]


class OutputCap:
    """Keeps the first ``limit`` bytes written to it; safe to feed from another thread."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.total = 0
        self._chunks: list[bytes] = []
        self._kept = 0
        self._lock = threading.Lock()

    def feed(self, chunk: bytes) -> None:
        with self._lock:
            self.total += len(chunk)
            room = self.limit - self._kept
            if room > 0:
                piece = chunk[:room]
                self._chunks.append(piece)
                self._kept += len(piece)

    @property
    def truncated(self) -> bool:
        return self.total > self.limit

    def text(self) -> str:
        with self._lock:
            data = b"".join(self._chunks)
        # A cut in the middle of a multi-byte character must not fail the decode.
        text = data.decode("utf-8", "replace")
        if self.truncated:
            dropped = self.total - self._kept
            text += f"\n[output truncated: {dropped} more bytes not kept]\n"
        return text
