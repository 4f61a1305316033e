"""Running git: one wrapper that never prompts, never hangs and translates failures.

Failures raise ``RepositoryError`` (infrastructure) unless the caller asks for the
completed process to judge the exit code itself (``check=False``), as tier 1 does for
``git apply``, whose failure is the candidate's.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

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
        raise RepositoryError(f"git {' '.join(args[:2])} timed out after {timeout:.0f}s") from exc
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
    kept by a watchdog thread. Given a timeout, subprocess reaps a child that has closed its
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
        expired = threading.Event()

        def kill() -> None:
            expired.set()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)

        watchdog = threading.Timer(timeout, kill)
        watchdog.daemon = True
        watchdog.start()
        try:
            out, err = process.communicate(input)
        finally:
            watchdog.cancel()
    if expired.is_set():
        raise subprocess.TimeoutExpired(command, timeout, out, err)
    return subprocess.CompletedProcess(command, process.returncode, out, err)
