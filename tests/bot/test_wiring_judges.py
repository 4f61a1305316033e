"""Wiring the judges: replay by default; record and live need the primary judge's key, and
the secondary's too when strict; record writes cassettes through the live adapters (here
aimed at the loopback fake API)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from migration_evals.bot.wiring import build_cascade, build_judges, judge_retry_policy
from migration_evals.core.cassette import CassetteLibrary
from migration_evals.core.errors import ConfigError
from migration_evals.core.model import Tier
from migration_evals.core.settings import CassetteMode, Settings
from migration_evals.core.specs import SpecSet
from migration_evals.oracles.judges import RecordingJudge, ReplayingJudge
from tests.fake_judge_api import (
    ANTHROPIC_PATH,
    OPENAI_PATH,
    Canned,
    anthropic_message,
    openai_completion,
    running_fake_api,
)
from tests.fakes import judge_json
from tests.oracles.judges.conftest import (
    ANTHROPIC,
    ANTHROPIC_KEY,
    GOOD_LINE,
    OPENAI,
    OPENAI_KEY,
    judge_request,
)

# Building a live or recording judge imports its SDK: every test here runs on the worker
# that has them (see the judge_sdks fixture).
pytestmark = [
    pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning"),
    pytest.mark.usefixtures("judge_sdks"),
]


def _settings(tmp_path: Path, mode: CassetteMode, *, strict: bool = True, **keys: str) -> Settings:
    return Settings(
        specs_dir=tmp_path / "specs",
        cassette_dir=tmp_path / "cassettes",
        cache_dir=tmp_path / "cache",
        mode=mode,
        strict_judge=strict,
        **keys,  # type: ignore[arg-type]
    )


def test_replay_needs_no_keys(specs: SpecSet, tmp_path: Path) -> None:
    library = CassetteLibrary(tmp_path)
    primary, secondary = build_judges(_settings(tmp_path, CassetteMode.REPLAY), library, specs)
    assert isinstance(primary, ReplayingJudge) and isinstance(secondary, ReplayingJudge)


@pytest.mark.parametrize("mode", [CassetteMode.RECORD, CassetteMode.LIVE])
@pytest.mark.parametrize(
    ("keys", "missing"),
    [({}, "ANTHROPIC_API_KEY"), ({"anthropic_api_key": ANTHROPIC_KEY}, "OPENAI_API_KEY")],
)
def test_strict_record_and_live_need_both_keys(
    specs: SpecSet, tmp_path: Path, mode: CassetteMode, keys: dict[str, str], missing: str
) -> None:
    with pytest.raises(ConfigError, match=f"needs {missing}"):
        build_judges(_settings(tmp_path, mode, **keys), CassetteLibrary(tmp_path), specs)


@pytest.mark.parametrize("mode", [CassetteMode.RECORD, CassetteMode.LIVE])
def test_without_strict_only_the_primary_judges_key_is_needed(
    specs: SpecSet, tmp_path: Path, mode: CassetteMode
) -> None:
    settings = _settings(tmp_path, mode, strict=False, anthropic_api_key=ANTHROPIC_KEY)
    primary, secondary = build_judges(settings, CassetteLibrary(tmp_path), specs)
    assert "anthropic" in primary.identity and secondary is None
    with pytest.raises(ConfigError, match="needs ANTHROPIC_API_KEY .*the primary judge"):
        build_judges(_settings(tmp_path, mode, strict=False), CassetteLibrary(tmp_path), specs)


def test_the_retry_policy_comes_from_the_oracle_spec(specs: SpecSet) -> None:
    policy = judge_retry_policy(specs)
    assert (policy.max_retries, policy.deadline_s) == (4, 180.0)


def test_record_mode_asks_the_live_judges_and_writes_cassettes(
    specs: SpecSet, tmp_path: Path, judge_sdks: SimpleNamespace
) -> None:
    library = CassetteLibrary(tmp_path / "cassettes")
    answer = judge_json("pass", [GOOD_LINE])
    with running_fake_api() as api:
        api.script(ANTHROPIC_PATH, Canned(body=anthropic_message(answer)))
        api.script(OPENAI_PATH, Canned(body=openai_completion(answer)))
        settings = _settings(
            tmp_path,
            CassetteMode.RECORD,
            anthropic_api_key=ANTHROPIC_KEY,
            openai_api_key=OPENAI_KEY,
            anthropic_base_url=api.url,
            openai_base_url=api.url + "/v1",
        )
        primary, secondary = build_judges(settings, library, specs)
        assert isinstance(primary, RecordingJudge)
        assert isinstance(primary.live, judge_sdks.AnthropicJudge)
        assert isinstance(secondary, RecordingJudge)
        assert isinstance(secondary.live, judge_sdks.OpenAIJudge)
        requests = [judge_request(specs, ANTHROPIC)[0], judge_request(specs, OPENAI)[0]]
        live = [primary.ask(requests[0]), secondary.ask(requests[1])]
        assert [r.headers["authorization"] for r in api.requests] == [
            f"Bearer {ANTHROPIC_KEY}",
            f"Bearer {OPENAI_KEY}",
        ]
    replaying = ReplayingJudge(library)
    replayed = [replaying.ask(r) for r in requests]
    # The same answers, each saying which live judge recorded it.
    assert [replace(r, recorded_by="") for r in replayed] == live
    assert [r.recorded_by for r in replayed] == [primary.identity, secondary.identity]
    files = sorted((tmp_path / "cassettes" / "judge").glob("*.json"))
    assert len(files) == 2
    assert not any(key in f.read_text() for f in files for key in (ANTHROPIC_KEY, OPENAI_KEY))


def test_live_mode_uses_the_adapters_directly(
    specs: SpecSet, tmp_path: Path, judge_sdks: SimpleNamespace
) -> None:
    settings = _settings(
        tmp_path,
        CassetteMode.LIVE,
        anthropic_api_key=ANTHROPIC_KEY,
        openai_api_key=OPENAI_KEY,
    )
    primary, secondary = build_judges(settings, CassetteLibrary(tmp_path), specs)
    assert isinstance(primary, judge_sdks.AnthropicJudge)
    assert isinstance(secondary, judge_sdks.OpenAIJudge)
    assert primary.identity.startswith("judge:anthropic/")


def test_a_spec_without_a_judge_builds_no_judge_and_needs_no_key(
    no_judge_specs: SpecSet, tmp_path: Path
) -> None:
    settings = replace(
        _settings(tmp_path, CassetteMode.LIVE, strict=False), sandbox_mode=CassetteMode.REPLAY
    )
    cascade = build_cascade(settings, store=None, specs=no_judge_specs).cascade  # type: ignore[arg-type]
    assert cascade.tiers == [Tier.APPLY, Tier.COMPILE, Tier.TESTS]
    assert Tier.JUDGE not in cascade.oracles
    with pytest.raises(ConfigError, match="pre-registers an evaluation without an LLM judge"):
        build_cascade(replace(settings, strict_judge=True), store=None, specs=no_judge_specs)  # type: ignore[arg-type]
