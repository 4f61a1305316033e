"""Answers worked out from a tree's files, kept with every read that made them.

Every trial on one base commit asks the same questions of the base's build files (the
test settings of each module, its source roots, the JDK it builds on), and a patch that
leaves those files alone asks them again of its own tree. ``ReadsMemo`` keeps each
answer with every path its working-out read and the bytes each held (``None`` for a path
found empty), and gives it again only to a tree where each of those paths holds the same
bytes: working it out there would read the same files and come to the same answer. A
tree that differs anywhere it was read (a parent POM the patch changed, a config file it
added) is worked out afresh, never given another tree's answer.

The working-out must depend on nothing but its key and what it reads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["Read", "ReadsMemo"]

T = TypeVar("T")
Read = Callable[[str], bytes | None]
_Reads = tuple[tuple[str, bytes | None], ...]


class _Recorded:
    """A tree's reads: each path read and what it held, in order."""

    def __init__(self, read: Read) -> None:
        self._read = read
        self.seen: list[tuple[str, bytes | None]] = []

    def __call__(self, path: str) -> bytes | None:
        content = self._read(path)
        self.seen.append((path, content))
        return content


class ReadsMemo(Generic[T]):
    """Answers by key and by the bytes they were read from: the last ``size`` keys, and
    for each the last ``variants`` trees that answered differently (repositories laid out
    alike share keys such as the root ``pom.xml``). Safe to share between threads."""

    def __init__(self, size: int = 256, variants: int = 4) -> None:
        self._size = size
        self._variants = variants
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, list[tuple[_Reads, T]]] = OrderedDict()

    def answer(self, key: Hashable, read: Read, make: Callable[[Read], T]) -> T:
        """``make(read)``, or the answer it gave a tree that reads the same at every path
        it read. ``make`` must read the tree only through the function it is given."""
        with self._lock:
            kept = list(self._entries.get(key, ()))
            if kept:
                self._entries.move_to_end(key)
        for reads, found in kept:
            if all(read(path) == content for path, content in reads):
                return found
        recorded = _Recorded(read)
        found = make(recorded)
        with self._lock:
            variants = self._entries.setdefault(key, [])
            variants.insert(0, (tuple(recorded.seen), found))
            del variants[self._variants :]
            self._entries.move_to_end(key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return found
