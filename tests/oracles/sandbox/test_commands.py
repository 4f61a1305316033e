"""The recipe's build command line: Dockerfile and context, never outside the tree."""

from __future__ import annotations

import pytest

from migration_evals.core.errors import SandboxError
from migration_evals.oracles.sandbox.commands import (
    build_arguments,
    build_target,
    dockerfile_in_context,
)


def test_dockerfile_and_context() -> None:
    assert build_arguments(["docker", "build", "-f", "Dockerfile", "."]) == ("Dockerfile", ".")
    assert build_arguments(["docker", "build", "."]) == ("Dockerfile", ".")
    assert build_arguments(["docker", "build", "--file", "app/Dockerfile", "app"]) == (
        "app/Dockerfile",
        "app",
    )
    assert dockerfile_in_context("app/Dockerfile", "app") == "Dockerfile"


@pytest.mark.parametrize(
    "command",
    [
        ["docker", "build", "-f", "../Dockerfile", "."],
        ["docker", "build", "-f", "/etc/Dockerfile", "."],
        ["docker", "build", "/"],
        ["docker", "build", "-f", "a/Dockerfile", "b"],
    ],
)
def test_paths_outside_the_tree_are_refused(command: list[str]) -> None:
    with pytest.raises(SandboxError):
        build_arguments(command)


def test_a_target_stage_is_read_from_the_command_line() -> None:
    command = ["docker", "build", "-f", "app/Dockerfile", "--target", "runtime", "."]
    assert build_arguments(command) == ("app/Dockerfile", ".")
    assert build_target(command) == "runtime"
    assert build_target(["docker", "build", "."]) is None
