"""The judge port over cassettes: replay recorded answers, or record live ones."""

from __future__ import annotations

from dataclasses import replace

from migration_evals.core.cassette import CassetteLibrary
from migration_evals.core.ports import Judge, JudgeReply, JudgeRequest

__all__ = ["PORT", "RecordingJudge", "ReplayingJudge"]

PORT = "judge"


class ReplayingJudge:
    """Answers from cassettes keyed by (model, full request); a miss is stamped fabricated."""

    identity = "judge:replay"

    def __init__(self, cassettes: CassetteLibrary) -> None:
        self.cassettes = cassettes

    def ask(self, request: JudgeRequest) -> JudgeReply:
        return self.cassettes.replay_as(
            PORT,
            request.key_data(),
            JudgeReply.from_dict,
            JudgeReply.fabricated_default,
            origin=lambda reply, by: replace(reply, recorded_by=by),
        )


class RecordingJudge:
    """Asks the live judge and writes every answer (scrubbed) to a cassette."""

    def __init__(self, live: Judge, cassettes: CassetteLibrary) -> None:
        self.live = live
        self.cassettes = cassettes

    @property
    def identity(self) -> str:
        return self.live.identity

    def ask(self, request: JudgeRequest) -> JudgeReply:
        reply = self.live.ask(request)
        self.cassettes.record(PORT, request.key_data(), reply.to_dict(), recorded_by=self.identity)
        return reply
