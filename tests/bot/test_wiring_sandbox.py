"""Composition: which sandbox each mode gets, and what happens without an engine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from migration_evals.bot.cli import main
from migration_evals.bot.exits import ExitStatus
from migration_evals.bot.parsers.demo import EXAMPLES
from migration_evals.bot.settings import settings_from_env
from migration_evals.bot.wiring import build_sandbox, host_apt_sources
from migration_evals.core.cassette import CassetteLibrary
from migration_evals.core.errors import ConfigError, SandboxError
from migration_evals.core.settings import CassetteMode, Settings
from migration_evals.core.specs import SpecSet
from migration_evals.oracles.sandbox import RecordingSandbox, ReplayingSandbox, UnavailableSandbox
from tests.bot.conftest import DemoRun
from tests.conftest import ROOT, SPECS_DIR

JAVA = ROOT / "examples" / "changesets" / "java.jsonl"
NO_ENGINE = "unix:///nonexistent/docker.sock"


def _settings(tmp_path: Path, mode: CassetteMode) -> Settings:
    return Settings(
        specs_dir=SPECS_DIR,
        cassette_dir=tmp_path / "cassettes",
        cache_dir=tmp_path / "cache",
        sandbox_mode=mode,
        docker_host=NO_ENGINE,
    )


def test_each_mode_gets_its_sandbox(tmp_path: Path, specs: SpecSet) -> None:
    library = CassetteLibrary(tmp_path)
    replay = build_sandbox(_settings(tmp_path, CassetteMode.REPLAY), library, specs)
    assert isinstance(replay, ReplayingSandbox)
    live = build_sandbox(_settings(tmp_path, CassetteMode.LIVE), library, specs)
    assert isinstance(live, UnavailableSandbox)  # nothing answers at NO_ENGINE
    record = build_sandbox(_settings(tmp_path, CassetteMode.RECORD), library, specs)
    assert isinstance(record, RecordingSandbox)
    with pytest.raises(SandboxError, match="no Docker engine"):
        record.resolve("debian:12-slim")


def test_without_an_engine_live_trials_end_as_errors_not_failures(
    env: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE)
    code = main(["run", str(JAVA), "--sandbox", "live", "--json"])
    document = json.loads(capsys.readouterr().out)
    assert code == ExitStatus.INFRA_ERRORS  # graded, but errors above the gate's limit
    compile_tiers = [
        t["tiers"][1] for t in document["trials"] if t["tiers"][0]["verdict"] == "pass"
    ]
    assert compile_tiers
    assert {t["verdict"] for t in compile_tiers} == {"error"}
    assert all("no Docker engine" in t["reason"] for t in compile_tiers)


def test_the_demo_falls_back_to_cassettes_and_says_why(
    env: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MIGRATION_EVALS_SANDBOX_MODE")
    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE)
    # One file of the examples is enough to choose a sandbox by, and grades in a fifth of
    # the time of them all (the whole demo is graded in tests/bot/test_cli.py).
    (env / "examples").mkdir()
    junit = (EXAMPLES / "junit.jsonl").read_text().replace('"../', f'"{EXAMPLES.parent}/')
    (env / "examples" / "junit.jsonl").write_text(junit)
    assert main(["demo", "--examples", str(env / "examples"), "--json"]) == 0
    captured = capsys.readouterr()
    assert f"sandbox: replaying cassettes (no Docker engine at {NO_ENGINE}" in captured.err
    document = json.loads(captured.out)
    assert document["fabricated_count"] == 0
    assert len(document["trials"]) >= len(junit.splitlines())  # each graded, from cassettes


def test_an_explicit_mode_is_what_the_demo_uses(graded_demo: DemoRun) -> None:
    # That demo ran (and exited 0) with MIGRATION_EVALS_SANDBOX_MODE=replay, as ``env`` sets.
    assert "sandbox: replay (as asked)" in graded_demo.told


def test_recording_the_judges_without_keys_is_refused_with_the_way_to_record_the_sandbox(
    env: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["run", str(JAVA), "--mode", "record"]) == 1
    err = capsys.readouterr().err
    assert "ANTHROPIC_API_KEY" in err
    assert "--sandbox record|live" in err


def test_sandbox_mode_settings() -> None:
    assert settings_from_env({}).sandbox_mode is None
    assert settings_from_env({"MIGRATION_EVALS_MODE": "live"}).sandbox_mode is CassetteMode.LIVE
    both = {"MIGRATION_EVALS_MODE": "replay", "MIGRATION_EVALS_SANDBOX_MODE": "record"}
    settings = settings_from_env(both)
    assert (settings.mode, settings.effective_sandbox_mode) == (
        CassetteMode.REPLAY,
        CassetteMode.RECORD,
    )
    with pytest.raises(ConfigError, match="MIGRATION_EVALS_SANDBOX_MODE='x'"):
        settings_from_env({"MIGRATION_EVALS_SANDBOX_MODE": "x"})


def test_host_apt_sources_reads_list_and_sources_files(tmp_path: Path) -> None:
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list").write_text("deb http://m/debian bookworm main\n")
    (tmp_path / "sources.list.d" / "a.sources").write_text("Types: deb\n")
    (tmp_path / "sources.list.d" / "b.list.disabled").write_text("ignored")
    names = [name for name, _ in host_apt_sources(tmp_path)]
    assert names == ["sources.list", "a.sources"]


def test_images_commands_without_an_engine_are_one_clear_error(
    env: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE)
    for argv in (["images", "list"], ["images", "build", "--mirror", "http://m.invalid/debian"]):
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1
        assert f"no Docker engine at {NO_ENGINE}" in err


def test_the_registry_base_images_are_pulled_from_is_a_setting() -> None:
    assert settings_from_env({}).image_registry is None  # no pulls: a missing image errs
    chosen = settings_from_env({"MIGRATION_EVALS_IMAGE_REGISTRY": "mirror.example:5000/hub"})
    assert chosen.image_registry == "mirror.example:5000/hub"
