"""What tests/bot/conftest.py promises the command-line tests."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_a_graded_demo_is_copied_into_the_tests_own_folder(
    demo_graded: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    assert demo_graded == tmp_path == Path.cwd()
    assert (tmp_path / "results.db").is_file() and (tmp_path / "cache" / "repos").is_dir()
    assert (tmp_path / "migration-evals-demo.json").is_file()
    # The tests that start from it share one worker, which grades the demo once.
    if hasattr(request.config, "workerinput"):
        assert request.node.nodeid.endswith("@graded-demo"), request.node.nodeid
