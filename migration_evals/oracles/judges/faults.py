"""What an HTTP failure of a judge API means for grading: retry, give up, or fix the setup.

Both SDKs report failures the same way (a status code, response headers, a message); the
adapters catch their SDK's exceptions and call these helpers, so the two providers map
onto the ``JudgeError`` tree identically. Messages are scrubbed and shortened because they
end up in envelope reasons, the ledger and check runs.
"""

from __future__ import annotations

from collections.abc import Mapping

from migration_evals.core.cassette import scrub
from migration_evals.core.errors import (
    JudgeAuthError,
    JudgeError,
    JudgeRequestError,
    JudgeUnavailableError,
)
from migration_evals.core.ports import JudgeRequest
from migration_evals.core.retry import retry_after_s

__all__ = ["check_provider", "from_status", "short"]

_RETRYABLE = {408, 429}
_AUTH = {401, 403}
_MESSAGE_LIMIT = 300


def short(message: object) -> str:
    text = str(scrub(str(message))).strip()
    return text if len(text) <= _MESSAGE_LIMIT else text[:_MESSAGE_LIMIT] + "..."


def from_status(
    provider: str, status: int, headers: Mapping[str, str], message: object
) -> JudgeError:
    """The judge error for an HTTP error status from ``provider``."""
    what = f"{provider} answered HTTP {status}: {short(message)}"
    if status in _RETRYABLE or status >= 500:
        return JudgeUnavailableError(what, retry_after_s=retry_after_s(headers))
    if status in _AUTH:
        return JudgeAuthError(f"{what} (check the API key)")
    return JudgeRequestError(what)


def check_provider(request: JudgeRequest, provider: str) -> None:
    # The wiring routes by the spec's provider; a mismatch is a wiring bug, not a verdict.
    if request.provider != provider:
        raise JudgeRequestError(
            f"the {provider} judge was asked to use provider {request.provider!r} "
            f"(model {request.model})"
        )
