"""The trial's log of sandboxed runs: each run once, its side, and its output kept whole."""

from __future__ import annotations

from pathlib import Path

from migration_evals.core.artifacts import FolderArtifacts
from migration_evals.core.model import FabricatedMark
from migration_evals.core.ports import SandboxAction, SandboxRequest, SandboxResult
from migration_evals.oracles.run_logs import NOT_RECORDED, RunLog, keep_logs

REQUEST = SandboxRequest(SandboxAction.RUN, "img", ("mvn", "test"), tree_hash="base-tree")


def test_a_run_handed_back_by_the_baseline_cache_is_logged_once_with_its_side() -> None:
    log = RunLog()
    log.side("base-tree", "base")
    result = SandboxResult(exit_code=0, output="BUILD SUCCESS\n")
    log.note(REQUEST, result)
    log.note(REQUEST, result)  # the cache returns the run it just made
    [run] = log.drain()
    assert (run.side, run.label) == ("base", "run base")
    assert log.drain() == []


def test_outputs_are_kept_whole_and_fabricated_ones_are_not_recorded(tmp_path: Path) -> None:
    log = RunLog()
    long_output = "".join(f"line {n}\n" for n in range(50_000))
    log.note(REQUEST, SandboxResult(exit_code=1, output=long_output), "patched")
    mark = FabricatedMark("sandbox", "k", "c", "miss")
    log.note(REQUEST, SandboxResult.fabricated_default(mark), "base")
    artifacts = FolderArtifacts(tmp_path)
    kept, fabricated = keep_logs(log.drain(), artifacts)
    assert kept["recorded"] and kept["kept"] and kept["exit_code"] == 1
    assert artifacts.get(kept["artifact"]["sha256"]) == long_output.encode()
    assert fabricated == {**fabricated, "recorded": False, "note": NOT_RECORDED}
    assert "artifact" not in fabricated
