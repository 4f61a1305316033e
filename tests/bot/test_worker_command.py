"""``worker`` and ``run --executor celery`` refuse clearly, before writing anything, when
the database or the broker is away; the settings behind them come from the environment."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from migration_evals.bot.cli import main
from migration_evals.bot.settings import settings_from_env
from migration_evals.core.errors import ConfigError
from migration_evals.core.settings import Executor
from tests.conftest import ROOT, free_port

JAVA = ROOT / "examples" / "changesets" / "java.jsonl"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MIGRATION_EVALS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MIGRATION_EVALS_DB_URL", f"sqlite:///{tmp_path / 'results.db'}")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _down_postgres() -> str:
    return f"postgresql+psycopg://evals:pw@127.0.0.1:{free_port()}/evals"


def test_a_celery_run_without_a_broker_writes_no_run(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broker = f"redis://127.0.0.1:{free_port()}/0"
    code = main(["run", str(JAVA), "--executor", "celery", "--broker", broker])
    # Beside the unkeyed-ledger warning (no MIGRATION_EVALS_LEDGER_KEY here), one line.
    [err] = [line for line in capsys.readouterr().err.splitlines() if "LEDGER_KEY" not in line]
    assert code == 1
    assert "cannot reach the broker at redis://127.0.0.1" in err
    with sqlite3.connect(env / "results.db") as db:
        assert db.execute("SELECT count(*) FROM runs").fetchone() == (0,)
        assert db.execute("SELECT count(*) FROM bot_jobs").fetchone() == (0,)


def test_a_celery_run_without_its_database_is_one_clear_line(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", str(JAVA), "--executor", "celery", "--db", _down_postgres()])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1
    assert "cannot open database postgresql+psycopg://evals:***@127.0.0.1" in err


def test_a_worker_without_its_database_stops_at_once(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["worker", "--db", _down_postgres()])
    err = capsys.readouterr().err
    assert code == 1 and "cannot open database" in err and "refused" in err


def test_scale_settings_come_from_the_environment() -> None:
    settings = settings_from_env(
        {
            "MIGRATION_EVALS_EXECUTOR": "celery",
            "MIGRATION_EVALS_BROKER_URL": "redis://redis:6379/2",
            "MIGRATION_EVALS_QUEUE": "staging",
            "MIGRATION_EVALS_TRIAL_LEASE_SECONDS": "90",
            "MIGRATION_EVALS_REDISPATCH_SECONDS": "30",
            "MIGRATION_EVALS_TRIAL_MAX_ATTEMPTS": "4",
        }
    )
    scale = settings.scale
    assert scale.executor is Executor.CELERY and scale.broker_url == "redis://redis:6379/2"
    assert (scale.queue, scale.lease_s, scale.redispatch_s, scale.max_attempts) == (
        "staging",
        90.0,
        30.0,
        4,
    )
    assert settings_from_env({}).scale.executor is Executor.EMBEDDED


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("EXECUTOR", "threads", "is not one of embedded, celery"),
        ("TRIAL_LEASE_SECONDS", "0", "must be positive"),
        ("REDISPATCH_SECONDS", "soon", "must be a number"),
    ],
)
def test_bad_scale_settings_are_refused(name: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        settings_from_env({f"MIGRATION_EVALS_{name}": value})
