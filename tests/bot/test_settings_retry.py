"""The job retry settings, and the retired in-process retry variables refused by name."""

from __future__ import annotations

import pytest

from migration_evals.bot.settings import github_app_from_env
from migration_evals.core.errors import ConfigError


def test_the_job_backoff_is_read_from_the_environment() -> None:
    env = {
        "MIGRATION_EVALS_JOB_RETRY_SECONDS": "3",
        "MIGRATION_EVALS_JOB_RETRY_MAX_SECONDS": "120",
    }
    settings = github_app_from_env(env)
    assert (settings.job_retry_s, settings.job_retry_max_s) == (3.0, 120.0)
    assert github_app_from_env({}).job_retry_max_s == 600.0


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("GITHUB_MAX_RETRIES", "JOB_MAX_ATTEMPTS"),
        ("GITHUB_MAX_RETRY_WAIT", "JOB_RETRY_MAX_SECONDS"),
    ],
)
def test_a_retired_variable_is_refused_naming_its_successor(old: str, new: str) -> None:
    with pytest.raises(ConfigError, match=f"MIGRATION_EVALS_{old} is no longer read.*{new}"):
        github_app_from_env({f"MIGRATION_EVALS_{old}": "5"})
