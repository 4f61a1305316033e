"""The live adapters through the real SDK code paths, against the loopback fake API:
request shape, faithful replies, fail-closed answers, retries, timeouts, error mapping."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from migration_evals.core.errors import JudgeAuthError, JudgeRequestError, JudgeUnavailableError
from migration_evals.core.specs import SpecSet
from migration_evals.oracles.judges import RetryPolicy
from migration_evals.oracles.judging import VERDICT_SCHEMA, parse_answer
from tests.fake_judge_api import (
    Canned,
    FakeJudgeAPI,
    anthropic_message,
    api_error,
    openai_completion,
)
from tests.fakes import FakeTimer, judge_json
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

# The SDK warns that the spec's Claude model is near its end of life; not this test's topic.
pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")

PROVIDERS = [pytest.param(ANTHROPIC, id="anthropic"), pytest.param(OPENAI, id="openai")]
GOOD_ANSWER = judge_json("pass", [GOOD_LINE])


def ok(provider: Provider, text: str, **usage: int) -> Canned:
    if provider is ANTHROPIC:
        return Canned(body=anthropic_message(text, **usage))
    return Canned(body=openai_completion(text, **usage))


def test_anthropic_request_and_reply(
    specs: SpecSet, fake_api: FakeJudgeAPI, make_judge: JudgeFactory
) -> None:
    fake_api.script(ANTHROPIC.path, ok(ANTHROPIC, GOOD_ANSWER, input_tokens=1234, output_tokens=56))
    request, shown = judge_request(specs, ANTHROPIC)
    reply = make_judge(ANTHROPIC).ask(request)
    assert (reply.text, reply.stop_reason, reply.refusal) == (GOOD_ANSWER, "end_turn", None)
    assert (reply.input_tokens, reply.output_tokens) == (1234, 56)
    assert parse_answer(reply, shown).verdict == "pass"
    (seen,) = fake_api.seen(ANTHROPIC.path)
    assert seen.headers["authorization"] == f"Bearer {ANTHROPIC_KEY}"
    assert seen.headers["x-stainless-retry-count"] == "0"
    body = seen.body
    assert body["model"] == "claude-sonnet-5-5"
    assert body["max_tokens"] == 2048
    assert body["system"] == request.system
    assert body["messages"] == [{"role": "user", "content": request.prompt}]
    output_format = body["output_config"]["format"]
    assert output_format["type"] == "json_schema"
    assert set(output_format["schema"]["required"]) == set(VERDICT_SCHEMA["required"])
    assert output_format["schema"]["additionalProperties"] is False
    assert "temperature" not in body  # the spec sends none


def test_openai_request_and_reply(
    specs: SpecSet, fake_api: FakeJudgeAPI, make_judge: JudgeFactory
) -> None:
    fake_api.script(OPENAI.path, ok(OPENAI, GOOD_ANSWER, prompt_tokens=900, completion_tokens=321))
    request, shown = judge_request(specs, OPENAI)
    reply = make_judge(OPENAI).ask(request)
    assert (reply.text, reply.stop_reason, reply.refusal) == (GOOD_ANSWER, "stop", None)
    assert (reply.input_tokens, reply.output_tokens) == (900, 321)
    assert parse_answer(reply, shown).verdict == "pass"
    (seen,) = fake_api.seen(OPENAI.path)
    assert seen.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert seen.headers["x-stainless-retry-count"] == "0"
    body = seen.body
    assert body["model"] == "gpt-5"
    assert body["max_completion_tokens"] == 2048
    assert body["messages"] == [
        {"role": "system", "content": request.system},
        {"role": "user", "content": request.prompt},
    ]
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "verdict", "strict": True, "schema": VERDICT_SCHEMA},
    }
    assert "temperature" not in body


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_temperature_in_the_request_is_sent(
    specs: SpecSet, fake_api: FakeJudgeAPI, make_judge: JudgeFactory, provider: Provider
) -> None:
    fake_api.script(provider.path, ok(provider, GOOD_ANSWER))
    request, _ = judge_request(specs, provider, temperature=0.0)
    make_judge(provider).ask(request)
    assert fake_api.seen(provider.path)[0].body["temperature"] == 0.0


def _anthropic_text(text: str, stop: str = "end_turn") -> dict[str, Any]:
    return anthropic_message(text, stop_reason=stop)


# Each defect as each provider really reports it; all must end in no verdict.
DEFECTS: list[tuple[str, dict[str, Any], dict[str, Any], str]] = [
    (
        "refusal",
        anthropic_message(
            "",
            stop_reason="refusal",
            stop_details={"type": "refusal", "category": "cyber", "explanation": "Not this."},
        ),
        openai_completion(None, refusal="I can't help with that."),
        "refused",
    ),
    (
        "truncated",
        _anthropic_text('{"verdict": "pass", "confidence": 0.9, "rat', stop="max_tokens"),
        openai_completion('{"verdict": "pass", "confidence": 0.9, "rat', finish_reason="length"),
        "truncated",
    ),
    (
        "invalid JSON",
        _anthropic_text("I think it passes."),
        openai_completion("I think it passes."),
        "not valid JSON",
    ),
    (
        "schema violation",
        _anthropic_text('{"verdict": "PASS", "confidence": 1, "rationale": "", "evidence": []}'),
        openai_completion(
            '{"verdict": "pass", "confidence": "high", "rationale": "", "evidence": []}'
        ),
        "does not fit the verdict schema",
    ),
    (
        "missing evidence",
        _anthropic_text(judge_json("pass", [])),
        openai_completion(judge_json("pass", [])),
        "quotes no evidence",
    ),
    (
        "invented evidence",
        _anthropic_text(
            judge_json("pass", ["+    <maven.compiler.release>21</maven.compiler.release>"])
        ),
        openai_completion(judge_json("pass", ["+ all tests pass"])),
        "does not appear in the diff",
    ),
]


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    ("anthropic_body", "openai_body", "problem"),
    [pytest.param(a, o, p, id=name) for name, a, o, p in DEFECTS],
)
def test_every_defective_answer_gives_no_verdict(
    specs: SpecSet,
    fake_api: FakeJudgeAPI,
    make_judge: JudgeFactory,
    provider: Provider,
    anthropic_body: dict[str, Any],
    openai_body: dict[str, Any],
    problem: str,
) -> None:
    body = anthropic_body if provider is ANTHROPIC else openai_body
    fake_api.script(provider.path, Canned(body=body))
    request, shown = judge_request(specs, provider)
    answer = parse_answer(make_judge(provider).ask(request), shown)
    assert answer.verdict is None
    assert problem in answer.problem


def test_an_openai_content_filter_stop_is_a_refusal(
    specs: SpecSet, fake_api: FakeJudgeAPI, make_judge: JudgeFactory
) -> None:
    fake_api.script(
        OPENAI.path, Canned(body=openai_completion(None, finish_reason="content_filter"))
    )
    request, shown = judge_request(specs, OPENAI)
    reply = make_judge(OPENAI).ask(request)
    assert reply.refusal and "content filter" in reply.refusal
    assert parse_answer(reply, shown).verdict is None


def test_an_anthropic_refusal_keeps_its_explanation(
    specs: SpecSet, fake_api: FakeJudgeAPI, make_judge: JudgeFactory
) -> None:
    details = {"type": "refusal", "category": "cyber", "explanation": None}
    fake_api.script(
        ANTHROPIC.path,
        Canned(body=anthropic_message("", stop_reason="refusal", stop_details=details)),
    )
    reply = make_judge(ANTHROPIC).ask(judge_request(specs, ANTHROPIC)[0])
    assert reply.stop_reason == "refusal"
    assert reply.refusal == "refused (policy category cyber)"


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    "headers", [{"retry-after": "2"}, {"retry-after-ms": "2000"}], ids=["seconds", "ms"]
)
def test_a_429_is_retried_after_the_wait_it_asks_for(
    specs: SpecSet,
    fake_api: FakeJudgeAPI,
    make_judge: JudgeFactory,
    clock: FakeTimer,
    provider: Provider,
    headers: dict[str, str],
) -> None:
    fake_api.script(
        provider.path,
        Canned(429, api_error("rate_limit_error", "slow down"), headers),
        ok(provider, GOOD_ANSWER),
    )
    request, shown = judge_request(specs, provider)
    reply = make_judge(provider).ask(request)
    assert parse_answer(reply, shown).verdict == "pass"
    assert clock.sleeps == [2.0]
    # Our policy made both attempts; the SDK retried nothing by itself.
    assert [r.headers["x-stainless-retry-count"] for r in fake_api.seen(provider.path)] == [
        "0",
        "0",
    ]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_persistent_500_is_an_error_after_bounded_backoff(
    specs: SpecSet,
    fake_api: FakeJudgeAPI,
    make_judge: JudgeFactory,
    clock: FakeTimer,
    provider: Provider,
) -> None:
    failing = Canned(500, api_error("api_error", "internal error"))
    fake_api.script(provider.path, *[failing] * 10)
    with pytest.raises(JudgeUnavailableError, match=r"HTTP 500.*gave up after 5 attempt"):
        make_judge(provider).ask(judge_request(specs, provider)[0])
    assert len(fake_api.seen(provider.path)) == 5  # the first try and max_retries (4) more
    assert clock.sleeps == [1.0, 2.0, 4.0, 8.0]  # exponential, no retry-after given


def test_an_overloaded_anthropic_529_is_retried(
    specs: SpecSet, fake_api: FakeJudgeAPI, make_judge: JudgeFactory, clock: FakeTimer
) -> None:
    fake_api.script(
        ANTHROPIC.path,
        Canned(529, api_error("overloaded_error", "Overloaded")),
        ok(ANTHROPIC, GOOD_ANSWER),
    )
    make_judge(ANTHROPIC).ask(judge_request(specs, ANTHROPIC)[0])
    assert clock.sleeps == [1.0]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_retry_after_beyond_the_time_limit_gives_up_at_once(
    specs: SpecSet,
    fake_api: FakeJudgeAPI,
    make_judge: JudgeFactory,
    clock: FakeTimer,
    provider: Provider,
) -> None:
    fake_api.script(
        provider.path, Canned(429, api_error("rate_limit_error", "quota"), {"retry-after": "600"})
    )
    with pytest.raises(JudgeUnavailableError, match="would pass the 180s limit"):
        make_judge(provider).ask(judge_request(specs, provider)[0])
    assert clock.sleeps == []


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    ("status", "error"),
    [(400, JudgeRequestError), (404, JudgeRequestError), (401, JudgeAuthError)],
)
def test_a_request_the_api_refuses_is_not_retried(
    specs: SpecSet,
    fake_api: FakeJudgeAPI,
    make_judge: JudgeFactory,
    clock: FakeTimer,
    provider: Provider,
    status: int,
    error: type[Exception],
) -> None:
    fake_api.script(provider.path, Canned(status, api_error("invalid_request_error", "bad")))
    with pytest.raises(error, match=f"HTTP {status}"):
        make_judge(provider).ask(judge_request(specs, provider)[0])
    assert len(fake_api.seen(provider.path)) == 1
    assert clock.sleeps == []


FAST_TIMEOUT = RetryPolicy(max_retries=1, deadline_s=180, attempt_timeout_s=0.3)
# Where no answer is meant to come in time, the test need not wait as long for it.
FASTER_TIMEOUT = replace(FAST_TIMEOUT, attempt_timeout_s=0.1)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_timeout_is_retried(
    specs: SpecSet,
    fake_api: FakeJudgeAPI,
    make_judge: JudgeFactory,
    clock: FakeTimer,
    provider: Provider,
) -> None:
    slow = ok(provider, GOOD_ANSWER)
    fake_api.script(provider.path, Canned(body=slow.body, delay_s=2.0), ok(provider, GOOD_ANSWER))
    reply = make_judge(provider, FAST_TIMEOUT).ask(judge_request(specs, provider)[0])
    assert reply.text == GOOD_ANSWER
    assert len(clock.sleeps) == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_judge_that_keeps_timing_out_is_an_error(
    specs: SpecSet, fake_api: FakeJudgeAPI, make_judge: JudgeFactory, provider: Provider
) -> None:
    slow = Canned(body=ok(provider, GOOD_ANSWER).body, delay_s=2.0)
    fake_api.script(provider.path, slow, slow)
    with pytest.raises(JudgeUnavailableError, match=r"did not answer within 0\.1s.*2 attempt"):
        make_judge(provider, FASTER_TIMEOUT).ask(judge_request(specs, provider)[0])


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_judge_asked_for_another_provider_refuses(
    specs: SpecSet, fake_api: FakeJudgeAPI, make_judge: JudgeFactory, provider: Provider
) -> None:
    other = OPENAI if provider is ANTHROPIC else ANTHROPIC
    with pytest.raises(JudgeRequestError, match="was asked to use provider"):
        make_judge(provider).ask(judge_request(specs, other)[0])
    assert fake_api.requests == []


def test_error_messages_never_carry_a_key(
    specs: SpecSet, fake_api: FakeJudgeAPI, make_judge: JudgeFactory
) -> None:
    echo: Callable[[Any], dict[str, Any]] = lambda seen: api_error(  # noqa: E731
        "authentication_error", f"invalid x-api-key {seen.headers['authorization']}"
    )
    fake_api.script(ANTHROPIC.path, Canned(401, echo))
    with pytest.raises(JudgeAuthError) as caught:
        make_judge(ANTHROPIC).ask(judge_request(specs, ANTHROPIC)[0])
    assert ANTHROPIC_KEY not in str(caught.value)
    assert "[scrubbed]" in str(caught.value)
