"""Locks by name that hold across threads and across processes sharing a folder.

Graders on one machine share their caches (clones, snapshots, resolutions and base runs):
one process must not empty or fill what another is filling. A name's lock is a thread
lock within a process and an exclusive ``flock`` on ``<folder>/<name>.lock`` between
processes; the kernel releases the latter when a holder dies, so a crash leaves no lock.
"""

from __future__ import annotations

import fcntl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["NamedLocks"]


class NamedLocks:
    """Locks by name; between processes only with a ``folder`` (else within this one)."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    @contextmanager
    def held(self, name: str) -> Iterator[None]:
        with self._guard:
            lock = self._locks.setdefault(name, threading.Lock())
        with lock:
            if self.folder is None:
                yield
                return
            self.folder.mkdir(parents=True, exist_ok=True)
            with (self.folder / f"{name}.lock").open("w") as handle:
                fcntl.flock(handle, fcntl.LOCK_EX)
                try:
                    yield
                finally:
                    fcntl.flock(handle, fcntl.LOCK_UN)
