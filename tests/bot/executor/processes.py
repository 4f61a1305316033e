"""Real worker processes and real runs against loopback servers, for the tests marked
``postgres`` and ``redis``: a replay workload (synthetic repositories, tier 1 real, tiers
2-4 from cassettes recorded here, as ``benchmarks/replay.py`` makes them), worker
processes started with ``migration-evals worker``, and the run as a command."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.replay import make_changesets, record
from migration_evals.bot.jobs.queue import JobQueue, build_queue
from migration_evals.core.cassette import CassetteLibrary
from migration_evals.core.model import Changeset
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from tests.conftest import ROOT, wait_for
from tests.fakes import all_kinds


@dataclass(frozen=True)
class Workload:
    changesets: list[Changeset]
    jsonl: Path
    cassettes: Path


def build_workload(folder: Path, specs: SpecSet, *, repos: int, models: int) -> Workload:
    changesets = make_changesets(folder / "repos", repos, models)
    cassettes = folder / "cassettes"
    record(specs, changesets, CassetteLibrary(cassettes), folder)
    jsonl = folder / "changesets.jsonl"
    with jsonl.open("w") as out:
        for changeset in changesets:
            line = changeset.to_dict()
            del line["source"]
            out.write(json.dumps(line) + "\n")
    return Workload(changesets, jsonl, cassettes)


@dataclass
class Cluster:
    """Worker processes and runs sharing one database, one broker and a private queue."""

    folder: Path
    workload: Workload
    db_url: str
    broker_url: str
    lease_s: float = 4.0
    redispatch_s: float = 2.0
    queue: str = field(default_factory=lambda: f"test-{uuid.uuid4().hex[:8]}")
    workers: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    runs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def env(self, **extra: str) -> dict[str, str]:
        return {
            **os.environ,
            "MIGRATION_EVALS_DB_URL": self.db_url,
            "MIGRATION_EVALS_BROKER_URL": self.broker_url,
            "MIGRATION_EVALS_QUEUE": self.queue,
            "MIGRATION_EVALS_CASSETTES_DIR": str(self.workload.cassettes),
            "MIGRATION_EVALS_TRIAL_LEASE_SECONDS": str(self.lease_s),
            "MIGRATION_EVALS_REDISPATCH_SECONDS": str(self.redispatch_s),
            **extra,
        }

    def _command(self, *argv: str, name: str, **env: str) -> subprocess.Popen[bytes]:
        log = (self.folder / f"{name}.log").open("wb")
        return subprocess.Popen(
            [sys.executable, "-m", "migration_evals.bot.cli", *argv],
            cwd=ROOT,
            env=self.env(**env),
            stdout=log,
            stderr=subprocess.STDOUT,
        )

    def start_worker(self, name: str, concurrency: int = 1, **env: str) -> subprocess.Popen[bytes]:
        cache = str(self.folder / f"cache-{name}")
        process = self._command(
            "worker", "-c", str(concurrency), name=name, MIGRATION_EVALS_CACHE_DIR=cache, **env
        )
        self.workers[name] = process
        return process

    def start_run(self, *extra: str) -> subprocess.Popen[bytes]:
        """``run --executor celery`` of the workload, with ``extra`` options."""
        out = self.folder / "run.json"
        run = self._command(
            "run",
            str(self.workload.jsonl),
            "--executor",
            "celery",
            "--json",
            "--out",
            str(out),
            *extra,
            name="run",
            MIGRATION_EVALS_CACHE_DIR=str(self.folder / "cache-run"),
        )
        self.runs.append(run)
        return run

    def finish_run(self, run: subprocess.Popen[bytes], timeout_s: float = 240.0) -> dict[str, Any]:
        try:
            code = run.wait(timeout_s)
        except subprocess.TimeoutExpired:
            run.kill()
            raise AssertionError(f"the run did not finish\n{self.logs()}") from None
        assert code == 0, self.logs()
        document: dict[str, Any] = json.loads((self.folder / "run.json").read_text())
        return document

    def log(self, name: str) -> str:
        return (self.folder / f"{name}.log").read_text(errors="replace")[-4000:]

    def logs(self) -> str:
        """The tail of every process's output, for a failure message."""
        names = sorted(path.stem for path in self.folder.glob("*.log"))
        return "\n".join(f"--- {name}.log ---\n{self.log(name)}" for name in names)

    def wait_for(self, what: str, check: Callable[[], bool], timeout_s: float) -> None:
        try:
            wait_for(what, check, timeout_s)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{self.logs()}") from None

    def kill(self, name: str) -> None:
        process = self.workers.pop(name)
        process.send_signal(signal.SIGKILL)
        process.wait()

    def stop_all(self) -> None:
        for run in self.runs:  # a failed test can leave one watching a dropped schema
            if run.poll() is None:
                run.kill()
                run.wait()
        for process in self.workers.values():
            process.send_signal(signal.SIGTERM)
        for process in self.workers.values():
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.workers.clear()

    @contextmanager
    def store(self) -> Iterator[tuple[Store, JobQueue]]:
        store = Store.open(self.db_url)
        try:
            yield store, build_queue(store, all_kinds())
        finally:
            store.close()

    def written(self) -> int:
        """Trials written so far, over every run."""
        with self.store() as (store, _queue):
            return sum(len(store.ledger.trials_written(run["run_id"])) for run in store.runs.all())
