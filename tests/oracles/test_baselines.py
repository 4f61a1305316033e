"""The baseline cache: one run per repository, commit, image and command."""

from __future__ import annotations

import multiprocessing
import threading
import time
from datetime import date
from pathlib import Path

from migration_evals.core.model import Changeset, FabricatedMark
from migration_evals.core.ports import SandboxAction, SandboxRequest, SandboxResult
from migration_evals.oracles.baselines import BaselineCache

CHANGESET = Changeset("c", "repo", "a" * 40, "", "java8-to-17", "gpt-5", date(2021, 1, 1))


def _request(image_id: str = "sha256:1") -> SandboxRequest:
    return SandboxRequest(
        SandboxAction.RUN, "img", ("mvn", "test"), "tree", pinned=(("img", image_id),)
    )


def _key(image_id: str = "sha256:1") -> str:
    return BaselineCache.key(CHANGESET, _request(image_id), "sandbox:docker/1", "oracle-stamp")


def test_a_baseline_runs_once_and_is_reused() -> None:
    cache, calls = BaselineCache(), []

    def run() -> SandboxResult:
        calls.append(1)
        return SandboxResult(0, image_id="sha256:1")

    assert cache.get_or_run(_key(), run) == cache.get_or_run(_key(), run)
    assert len(calls) == 1


def test_the_cache_says_whether_it_would_answer_without_running(tmp_path: Path) -> None:
    cache = BaselineCache(tmp_path)
    assert not cache.holds(_key())
    cache.get_or_run(_key(), lambda: SandboxResult(0, image_id="sha256:1"))
    assert cache.holds(_key())
    assert BaselineCache(tmp_path).holds(_key())  # kept in its folder too
    assert not cache.holds(_key(), valid=lambda _result: False)  # its cache folder is gone
    assert not cache.holds(_key("sha256:2"))


def test_a_new_image_repository_or_spec_is_a_new_baseline() -> None:
    assert _key("sha256:1") != _key("sha256:2")
    other = BaselineCache.key(
        Changeset("c", "other", "a" * 40, "", "java8-to-17", "gpt-5", date(2021, 1, 1)),
        _request(),
        "sandbox:docker/1",
        "oracle-stamp",
    )
    assert other != _key()
    spec_changed = BaselineCache.key(CHANGESET, _request(), "sandbox:docker/1", "new-stamp")
    assert spec_changed != _key()


def test_timeouts_and_fabricated_runs_are_not_cached() -> None:
    cache, calls = BaselineCache(), []
    mark = FabricatedMark("sandbox", "k", "p", "miss")
    results = iter(
        [
            SandboxResult(1, image_id="sha256:1", timed_out=True),
            SandboxResult(0, image_id="sha256:1", fabricated=(mark,)),
            SandboxResult(0, image_id="sha256:1"),
        ]
    )

    def run() -> SandboxResult:
        calls.append(1)
        return next(results)

    for _ in range(4):
        cache.get_or_run(_key(), run)
    assert len(calls) == 3


def test_a_folder_keeps_baselines_across_processes(tmp_path: Path) -> None:
    BaselineCache(tmp_path).get_or_run(_key(), lambda: SandboxResult(0, "x", image_id="sha256:1"))
    again = BaselineCache(tmp_path).get_or_run(_key(), lambda: SandboxResult(9))
    assert (again.exit_code, again.output) == (0, "x")


def test_concurrent_trials_wait_for_one_run() -> None:
    cache, calls = BaselineCache(), []

    def slow() -> SandboxResult:
        calls.append(1)
        time.sleep(0.2)
        return SandboxResult(0, image_id="sha256:1")

    threads = [threading.Thread(target=cache.get_or_run, args=(_key(), slow)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1


def _grade_in_a_process(folder: Path, runs: Path) -> None:
    def slow() -> SandboxResult:
        with runs.open("a") as handle:
            handle.write("run\n")
        time.sleep(0.3)
        return SandboxResult(0, image_id="sha256:1")

    BaselineCache(folder).get_or_run(_key(), slow)


def test_processes_sharing_a_folder_wait_for_one_run(tmp_path: Path) -> None:
    # Two graders on one machine: the second must not run (a resolution would empty the
    # dependency cache the first is filling) but take the first's result.
    runs = tmp_path / "runs.txt"
    context = multiprocessing.get_context("fork")
    workers = [
        context.Process(target=_grade_in_a_process, args=(tmp_path / "cache", runs))
        for _ in range(2)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    assert [worker.exitcode for worker in workers] == [0, 0]
    assert runs.read_text() == "run\n"
