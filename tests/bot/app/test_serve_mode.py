"""``serve`` and ``worker`` grade live unless a mode is asked for, and say which."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bot.app.context import replayed
from bot.app.service import BotService, build_service, describe
from bot.cli import build_parser
from bot.commands.options import server_settings_from_args, settings_from_args
from bot.commands.serve import startup_line
from bot.grading import Grading
from bot.plan import RunPlan
from core.settings import CassetteMode
from core.specs import SpecSet
from tests.bot.app.conftest import APP_ID, SECRET, Harness, raw


@pytest.fixture
def serve(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, app_key: tuple[Path, str]
) -> Iterator[Callable[..., BotService]]:
    """``serve ARGS`` as far as building its service, in an environment with no mode."""
    for name in ("MIGRATION_EVALS_MODE", "MIGRATION_EVALS_SANDBOX_MODE"):
        monkeypatch.delenv(name, raising=False)
    env = {
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
    assert health["ok"] is True and health["mode"] == "live"
    assert health["adapters"]["sandbox"] == "Docker engine"
    assert health["adapters"]["judge"].startswith("live ")
    line = startup_line(service)
    assert line.startswith("migration-evals serve: grading live (sandbox: Docker engine")


def test_serve_with_mode_replay_says_replay(serve: Callable[..., BotService]) -> None:
    service = serve("--mode", "replay")
    health = service.app.test_client().get("/healthz").get_json()
    assert health["mode"] == "replay" and health["adapters"]["sandbox"] == "sandbox cassettes"
    assert health["modes"] == {"sandbox": "replay", "judge": "replay", "github": "live"}
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
    harness.service.queue.carry = {"plan": ctx.plan.to_dict()}
    harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    harness.drain()
    [job] = harness.service.queue.jobs()
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
