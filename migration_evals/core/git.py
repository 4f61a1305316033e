"""Running git: one wrapper that never prompts, never hangs and translates failures.

Failures raise ``RepositoryError`` (infrastructure) unless the caller asks for the
completed process to judge the exit code itself (``check=False``), as tier 1 does for
``git apply``, whose failure is the candidate's.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from migration_evals.core.errors import RepositoryError

__all__ = ["git", "git_env"]

_BASE_ENV = {
    "GIT_TERMINAL_PROMPT": "0",  # never wait for credentials
    "GIT_ASKPASS": "true",
    "SSH_ASKPASS": "true",
    "GIT_CONFIG_NOSYSTEM": "1",
    "LC_ALL": "C",
}


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment every git process gets: the caller's plus the no-prompt guards."""
    env = dict(os.environ)
    env.update(_BASE_ENV)
    if extra:
        env.update(extra)
    return env


def git(
    args: Sequence[str],
    *,
    cwd: Path | None = None,
    input: bytes | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 600.0,
    check: bool = True,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git args``; raise ``RepositoryError`` on failure when ``check``."""
    command = ["git", *args]
    try:
        done = _run(command, cwd=cwd, input=input, env=git_env(env), timeout=timeout)
    except FileNotFoundError as exc:
        raise RepositoryError("git is not installed or not on PATH") from exc
    except subprocess.TimeoutExpired as exc:
        raise RepositoryError(f"git {' '.join(args[:2])} timed out after {timeout:g}s") from exc
    if check and done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        message = detail[-1] if detail else f"exit code {done.returncode}"
        raise RepositoryError(f"git {' '.join(args[:2])} failed: {message}")
    return done


def _run(
    command: list[str],
    *,
    cwd: Path | None,
    input: bytes | None,
    env: Mapping[str, str],
    timeout: float,
) -> subprocess.CompletedProcess[bytes]:
    """``subprocess.run(command, capture_output=True, timeout=timeout)``, with the deadline
    kept by the watchdog. Given a timeout, subprocess reaps a child that has closed its
    output by polling, asleep a millisecond or more between polls: longer than a short git
    call itself, on every call tier 1 makes. git runs in a process group of its own, which
    the watchdog kills whole, so that nothing it started (a hook, an alias, ssh) holds the
    output open past the deadline."""
    stdin = subprocess.PIPE if input is not None else None
    with subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    ) as process:
        watchdog = _Watchdog.of_this_process()
        watch = watchdog.watch(process.pid, timeout)
        try:
            out, err = process.communicate(input)
        finally:
            watchdog.end(watch)
    if watch.expired:
        raise subprocess.TimeoutExpired(command, timeout, out, err)
    return subprocess.CompletedProcess(command, process.returncode, out, err)


@dataclass(eq=False)
class _Watch:
    """A git process group with a deadline."""

    group: int
    due: float
    ended: bool = False  # its output is in: never killed
    expired: bool = False  # killed at its deadline


class _Watchdog:
    """The thread of a process that kills git process groups at their deadlines.

    A thread for each call (a ``threading.Timer``) made every call wait for a thread to
    start, a fifth of a millisecond and more on a busy machine: about as long as a short
    git call. One thread, started on first use, sleeps until the earliest deadline."""

    _by_process: ClassVar[dict[int, _Watchdog]] = {}

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._due: list[tuple[float, int, _Watch]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None
        self._ended = 0  # watches in the heap whose git has finished

    @classmethod
    def of_this_process(cls) -> _Watchdog:
        """This process's watchdog: a forked child makes its own, the parent's thread
        not running there."""
        pid = os.getpid()
        found = cls._by_process.get(pid)
        return found if found is not None else cls._by_process.setdefault(pid, cls())

    def watch(self, group: int, timeout: float) -> _Watch:
        watch = _Watch(group, time.monotonic() + timeout)
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="git-watchdog", daemon=True)
                self._thread.start()
            if not self._due or watch.due < self._due[0][0]:
                self._lock.notify()  # the thread sleeps until a later deadline
            heapq.heappush(self._due, (watch.due, next(self._order), watch))
        return watch

    def end(self, watch: _Watch) -> None:
        """``watch``'s git has finished. Finished watches leave the heap once they are most
        of it: a busy process makes thousands of calls within one ten-minute deadline."""
        with self._lock:
            watch.ended = True
            self._ended += 1
            if self._ended > 64 and 2 * self._ended > len(self._due):
                self._due = [entry for entry in self._due if not entry[2].ended]
                heapq.heapify(self._due)
                self._ended = 0

    def _run(self) -> None:
        with self._lock:
            while True:
                now = time.monotonic()
                while self._due and self._due[0][0] <= now:
                    watch = heapq.heappop(self._due)[2]
                    if watch.ended:
                        self._ended -= 1
                    else:
                        watch.expired = True
                        with contextlib.suppress(ProcessLookupError):
                            os.killpg(watch.group, signal.SIGKILL)
                self._lock.wait(self._due[0][0] - now if self._due else None)
