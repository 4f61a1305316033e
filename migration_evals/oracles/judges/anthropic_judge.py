"""The judge port on Anthropic's Messages API, through the official ``anthropic`` SDK.

The verdict comes back as structured output: ``output_config.format`` carries the verdict
schema, passed through the SDK's ``transform_schema``, which turns keywords the API does
not enforce (the confidence bounds) into descriptions; the judge tier checks the full
schema again on the answer, so nothing is lost. The reply is mapped as the API gave it:
the text blocks, the stop reason, a refusal (``stop_reason == "refusal"``, with its
explanation) and the token usage.

A sampling temperature is sent only when the request carries one: the Messages API
version that anthropic 2.x speaks rejects sampling parameters, so the shipped spec sends
none. The SDK's own retries are switched off and ``Retrying`` owns the policy; SDK errors
become ``JudgeError`` subclasses here, at the boundary.
"""

from __future__ import annotations

import anthropic
from anthropic.types import Message

from migration_evals.core.errors import JudgeError, JudgeUnavailableError
from migration_evals.core.ports import JudgeReply, JudgeRequest
from migration_evals.oracles.judges.faults import check_provider, from_status, short
from migration_evals.oracles.judges.retry import Retrying
from migration_evals.oracles.judging import VERDICT_SCHEMA

__all__ = ["AnthropicJudge"]

PROVIDER = "anthropic"
_SCHEMA = anthropic.transform_schema(VERDICT_SCHEMA)


class AnthropicJudge:
    """Asks a Claude model for a verdict; the client comes from the caller."""

    def __init__(self, client: anthropic.Anthropic, retrying: Retrying) -> None:
        # One retry policy, ours: an SDK retrying underneath would multiply the attempts
        # and ignore the tier's time limit.
        self._client = client.with_options(max_retries=0)
        self._retrying = retrying

    @property
    def identity(self) -> str:
        return f"judge:{PROVIDER}/{anthropic.__version__}"

    def ask(self, request: JudgeRequest) -> JudgeReply:
        check_provider(request, PROVIDER)
        message = self._retrying.call(lambda timeout: self._create(request, timeout))
        return _reply(message)

    def _create(self, request: JudgeRequest, timeout: float) -> Message:
        sampling = None if request.temperature is None else {"temperature": request.temperature}
        try:
            return self._client.messages.create(
                model=request.model,
                max_tokens=request.max_tokens,
                system=request.system,
                messages=[{"role": "user", "content": request.prompt}],
                output_config={"format": {"type": "json_schema", "schema": _SCHEMA}},
                extra_body=sampling,
                timeout=timeout,
            )
        except anthropic.APITimeoutError as exc:
            raise JudgeUnavailableError(f"{PROVIDER} did not answer within {timeout:.1f}s") from exc
        except anthropic.APIConnectionError as exc:
            raise JudgeUnavailableError(f"{PROVIDER} unreachable: {short(exc)}") from exc
        except anthropic.APIStatusError as exc:
            raise from_status(PROVIDER, exc.status_code, exc.response.headers, exc.message) from exc
        except anthropic.AnthropicError as exc:
            raise JudgeError(f"{PROVIDER} client failed: {short(exc)}") from exc


def _refusal(message: Message) -> str | None:
    if message.stop_reason != "refusal":
        return None
    details = message.stop_details
    if details is not None and details.explanation:
        return details.explanation
    if details is not None and details.category:
        return f"refused (policy category {details.category})"
    return "refused (no explanation given)"


def _reply(message: Message) -> JudgeReply:
    usage = getattr(message, "usage", None)
    if usage is None:
        # Without usage the cost is unknown; better an error than a silent $0.
        raise JudgeError(f"{PROVIDER} returned a message without token usage")
    text = "".join(block.text for block in message.content if block.type == "text")
    # Cache reads and writes are input too; no cache is requested, so they are normally 0.
    input_tokens = (
        usage.input_tokens
        + (usage.cache_creation_input_tokens or 0)
        + (usage.cache_read_input_tokens or 0)
    )
    return JudgeReply(
        text=text,
        stop_reason=message.stop_reason or "",
        input_tokens=input_tokens,
        output_tokens=usage.output_tokens,
        refusal=_refusal(message),
    )
