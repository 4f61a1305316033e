"""``migration-evals config check``: every problem of a repository's configuration in one
pass, exactly as the App finds them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from migration_evals.bot.app.repo_config import RepoConfigError, parse_repo_config
from migration_evals.bot.cli import main
from migration_evals.bot.exits import ExitStatus
from migration_evals.core.specs import SpecSet
from tests.bot.app.conftest import CONFIG
from tests.core.test_yamlio import BILLION_LAUGHS

# Schema problems (an unknown key, a missing model, a wrong type, a rule that matches
# nothing) beside spec problems (an unknown model, an unknown recipe): all in one report.
BROKEN = """\
agents:
  - author: bot
    model: nope
  - author: 5
recipes:
  - recipe: nope
    label: x
  - recipe: java8-to-17
extra: 1
"""
ALL_PROBLEMS = [
    "(top level): Additional properties are not allowed ('extra' was unexpected)",
    "agents[0].model: 'nope' is not a known model",
    "agents[1]: 'model' is a required property",
    "agents[1].author: 5 is not of type 'string'",
    "recipes[0].recipe: unknown recipe 'nope'",
    "recipes[1]: give at least one of label, branch_prefix, title_contains",
]


def _write(folder: Path, text: str) -> Path:
    path = folder / ".github" / "migration-evals.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_every_problem_is_listed_in_one_pass(
    env: Path, specs: SpecSet, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(env, BROKEN)
    assert main(["config", "check", str(path), "--json"]) == ExitStatus.CONFIG_INVALID
    document = json.loads(capsys.readouterr().out)
    assert document["ok"] is False and len(document["problems"]) == len(ALL_PROBLEMS)
    for found, expected in zip(document["problems"], ALL_PROBLEMS, strict=True):
        assert found.startswith(expected)
    with pytest.raises(RepoConfigError) as caught:  # the App reports the same list
        parse_repo_config(BROKEN, specs)
    assert list(caught.value.problems) == document["problems"]


def test_the_default_path_and_a_good_file(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(env, CONFIG)
    assert main(["config", "check"]) == ExitStatus.OK
    assert capsys.readouterr().out == ".github/migration-evals.yml: ok\n"


def test_hostile_yaml_is_refused_by_the_apps_loader(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(env, BILLION_LAUGHS)
    assert main(["config", "check", str(path)]) == ExitStatus.CONFIG_INVALID
    out = capsys.readouterr().out
    assert "1 problem(s)" in out and "anchors are not allowed" in out


def test_a_missing_file_or_a_folder_is_one_clear_error(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["config", "check", "nope.yml"]) == ExitStatus.ERROR
    assert "nope.yml does not exist; give the path" in capsys.readouterr().err
    assert main(["config", "check", str(env)]) == ExitStatus.ERROR
    assert "is not a regular file" in capsys.readouterr().err
