"""The one GitHub client, over a swappable transport; the App and the miners both use it.

::

    GitHubApi          requests → GitHubError tree (core.errors), one mapping for all
    └── Transport      send(GitHubRequest) -> GitHubResponse
        ├── PyGithubTransport   live HTTPS, through PyGithub's requester (``live``)
        ├── RecordingTransport  wraps the live one, writes each answer as a cassette
        ├── ReplayingTransport  answers from the cassettes; a miss raises, naming the request
        └── MockTransport       answers from a function, for tests

The miners' changeset provider (``migration_evals.miners.github``) and the App's
installation client (``migration_evals.bot.app.github``) are callers of ``GitHubApi``,
not clients of their own: each keeps only its policy (the miners wait limits out on
their clock; the App puts its job back and paces its writes).
"""

from __future__ import annotations

from migration_evals.core.github.api import (
    DEFAULT_ACCEPT,
    DIFF_MEDIA_TYPE,
    GitHubApi,
    GitHubRequest,
    GitHubResponse,
    Transport,
    error_for,
    next_link,
)
from migration_evals.core.github.transports import (
    PORT,
    MockTransport,
    RecordingTransport,
    ReplayingTransport,
)

__all__ = [
    "DEFAULT_ACCEPT",
    "DIFF_MEDIA_TYPE",
    "PORT",
    "GitHubApi",
    "GitHubRequest",
    "GitHubResponse",
    "MockTransport",
    "RecordingTransport",
    "ReplayingTransport",
    "Transport",
    "error_for",
    "next_link",
]
