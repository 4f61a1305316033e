"""Every sandboxed command a trial's tier ran or reused, with its whole output, for the
record beside the ledger.

A tier notes each run it sees in the trial's ``RunLog`` (``TrialContext.logs``): the runs
it makes (``TrialSandbox.run``), the base runs and dependency resolutions it reuses from
the baseline cache (their output is the one it graded on), and which side of the trial
each tree is. The cascade drains the log after each tier and keeps each output as an
artifact (``migration_evals.core.artifacts``); the envelope lists them (``keep_logs``) by digest.

A run whose result was fabricated (a replay with no cassette for it) has no output to
keep: its entry says it was not recorded, and no artifact is made up for it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from migration_evals.core.artifacts import ArtifactKind, ArtifactStore, prepare
from migration_evals.core.model import patch_bytes
from migration_evals.core.ports import SandboxAction, SandboxRequest, SandboxResult

__all__ = ["NOT_RECORDED", "LoggedRun", "RunLog", "keep_logs"]

NOT_RECORDED = "not recorded: no cassette answered this run, so its result is fabricated"


@dataclass(frozen=True, slots=True)
class LoggedRun:
    side: str  # "base", "patched", or "" when the tree is neither side as such
    request: SandboxRequest
    result: SandboxResult

    @property
    def label(self) -> str:
        verb = {SandboxAction.RUN: "run"}.get(self.request.action, self.request.action.value)
        parts = [verb, self.side or "tree"]
        if self.request.workdir:
            parts.append(f"in {self.request.workdir}")
        if self.request.attempt:
            parts.append(f"attempt {self.request.attempt + 1}")
        return " ".join(parts)


class RunLog:
    """The runs one trial's tiers saw, in order, each once."""

    def __init__(self) -> None:
        self._runs: list[LoggedRun] = []
        self._sides: dict[str, str] = {}
        self._lock = threading.Lock()

    def side(self, tree_hash: str, side: str) -> None:
        """Remember which side of the trial the tree ``tree_hash`` is."""
        with self._lock:
            self._sides.setdefault(tree_hash, side)

    def note(self, request: SandboxRequest, result: SandboxResult, side: str = "") -> None:
        with self._lock:
            if any(seen.result is result for seen in self._runs):
                return  # a run made and then handed back by the baseline cache
            found = side or self._sides.get(request.tree_hash, "")
            self._runs.append(LoggedRun(found, request, result))

    def drain(self) -> list[LoggedRun]:
        """The runs noted since the last drain (one tier's)."""
        with self._lock:
            runs, self._runs = self._runs, []
        return runs


def _entry(run: LoggedRun, artifacts: ArtifactStore | None) -> dict[str, Any]:
    request, result = run.request, run.result
    entry: dict[str, Any] = {
        "label": run.label,
        "side": run.side,
        "action": request.action.value,
        "image": request.image,
        "command": list(request.command),
        "workdir": request.workdir,
        "attempt": request.attempt,
        "exit_code": result.exit_code,
        "duration_s": result.duration_s,
        "timed_out": result.timed_out,
        # The sandbox itself keeps a command's output's head and tail up to its limit.
        "sandbox_cut": result.output_truncated,
    }
    if result.fabricated:
        return {**entry, "recorded": False, "note": NOT_RECORDED}
    content = patch_bytes(result.output)  # any text encodes, undecodable bytes as they came
    if artifacts is None:
        ref, _ = prepare(content, ArtifactKind.LOG)
        kept = False
    else:
        ref, kept = artifacts.put(content, ArtifactKind.LOG), True
    return {**entry, "recorded": True, "kept": kept, "artifact": ref.to_dict()}


def keep_logs(runs: Sequence[LoggedRun], artifacts: ArtifactStore | None) -> list[dict[str, Any]]:
    """Each run's output kept as an artifact (only its digest computed without a store),
    and what the envelope says of it."""
    return [_entry(run, artifacts) for run in runs]
