"""Job kinds, as the packages that run jobs define them, and the registry they fill.

The job system knows no kind of its own: the App defines its kinds (grading a pull
request, slash commands, merge tracking), the executor its trial jobs, and whoever
composes a queue hands it a ``KindRegistry`` of the kinds it may meet. A kind says how
its jobs are leased (``exclusive``: one job of a subject at a time), which kinds go first
(``priority``) and on which broker queue they are announced.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from migration_evals.core.errors import ConfigError

__all__ = ["JobKind", "KindRegistry"]


@dataclass(frozen=True, slots=True)
class JobKind:
    """One kind of job: its name in the database, how it is leased, where it is announced."""

    name: str
    exclusive: bool = True  # jobs of one subject never run at once
    queue: str = "bot"  # the broker queue's suffix
    # Lower is leased first: a kind whose jobs may wait (replies to comments) must not
    # hold up one whose results people wait for (check runs).
    priority: int = 0

    def __str__(self) -> str:
        return self.name


class KindRegistry:
    """The kinds a queue may meet, by name."""

    def __init__(self, kinds: Iterable[JobKind] = ()) -> None:
        self._kinds: dict[str, JobKind] = {}
        for kind in kinds:
            self.register(kind)

    def register(self, kind: JobKind) -> JobKind:
        known = self._kinds.setdefault(kind.name, kind)
        if known != kind:
            raise ConfigError(f"job kind {kind.name!r} registered twice, differently")
        return kind

    def get(self, name: str) -> JobKind:
        try:
            return self._kinds[name]
        except KeyError:
            known = ", ".join(sorted(self._kinds)) or "none"
            raise ConfigError(f"unknown job kind {name!r} (known here: {known})") from None

    def priorities(self) -> dict[str, int]:
        """Each kind's priority by name, for the kinds whose priority is not the default."""
        return {kind.name: kind.priority for kind in self._kinds.values() if kind.priority}

    def free(self) -> list[JobKind]:
        """The kinds whose jobs are leased without waiting for others of their subject."""
        return [kind for kind in self._kinds.values() if not kind.exclusive]

    def __iter__(self) -> Iterator[JobKind]:
        return iter(list(self._kinds.values()))

    def __contains__(self, kind: object) -> bool:
        return isinstance(kind, JobKind) and self._kinds.get(kind.name) == kind
