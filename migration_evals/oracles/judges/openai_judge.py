"""The judge port on OpenAI's Chat Completions API, through the official ``openai`` SDK.

The verdict comes back as strict structured output (``response_format`` of type
``json_schema`` with ``strict: true`` and the verdict schema). The reply is mapped as the
API gave it: the message content, the finish reason, a refusal (``message.refusal``, or a
``content_filter`` finish that withheld the answer) and the token usage; reasoning tokens
are inside ``completion_tokens`` and billed as output.

A sampling temperature is sent only when the request carries one (reasoning models such
as gpt-5 accept only their default). The SDK's own retries are switched off and
``Retrying`` owns the policy; SDK errors become ``JudgeError`` subclasses here.
"""

from __future__ import annotations

import openai
from openai.types.chat import ChatCompletion

from migration_evals.core.errors import JudgeError, JudgeUnavailableError
from migration_evals.core.ports import JudgeReply, JudgeRequest
from migration_evals.oracles.judges.faults import check_provider, from_status, short
from migration_evals.oracles.judges.retry import Retrying
from migration_evals.oracles.judging import VERDICT_SCHEMA

__all__ = ["OpenAIJudge"]

PROVIDER = "openai"
_CONTENT_FILTER = "the provider's content filter withheld the answer"


class OpenAIJudge:
    """Asks an OpenAI model for a verdict; the client comes from the caller."""

    def __init__(self, client: openai.OpenAI, retrying: Retrying) -> None:
        # One retry policy, ours: see migration_evals/oracles/judges/retry.py.
        self._client = client.with_options(max_retries=0)
        self._retrying = retrying

    @property
    def identity(self) -> str:
        return f"judge:{PROVIDER}/{openai.__version__}"

    def ask(self, request: JudgeRequest) -> JudgeReply:
        check_provider(request, PROVIDER)
        completion = self._retrying.call(lambda timeout: self._create(request, timeout))
        return _reply(completion)

    def _create(self, request: JudgeRequest, timeout: float) -> ChatCompletion:
        try:
            return self._client.chat.completions.create(
                model=request.model,
                messages=[
                    {"role": "system", "content": request.system},
                    {"role": "user", "content": request.prompt},
                ],
                max_completion_tokens=request.max_tokens,
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": "verdict", "strict": True, "schema": VERDICT_SCHEMA},
                },
                temperature=openai.omit if request.temperature is None else request.temperature,
                timeout=timeout,
            )
        except openai.APITimeoutError as exc:
            raise JudgeUnavailableError(f"{PROVIDER} did not answer within {timeout:.1f}s") from exc
        except openai.APIConnectionError as exc:
            raise JudgeUnavailableError(f"{PROVIDER} unreachable: {short(exc)}") from exc
        except openai.APIStatusError as exc:
            raise from_status(PROVIDER, exc.status_code, exc.response.headers, exc.message) from exc
        except openai.OpenAIError as exc:
            raise JudgeError(f"{PROVIDER} client failed: {short(exc)}") from exc


def _reply(completion: ChatCompletion) -> JudgeReply:
    if not completion.choices:
        raise JudgeError(f"{PROVIDER} returned a completion without choices")
    if completion.usage is None:
        # Without usage the cost is unknown; better an error than a silent $0.
        raise JudgeError(f"{PROVIDER} returned a completion without token usage")
    choice = completion.choices[0]
    refusal = choice.message.refusal
    if not refusal and choice.finish_reason == "content_filter":
        refusal = _CONTENT_FILTER
    return JudgeReply(
        text=choice.message.content or "",
        stop_reason=choice.finish_reason,
        input_tokens=completion.usage.prompt_tokens,
        output_tokens=completion.usage.completion_tokens,
        refusal=refusal or None,
    )
