"""The GitHub App's settings from the environment: the public URL check runs link to."""

from __future__ import annotations

import pytest

from migration_evals.bot.settings import github_app_from_env
from migration_evals.core.errors import ConfigError


def test_the_public_url_is_a_base_url_without_its_trailing_slash() -> None:
    env = {"MIGRATION_EVALS_PUBLIC_URL": "https://evals.example.com/app/"}
    assert github_app_from_env(env).public_url == "https://evals.example.com/app"
    assert github_app_from_env({}).public_url is None


@pytest.mark.parametrize(
    "value", ["evals.example.com", "ftp://evals.example.com", "https://h/?a=1"]
)
def test_a_public_url_that_is_no_base_url_is_a_clear_error(value: str) -> None:
    with pytest.raises(ConfigError, match="PUBLIC_URL=.* must be the App's http"):
        github_app_from_env({"MIGRATION_EVALS_PUBLIC_URL": value})
