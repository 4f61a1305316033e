"""A real server process killed in the middle of a job: after a restart the job completes once."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from migration_evals.bot.app.signature import sign
from migration_evals.core.store import Store
from tests.bot.app.conftest import (
    APP_ID,
    CONFIG,
    JAVA_BASE,
    PATCHES,
    REPO,
    SECRET,
    pull_data,
    raw,
    seed_anchored_gold,
)
from tests.conftest import ROOT
from tests.fake_github import FakeGitHub, FakePull


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_healthy(port: int, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited: {proc.stderr.read() if proc.stderr else ''}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as reply:
                if reply.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            time.sleep(0.02)
    raise AssertionError("server did not become healthy")


def _grade_jobs(db: Path) -> list[tuple[str, int]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT state, attempts FROM bot_jobs WHERE kind = 'grade'")
        return [(str(state), int(attempts)) for state, attempts in rows]


@pytest.fixture
def fake(app_key: tuple[Path, str]) -> Iterator[FakeGitHub]:
    gh = FakeGitHub(app_id=APP_ID, public_key=app_key[1])
    gh.files[(REPO, ".github/migration-evals.yml")] = CONFIG
    gh.add_pull(
        FakePull(pull_data(), (PATCHES / "good.diff").read_text(), JAVA_BASE), installation=1
    )
    yield gh
    gh.stop()


def test_killed_mid_job_then_restarted_completes_the_job_once(
    fake: FakeGitHub, app_key: tuple[Path, str], tmp_path: Path, repo_cache: Path
) -> None:
    release = fake.hold(r"/compare/")
    env = {
        **os.environ,
        "MIGRATION_EVALS_APP_ID": str(APP_ID),
        "MIGRATION_EVALS_PRIVATE_KEY_PATH": str(app_key[0]),
        "MIGRATION_EVALS_WEBHOOK_SECRET": SECRET,
        "MIGRATION_EVALS_GITHUB_API_URL": fake.start(),
        "MIGRATION_EVALS_DB_URL": f"sqlite:///{tmp_path / 'bot.db'}",
        "MIGRATION_EVALS_CACHE_DIR": str(repo_cache),
        "MIGRATION_EVALS_BOT_WORKERS": "1",
        "MIGRATION_EVALS_JOB_LEASE_SECONDS": "1",
        "MIGRATION_EVALS_SCHEDULER": "off",
        "MIGRATION_EVALS_GITHUB_WRITE_INTERVAL": "0",
    }
    port = _free_port()
    # Sandbox and judges replayed; GitHub is the fake's API, live.
    command = [
        sys.executable,
        "-m",
        "migration_evals.bot.cli",
        "serve",
        "--dev",
        "--mode",
        "replay",
    ]
    command += ["--github", "live"]
    command += ["--port", str(port)]

    anchored = Store.open(env["MIGRATION_EVALS_DB_URL"])
    seed_anchored_gold(anchored)
    anchored.close()

    def start() -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        _wait_healthy(port, proc)
        return proc

    first = start()
    body = raw("pull_request/opened.payload.json")
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/webhook",
        data=body,
        headers={
            "X-GitHub-Event": "pull_request",
            "X-GitHub-Delivery": str(uuid.uuid4()),
            "X-Hub-Signature-256": sign(SECRET, body),
            "Content-Type": "application/json",
        },
    )
    with urllib.request.urlopen(request, timeout=10) as reply:  # noqa: S310 - loopback http
        assert reply.status == 202
    # Generous bounds: a loaded machine (the suite's other worker, a build) slows the
    # server's start and its grading; a passing run never waits for them.
    assert fake.wait_arrived(r"/compare/", timeout=60), "the job never reached the middle"
    assert [run["status"] for run in fake.check_runs] == ["in_progress"]
    first.kill()  # SIGKILL: no cleanup, the lease is left behind
    first.wait(10)
    release.set()

    second = start()
    try:
        # The job is recorded done after its last write (the completed check run).
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and _grade_jobs(tmp_path / "bot.db")[0][0] == "running":
            time.sleep(0.02)
    finally:
        second.terminate()
        second.wait(10)
    assert fake.schema_errors == []
    [run] = fake.check_runs
    assert (run["status"], run["conclusion"]) == ("completed", "success")
    assert len(fake.writes("POST", "/check-runs")) == 1
    completions = [c for c in fake.writes("PATCH") if "conclusion" in (c.body or {})]
    assert len(completions) == 1
    # The announce job beside it opens check runs and grades none.
    assert _grade_jobs(tmp_path / "bot.db") == [("done", 2)]
    assert json.loads(body)["pull_request"]["head"]["sha"] == run["head_sha"]
