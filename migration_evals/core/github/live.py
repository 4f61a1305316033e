"""The live transport: PyGithub's requester carries each request over HTTPS.

PyGithub does the wire work it is good at (its ``requests`` session and connection
reuse, the ``User-Agent``, following GitHub's redirects, waiting out a ``202``, spacing
requests out when asked). ``Requester.requestJson`` returns the raw status, headers and
body without judging them, so the client's one error mapping reads every answer, live or
replayed. The ``Authorization`` header comes with the request (the requester holds no
credentials), so one transport serves the App's JWT and every installation's token.

The App's JWTs are signed here too, by PyGithub's ``AppAuth``: this is the one module
that imports PyGithub (a test holds it to that).
"""

from __future__ import annotations

import functools
from typing import Any

import requests
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from github import Auth, Github

from migration_evals.core.errors import GitHubTransportError
from migration_evals.core.github.api import GitHubRequest, GitHubResponse

__all__ = ["AppJwt", "PyGithubTransport"]


class PyGithubTransport:
    """Real HTTPS to ``base_url`` through a PyGithub requester."""

    def __init__(
        self,
        base_url: str,
        *,
        user_agent: str = "migration-evals",
        timeout_s: int = 30,
        seconds_between_requests: float | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        # No retries inside urllib3: the callers decide (the miners wait, the App re-queues).
        self._github = Github(
            base_url=self.base_url,
            user_agent=user_agent,
            timeout=timeout_s,
            retry=None,
            seconds_between_requests=seconds_between_requests,
            seconds_between_writes=None,
        )

    def send(self, request: GitHubRequest) -> GitHubResponse:
        headers = {"Accept": request.accept}
        if request.authorization:
            headers["Authorization"] = request.authorization
        try:
            status, answered, text = self._github.requester.requestJson(
                request.method, request.path, headers=headers, input=request.body
            )
        except requests.RequestException as exc:
            raise GitHubTransportError(
                f"cannot reach GitHub at {self.base_url} for {request.describe()}: {exc}"
            ) from exc
        return GitHubResponse(status, {str(k).lower(): str(v) for k, v in answered.items()}, text)

    def close(self) -> None:
        self._github.close()


class AppJwt:
    """The App's ``Authorization`` value: a fresh JWT signed with its private key."""

    def __init__(self, app_id: int, private_key: str) -> None:
        self._auth = Auth.AppAuth(app_id, _ParsedKey(private_key))

    def __call__(self) -> str:
        return f"Bearer {self._auth.token}"


class _ParsedKey:
    """The App's private key as PyJWT signs with it, parsed once per key: handed the PEM,
    PyJWT parses and checks it again for every JWT (about 50 ms for an RSA key, one JWT
    per installation token). A PEM that does not parse goes to PyJWT as it is, which
    refuses it as it always did."""

    def __init__(self, pem: str) -> None:
        self._pem = pem

    def __call__(self) -> Any:
        return _parsed_private_key(self._pem) or self._pem


@functools.lru_cache(maxsize=8)
def _parsed_private_key(pem: str) -> Any:
    try:
        return serialization.load_pem_private_key(pem.encode(), password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        return None
