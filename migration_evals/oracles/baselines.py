"""The baseline cache: a base commit's test run, reused by every patch against it.

Keyed by repository, base commit, the content ids of the images, the command, what it
collects, the sandbox adapter and the oracle spec (its limits and timeouts), so a new
image, a changed recipe command or a changed limit is a new baseline. Concurrent trials
asking for the same baseline wait for one run. With a folder, baselines also survive the
process (live runs), and trials in other processes sharing it wait for that run too (a
second resolution of the same tree would empty the dependency cache the first filled,
under the builds reading it); without one they last for the process (replay, and
recording, where every run must reach the recording adapter once).
Fabricated runs, unpinned ones and runs that hit a limit are never cached.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from migration_evals.core.locks import NamedLocks
from migration_evals.core.model import Changeset
from migration_evals.core.ports import SandboxRequest, SandboxResult
from migration_evals.core.stamps import stamp

__all__ = ["BaselineCache"]


class BaselineCache:
    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        self._memory: dict[str, SandboxResult] = {}
        self._locks = NamedLocks(folder / ".locks" if folder else None)

    @staticmethod
    def key(changeset: Changeset, request: SandboxRequest, adapter: str, oracle: str) -> str:
        return stamp(
            {
                "repo": changeset.repo,
                "base_commit": changeset.base_commit,
                "request": request.key_data(),
                "adapter": adapter,
                "oracle": oracle,
            }
        )

    def get_or_run(
        self,
        key: str,
        run: Callable[[], SandboxResult],
        *,
        keep: Callable[[SandboxResult], bool] = lambda _result: True,
        valid: Callable[[SandboxResult], bool] = lambda _result: True,
    ) -> SandboxResult:
        """The result kept under ``key``, else ``run()``'s, kept when ``keep`` says so.

        ``valid`` re-checks a kept result against the world (a cache folder it relies on
        still exists); one that no longer holds is run again.
        """
        with self._locks.held(key):
            found = self._memory.get(key) or self._load(key)
            if found is not None and not valid(found):
                self._memory.pop(key, None)
                found = None
            if found is None:
                found = run()
                if _cacheable(found) and keep(found):
                    self._memory[key] = found
                    self._save(key, found)
            return found

    def holds(
        self, key: str, *, valid: Callable[[SandboxResult], bool] = lambda _result: True
    ) -> bool:
        """Whether ``get_or_run(key, ...)`` would answer without running: a result is kept
        under ``key`` and ``valid`` still holds for it."""
        with self._locks.held(key):
            found = self._memory.get(key) or self._load(key)
            return found is not None and valid(found)

    def _path(self, key: str) -> Path | None:
        return self.folder / f"{key}.json" if self.folder else None

    def _load(self, key: str) -> SandboxResult | None:
        path = self._path(key)
        if path is None or not path.is_file():
            return None
        try:
            result = SandboxResult.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError):
            return None  # a damaged entry is simply run again
        self._memory[key] = result
        return result

    def _save(self, key: str, result: SandboxResult) -> None:
        path = self._path(key)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(result.to_dict(), handle)
        os.replace(tmp, path)


def _cacheable(result: SandboxResult) -> bool:
    # Entries of a special kind the base's own run leaves are compared, not a limit hit.
    exceeded = result.workspace_exceeded and not result.special_entries_only
    hit_limit = result.timed_out or result.oom_killed or exceeded
    return bool(result.image_id) and not result.fabricated and not hit_limit
