"""Cassettes: keyed by request, scrubbed on write, misses stamped fabricated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from migration_evals.core.cassette import CassetteLibrary, scrub
from migration_evals.core.errors import CassetteError
from migration_evals.core.ports import JudgeReply, SandboxResult


def test_record_then_replay_round_trips(tmp_path: Path) -> None:
    library = CassetteLibrary(tmp_path)
    request = {"image": "img", "command": ["make"], "attempt": 0}
    library.record("sandbox", request, {"exit_code": 3}, recorded_by="test")
    found = library.replay("sandbox", {"command": ["make"], "attempt": 0, "image": "img"})
    assert found.miss is None
    assert found.response == {"exit_code": 3}


def test_a_miss_names_key_and_path_and_returns_a_stamped_default(tmp_path: Path) -> None:
    library = CassetteLibrary(tmp_path / "typo")
    result = library.replay_as(
        "sandbox", {"image": "x"}, SandboxResult.from_dict, SandboxResult.fabricated_default
    )
    assert result.exit_code == 0
    (mark,) = result.fabricated
    assert mark.port == "sandbox"
    assert mark.key == CassetteLibrary.key({"image": "x"})
    assert mark.cassette == str(tmp_path / "typo" / "sandbox" / f"{mark.key}.json")
    assert "no cassette" in mark.reason


def test_judge_default_is_stamped_too(tmp_path: Path) -> None:
    reply = CassetteLibrary(tmp_path).replay_as(
        "judge", {"model": "m"}, JudgeReply.from_dict, JudgeReply.fabricated_default
    )
    assert reply.fabricated
    assert json.loads(reply.text)["verdict"] == "pass"


def test_secrets_are_scrubbed_before_writing(tmp_path: Path) -> None:
    library = CassetteLibrary(tmp_path)
    request = {
        "headers": {
            "Authorization": "Bearer abcdefgh12345678",
            "x-api-key": "sk-ant-api03-xyzxyzxyz",
        },
        "max_tokens": 100,
        "prompt": "use key sk-proj-ABCDEFGHIJKLMNOPQRSTUV and ghp_0123456789abcdefghijABCDEFGHIJ",
    }
    path = library.record("judge", request, {"input_tokens": 5, "token": "t0k3n"}, recorded_by="t")
    text = path.read_text()
    for secret in ("abcdefgh12345678", "sk-ant-api03", "sk-proj-ABC", "ghp_0123", "t0k3n"):
        assert secret not in text
    entry = json.loads(text)
    assert entry["request"]["max_tokens"] == 100
    assert entry["response"]["input_tokens"] == 5


def test_scrub_keeps_token_counts() -> None:
    assert scrub({"input_tokens": 3, "max_tokens": 9}) == {"input_tokens": 3, "max_tokens": 9}
    assert scrub({"GITHUB_TOKEN": "x"}) == {"GITHUB_TOKEN": "[scrubbed]"}


def test_corrupt_cassette_is_an_error_not_a_miss(tmp_path: Path) -> None:
    library = CassetteLibrary(tmp_path)
    path = library.record("sandbox", {"a": 1}, {"exit_code": 0}, recorded_by="t")
    path.write_text("{not json")
    with pytest.raises(CassetteError, match="corrupt"):
        library.replay("sandbox", {"a": 1})
    path.write_bytes(b'{"response": "\xff"}')  # not UTF-8
    with pytest.raises(CassetteError, match="corrupt"):
        library.replay("sandbox", {"a": 1})
