"""The one git wrapper: input and output, failures as infrastructure errors, and a deadline
that ends a git that hangs."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest

from migration_evals.core.errors import RepositoryError
from migration_evals.core.git import _Watchdog, git


def test_input_reaches_git_and_its_output_comes_back(tmp_path: Path) -> None:
    done = git(["hash-object", "--stdin"], cwd=tmp_path, input=b"hello\n")
    expected = hashlib.sha1(b"blob 6\x00hello\n").hexdigest()  # noqa: S324 - git's own id
    assert done.returncode == 0
    assert done.stdout.decode().strip() == expected


def test_a_failure_is_a_repository_error_naming_gits_last_line(tmp_path: Path) -> None:
    # In a repository, so git's last line is its own (outside one, it depends on where the
    # search for one stops, a file system's boundary, say).
    git(["init", "-q"], cwd=tmp_path)
    with pytest.raises(RepositoryError, match="git rev-parse --verify failed: fatal: Needed"):
        git(["rev-parse", "--verify", "nothing-here"], cwd=tmp_path)


def test_without_check_the_caller_reads_the_exit_code_and_stderr(tmp_path: Path) -> None:
    done = git(["rev-parse", "--verify", "nothing-here"], cwd=tmp_path, check=False)
    assert done.returncode != 0
    assert b"fatal" in done.stderr


def test_a_git_that_hangs_is_killed_at_its_deadline(tmp_path: Path) -> None:
    git(["--version"])  # the watchdog now also holds a deadline ten minutes away
    started = time.monotonic()
    with pytest.raises(RepositoryError, match=r"git -c alias.nap=!sleep 30 timed out after 0.1s"):
        git(["-c", "alias.nap=!sleep 30", "nap"], cwd=tmp_path, timeout=0.1)
    assert time.monotonic() - started < 10  # killed, not waited for


def test_a_forked_child_keeps_its_gits_deadlines(tmp_path: Path) -> None:
    git(["--version"])  # the parent's watchdog thread is running; a child has none
    child = os.fork()
    if child == 0:
        try:
            git(["-c", "alias.nap=!sleep 30", "nap"], cwd=tmp_path, timeout=0.1)
        except RepositoryError:
            os._exit(0)
        finally:
            os._exit(1)
    started = time.monotonic()
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0  # timed out in the child
    assert time.monotonic() - started < 10


def test_finished_calls_do_not_pile_up_under_a_ten_minute_deadline(tmp_path: Path) -> None:
    # One call more than the bound below: uncompacted, these deadlines alone would break it.
    for _ in range(2 * 64 + 2):
        git(["--version"])
    watchdog = _Watchdog.of_this_process()
    assert len(watchdog._due) <= 2 * 64 + 1  # compacted, not 130 deadlines ten minutes away
    # A deadline among the finished ones still fires.
    with pytest.raises(RepositoryError, match=r"timed out after 0\.1s"):
        git(["-c", "alias.nap=!sleep 30", "nap"], cwd=tmp_path, timeout=0.1)
