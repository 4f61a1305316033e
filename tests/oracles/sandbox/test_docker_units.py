"""The live adapter's pure parts, with no engine: build progress, leftovers, the user."""

from __future__ import annotations

from oracles.sandbox.capture import OutputCap
from oracles.sandbox.docker import _read_build, _stale, default_user
from oracles.sandbox.hardening import DEADLINE_LABEL, OWNER_LABEL


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
