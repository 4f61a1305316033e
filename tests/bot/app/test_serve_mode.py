"""``serve`` and ``worker`` grade live unless a mode is asked for, and say which."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec as ec_key

from migration_evals.bot.app.context import replayed
from migration_evals.bot.app.service import BotService, build_service, describe
from migration_evals.bot.cli import build_parser, main
from migration_evals.bot.commands.options import server_settings_from_args, settings_from_args
from migration_evals.bot.commands.serve import startup_line
from migration_evals.bot.exits import ExitStatus
from migration_evals.bot.grading import Grading
from migration_evals.bot.plan import RunPlan
from migration_evals.core.errors import ConfigError
from migration_evals.core.settings import CassetteMode
from migration_evals.core.specs import SpecSet
from tests.bot.app.conftest import APP_ID, SECRET, Harness, raw
from tests.fake_github import FakeGitHub
from tests.fake_judge_api import Canned, FakeJudgeAPI, api_error, running_fake_api

MODELS = "/v1/models"


@pytest.fixture
def judge_api() -> Iterator[FakeJudgeAPI]:
    """The judges' API, for the health page's probe of it (a model list answers 200)."""
    with running_fake_api() as api:
        api.script(MODELS, *[Canned(200, {"data": []})] * 20)
        yield api


@pytest.fixture
def live_github(app_key: tuple[Path, str]) -> Iterator[FakeGitHub]:
    fake = FakeGitHub(app_id=APP_ID, public_key=app_key[1])
    fake.start()
    yield fake
    fake.stop()


@pytest.fixture
def serve(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    app_key: tuple[Path, str],
    judge_api: FakeJudgeAPI,
    live_github: FakeGitHub,
) -> Iterator[Callable[..., BotService]]:
    """``serve ARGS`` as far as building its service, in an environment with no mode;
    "live" is a fake GitHub and a fake judges' API (the health page asks both)."""
    for name in ("MIGRATION_EVALS_MODE", "MIGRATION_EVALS_SANDBOX_MODE", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-never-sent")  # live serving needs one
    monkeypatch.setenv("ANTHROPIC_BASE_URL", judge_api.url)
    env = {
        "GITHUB_API_URL": f"http://127.0.0.1:{live_github._port}",
        "APP_ID": str(APP_ID),
        "PRIVATE_KEY_PATH": str(app_key[0]),
        "WEBHOOK_SECRET": SECRET,
        "DB_URL": f"sqlite:///{tmp_path / 'serve.db'}",
        "BOT_WORKERS": "0",
        "SCHEDULER": "off",
        "EXECUTOR": "embedded",
    }
    for name, value in env.items():
        monkeypatch.setenv(f"MIGRATION_EVALS_{name}", value)
    made: list[BotService] = []

    def build(*argv: str) -> BotService:
        args = build_parser(["serve", *argv]).parse_args(["serve", *argv])
        service = build_service(server_settings_from_args(args))
        made.append(service)
        return service

    yield build
    for service in made:
        service.stop()


def test_serve_without_a_mode_grades_live_and_says_so(serve: Callable[..., BotService]) -> None:
    service = serve()
    assert service.ctx.plan.sandbox is CassetteMode.LIVE
    assert service.ctx.plan.judge is CassetteMode.LIVE
    health = service.app.test_client().get("/healthz").get_json()
    assert health["ok"] is True and health["mode"] == "live", health["reasons"]
    assert health["checks"] == {
        "database": "ok",
        "jobs": "ok",
        "github": "ok",
        "judge (primary, anthropic)": "ok",  # the secondary's key is not set: not asked
    }
    assert health["adapters"]["sandbox"] == "Docker engine"
    assert health["adapters"]["judge"].startswith("live ")
    line = startup_line(service)
    assert line.startswith("migration-evals serve: grading live (sandbox: Docker engine")


def test_serve_with_mode_replay_says_replay(serve: Callable[..., BotService]) -> None:
    service = serve("--mode", "replay")
    health = service.app.test_client().get("/healthz").get_json()
    assert health["mode"] == "replay" and health["adapters"]["sandbox"] == "sandbox cassettes"
    assert health["modes"] == {"sandbox": "replay", "judge": "replay", "github": "replay"}
    assert health["adapters"]["github"] == "GitHub cassettes (no network)"
    assert "grading replay" in startup_line(service)


def test_the_worker_defaults_to_live_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MIGRATION_EVALS_MODE", raising=False)
    args = build_parser(["worker"]).parse_args(["worker"])
    assert server_settings_from_args(args).mode is CassetteMode.LIVE
    args = build_parser(["worker"]).parse_args(["worker", "--mode", "replay"])
    assert server_settings_from_args(args).mode is CassetteMode.REPLAY
    run = build_parser(["run"]).parse_args(["run", "x.jsonl"])  # `run` keeps replay
    assert settings_from_args(run).mode is CassetteMode.REPLAY


def test_a_grade_job_whose_plan_cannot_be_honoured_is_not_graded_otherwise(
    make_harness: Callable[..., Harness],
) -> None:
    harness = make_harness()
    ctx, settings = harness.service.ctx, harness.service.settings
    no_engine = dataclasses.replace(settings, docker_host="unix:///nonexistent/docker.sock")
    ctx.grading = Grading.of(no_engine, ctx.store, ctx.specs)
    ctx.plan = dataclasses.replace(ctx.plan, sandbox=CassetteMode.LIVE)
    harness.service.queue.intake.carry = {"plan": ctx.plan.to_dict()}
    harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    harness.drain()
    [job] = harness.service.queue.admin.jobs()
    assert job["state"] == "queued" and "cannot honour the grade job's plan" in job["last_error"]
    assert "sandbox is live but no Docker engine" in job["last_error"]
    assert [run["status"] for run in harness.github.check_runs] == ["in_progress"]


def test_a_server_without_a_judge_replays_nothing_it_does_not_have(
    no_judge_specs: SpecSet, specs: SpecSet
) -> None:
    """With ``judging: none`` there is no judge to replay: a live sandbox grades live,
    and the health page says there is no judge rather than "judge cassettes"."""
    plan = RunPlan(sandbox=CassetteMode.LIVE, judge=CassetteMode.REPLAY, github=CassetteMode.LIVE)
    assert replayed(plan) is True
    assert replayed(plan, judged=no_judge_specs.oracle.judged) is False
    said = describe(plan, no_judge_specs)
    assert said["mode"] == "live"
    assert said["adapters"]["judge"].startswith("no judge")
    assert describe(plan, specs)["mode"] == "replay"


# -- refused at start --------------------------------------------------------------------------


def _garbage_keys(tmp_path: Path) -> dict[str, Path]:
    ec = ec_key.generate_private_key(ec_key.SECP256R1()).private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    keys = {
        "not PEM at all": b"this is not a key\n",
        "a PEM block that is no key": b"-----BEGIN PRIVATE KEY-----\nAAAA\n"
        b"-----END PRIVATE KEY-----\n",
        "an EC key": ec,
        "binary": bytes(range(256)),
    }
    for index, (_, text) in enumerate(keys.items()):
        (tmp_path / f"key{index}.pem").write_bytes(text)
    return {name: tmp_path / f"key{index}.pem" for index, name in enumerate(keys)}


def test_a_garbage_private_key_is_refused_at_start(
    serve: Callable[..., BotService],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name, path in _garbage_keys(tmp_path).items():
        monkeypatch.setenv("MIGRATION_EVALS_PRIVATE_KEY_PATH", str(path))
        with pytest.raises(ConfigError, match="private key") as refused:
            serve("--mode", "replay")
        said = str(refused.value)
        assert str(path) in said, name
        assert "not a usable PEM private key" in said or "not an RSA key" in said, name
    # The command line says it in one line and exits 1, before serving anything.
    assert main(["serve", "--dev", "--mode", "replay"]) == ExitStatus.ERROR
    err = capsys.readouterr().err
    assert (
        err.startswith("migration-evals: error: the App's private key") and "Traceback" not in err
    )


def test_live_serving_without_the_judges_key_is_refused_at_start(
    serve: Callable[..., BotService],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(ConfigError, match="needs ANTHROPIC_API_KEY for the primary judge"):
        serve()
    assert main(["serve", "--dev"]) == ExitStatus.ERROR
    assert "--mode replay" in capsys.readouterr().err
    assert serve("--mode", "replay").about["mode"] == "replay"  # nothing live to ask


def test_live_serving_without_the_second_judges_key_warns(
    serve: Callable[..., BotService], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="migration_evals.bot.app.service"):
        serve()
    [warning] = [
        r.getMessage() for r in caplog.records if r.name == "migration_evals.bot.app.service"
    ]
    assert warning.startswith("OPENAI_API_KEY is not set: strict judging")


def test_a_judge_that_refuses_the_key_or_is_down_makes_the_app_degraded(
    serve: Callable[..., BotService], judge_api: FakeJudgeAPI
) -> None:
    client = serve().app.test_client()
    judge_api.reset()
    judge_api.script(MODELS, Canned(401, api_error("authentication_error", "invalid x-api-key")))
    answer = client.get("/healthz")
    health = answer.get_json()
    assert answer.status_code == 503 and health["status"] == "degraded"
    assert health["reasons"] == [
        f"judge (primary, anthropic): the API refused this server's key "
        f"(401 at {judge_api.url}{MODELS})"
    ]
    [seen] = judge_api.seen(MODELS)
    assert seen.headers["x-api-key"] == "test-key-never-sent"


def test_an_unreachable_judge_makes_the_app_degraded(
    serve: Callable[..., BotService], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # discard: nothing listens
    health = serve().app.test_client().get("/healthz").get_json()
    assert health["status"] == "degraded"
    [reason] = health["reasons"]
    assert reason.startswith("judge (primary, anthropic): unreachable at http://127.0.0.1:9/")
