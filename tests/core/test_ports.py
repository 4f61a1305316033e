"""Port value types survive their recorded form (cassettes, the baseline cache)."""

from __future__ import annotations

from migration_evals.core.ports import SandboxResult


def test_the_named_workspace_limit_is_kept_and_absent_when_none_was_hit() -> None:
    over = SandboxResult(
        0, workspace_exceeded=True, workspace_limit="workspace depth (1000 folders)"
    )
    assert SandboxResult.from_dict(over.to_dict()) == over
    # A recording made before limits had names still reads, and a run within its limits
    # records nothing new (cassettes made then still match what is recorded now).
    assert "workspace_limit" not in SandboxResult(0).to_dict()
    assert (
        SandboxResult.from_dict({"exit_code": 1, "workspace_exceeded": True}).workspace_limit == ""
    )
