"""The suite's own set-up: what tests/conftest.py promises the other tests."""

from __future__ import annotations

import pytest


@pytest.mark.docker
def test_a_service_test_runs_in_the_one_services_group(request: pytest.FixtureRequest) -> None:
    # Marked docker but asks for no engine, so it runs everywhere. Under xdist's loadgroup
    # the group shows as a suffix of the node id; without the suffix, tests of one engine
    # run on both workers and one worker's teardown removes images the other still uses.
    if not hasattr(request.config, "workerinput"):
        pytest.skip("not under pytest-xdist: there are no workers to keep apart")
    assert request.node.nodeid.endswith("@services"), request.node.nodeid


def test_a_test_of_no_service_is_left_to_any_worker(request: pytest.FixtureRequest) -> None:
    if not hasattr(request.config, "workerinput"):
        pytest.skip("not under pytest-xdist: there are no workers to keep apart")
    assert "@" not in request.node.nodeid, request.node.nodeid
