"""Record mode: a live answer is written to a scrubbed cassette that replay then serves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from migration_evals.core.cassette import CassetteLibrary
from migration_evals.core.specs import SpecSet
from migration_evals.oracles.judges import RecordingJudge, ReplayingJudge
from migration_evals.oracles.judging import parse_answer
from tests.fake_judge_api import Canned, FakeJudgeAPI, Seen, anthropic_message, openai_completion
from tests.oracles.judges.conftest import (
    ANTHROPIC,
    ANTHROPIC_KEY,
    GOOD_LINE,
    OPENAI,
    OPENAI_KEY,
    JudgeFactory,
    Provider,
    judge_request,
)

pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")


def _leaky_answer(provider: Provider) -> Canned:
    """A model that (absurdly) repeats the Authorization header it was sent."""

    def body(seen: Seen) -> dict[str, object]:
        text = json.dumps(
            {
                "verdict": "pass",
                "confidence": 0.8,
                "rationale": f"release 17; caller said {seen.headers['authorization']}",
                "evidence": [GOOD_LINE],
            }
        )
        if provider is ANTHROPIC:
            return anthropic_message(text, input_tokens=1500, output_tokens=90)
        return openai_completion(text, prompt_tokens=1400, completion_tokens=300)

    return Canned(body=body)


@pytest.mark.parametrize("provider", [ANTHROPIC, OPENAI], ids=["anthropic", "openai"])
def test_a_recorded_answer_is_scrubbed_and_replays(
    specs: SpecSet,
    fake_api: FakeJudgeAPI,
    make_judge: JudgeFactory,
    tmp_path: Path,
    provider: Provider,
) -> None:
    library = CassetteLibrary(tmp_path / "cassettes")
    fake_api.script(provider.path, _leaky_answer(provider))
    request, shown = judge_request(specs, provider)
    live = make_judge(provider)
    recorded = RecordingJudge(live, library).ask(request)

    path = library.path("judge", library.key(request.key_data()))
    text = path.read_text()
    for key in (ANTHROPIC_KEY, OPENAI_KEY):
        assert key not in text
    assert "[scrubbed]" in text
    entry = json.loads(text)
    assert entry["recorded_by"] == live.identity
    assert entry["request"] == request.key_data()

    replayed = ReplayingJudge(library).ask(request)
    assert replayed.fabricated == ()
    assert replayed.text == entry["response"]["text"]
    assert (replayed.input_tokens, replayed.output_tokens) == (
        recorded.input_tokens,
        recorded.output_tokens,
    )
    assert parse_answer(replayed, shown).verdict == "pass"
    assert len(fake_api.requests) == 1  # the replay asked nobody
    assert (recorded.recorded_by, replayed.recorded_by) == ("", live.identity)
    assert "recorded_by" not in entry["response"]  # the cassette stays as it was


def test_a_replayed_answer_says_who_wrote_it(specs: SpecSet, tmp_path: Path) -> None:
    """A hand-written cassette's note follows its answer, so no report calls it measured."""
    library = CassetteLibrary(tmp_path / "cassettes")
    request, _ = judge_request(specs, ANTHROPIC)
    answer = {"text": '{"verdict": "pass"}', "stop_reason": "end_turn", "input_tokens": 9}
    library.record("judge", request.key_data(), answer, recorded_by="hand (no model was asked)")
    reply = ReplayingJudge(library).ask(request)
    assert (reply.recorded_by, reply.input_tokens) == ("hand (no model was asked)", 9)
    assert "recorded_by" not in reply.to_dict()


def test_a_request_never_recorded_replays_as_fabricated(specs: SpecSet, tmp_path: Path) -> None:
    request, shown = judge_request(specs, ANTHROPIC)
    reply = ReplayingJudge(CassetteLibrary(tmp_path / "empty")).ask(request)
    assert reply.fabricated and reply.fabricated[0].port == "judge"
    assert parse_answer(reply, shown).verdict is None  # the default quotes no evidence
