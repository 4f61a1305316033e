"""The live adapter's pure parts, with no engine: build progress, leftovers, the user."""

from __future__ import annotations

from io import BytesIO
from typing import Any

import docker.errors
import pytest
import requests

from migration_evals.core.errors import SandboxError
from migration_evals.core.ports import SandboxAction, SandboxRequest
from migration_evals.oracles.sandbox import DockerSandbox, SandboxLimits
from migration_evals.oracles.sandbox.capture import OutputCap
from migration_evals.oracles.sandbox.docker import default_user
from migration_evals.oracles.sandbox.engine import freeze as _freeze
from migration_evals.oracles.sandbox.hardening import DEADLINE_LABEL, OWNER_LABEL, SANDBOX_LABEL
from migration_evals.oracles.sandbox.image_builds import read_build as _read_build
from migration_evals.oracles.sandbox.leftovers import _stale


def test_a_build_reports_its_image_or_its_error() -> None:
    output = OutputCap(10_000)
    done = _read_build([{"stream": "Step 1/2 : FROM x\n"}, {"aux": {"ID": "sha256:abc"}}], output)
    assert done == {"exit_code": 0, "image_id": "sha256:abc"}
    failed = _read_build(
        [{"stream": "Step 2/2 : RUN false\n"}, {"error": "boom", "errorDetail": {"code": 3}}],
        output,
    )
    assert failed == {"exit_code": 3}
    assert "boom" in output.text()


def test_leftovers_are_stale_past_their_deadline_or_when_their_owner_died() -> None:
    def labels(owner: str, deadline: float) -> dict[str, str]:
        return {OWNER_LABEL: owner, DEADLINE_LABEL: str(deadline)}

    def alive(pid: int) -> bool:
        return pid == 1

    assert _stale(labels("elsewhere:1", 50), 100, "here", alive)
    assert _stale(labels("here:2", 500), 100, "here", alive)
    assert not _stale(labels("here:1", 500), 100, "here", alive)
    assert not _stale(labels("elsewhere:2", 500), 100, "here", alive)


def test_the_container_user_is_never_root() -> None:
    assert default_user(euid=0, uid=0, gid=0) == "65534:65534"
    assert default_user(euid=1000, uid=1000, gid=100) == "1000:100"


class _Leftover:
    """A stale container or volume whose removal another harness may have started."""

    def __init__(self, status: int | None) -> None:
        self.labels = {SANDBOX_LABEL: "run", DEADLINE_LABEL: "0"}
        self.attrs = {"Labels": self.labels}
        self.status = status
        self.removed = False

    def remove(self, **_options: bool) -> None:
        if self.status is not None:
            response = requests.Response()
            response.status_code = self.status
            raise docker.errors.APIError("removal already in progress", response=response)
        self.removed = True


class _Listing:
    def __init__(self, found: list[_Leftover]) -> None:
        self.found = found

    def list(self, **_filters: object) -> list[_Leftover]:
        return self.found


def _leftovers_client(containers: list[_Leftover], volumes: list[_Leftover]) -> Any:
    api = type("Api", (), {"hooks": {"response": []}})()
    return type(
        "Client", (), {"api": api, "containers": _Listing(containers), "volumes": _Listing(volumes)}
    )()


def test_two_harnesses_reaping_the_same_leftovers_at_once_do_not_fail() -> None:
    # 409: the other harness's removal is under way; 404: it is already gone.
    containers = [_Leftover(409), _Leftover(None), _Leftover(404)]
    volumes = [_Leftover(409), _Leftover(None)]
    sandbox = DockerSandbox(_leftovers_client(containers, volumes), SandboxLimits())
    assert sandbox.reap(now=100.0) == 1
    assert [c.removed for c in containers] == [False, True, False]
    assert volumes[1].removed


def test_another_engine_error_while_reaping_is_an_infrastructure_error() -> None:
    sandbox = DockerSandbox(_leftovers_client([_Leftover(500)], []), SandboxLimits())
    with pytest.raises(SandboxError, match="cannot clean up old sandbox containers"):
        sandbox.reap(now=100.0)


def test_output_events_the_sandbox_has_no_capture_for_fail_before_any_container() -> None:
    # The client has no volumes or containers to create: the run must stop before them.
    sandbox = DockerSandbox(_leftovers_client([], []), SandboxLimits())
    request = SandboxRequest(
        SandboxAction.RUN, "img", ("true",), "t", output_events="tap", tree=lambda *_: BytesIO()
    )
    with pytest.raises(SandboxError, match="no capture for output events 'tap'"):
        sandbox.run(request)


class _Freezing:
    """A container whose pause fails ``failures`` times with ``message`` before it holds."""

    def __init__(self, failures: int, message: str = "unable to freeze: unknown") -> None:
        self.status = "running"
        self.failures = failures
        self.message = message
        self.pauses = 0

    def reload(self) -> None:
        pass

    def pause(self) -> None:
        self.pauses += 1
        if self.pauses <= self.failures:
            raise docker.errors.APIError(f"Cannot pause container: {self.message}")
        self.status = "paused"


def test_a_freeze_the_cgroup_gave_up_on_is_asked_again_a_little_later() -> None:
    waits: list[float] = []
    container = _Freezing(failures=2)
    assert _freeze(container, sleep=waits.append)
    assert container.pauses == 3
    assert waits == [0.5, 1.0]


def test_a_freeze_that_keeps_failing_is_an_engine_error_in_the_end() -> None:
    waits: list[float] = []
    container = _Freezing(failures=99)
    with pytest.raises(docker.errors.APIError, match="unable to freeze"):
        _freeze(container, sleep=waits.append)
    assert container.pauses == 5
    assert len(waits) == 4


def test_other_pause_errors_are_not_asked_again() -> None:
    container = _Freezing(failures=1, message="container is not running")
    with pytest.raises(docker.errors.APIError, match="not running"):
        _freeze(container, sleep=lambda _s: None)
    assert container.pauses == 1


def test_a_stopped_container_is_not_paused() -> None:
    container = _Freezing(failures=0)
    container.status = "exited"
    assert not _freeze(container)
    assert container.pauses == 0
