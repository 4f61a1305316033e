"""In-memory stand-ins for the ports, shared by every test (never copied per file)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from core.ports import JudgeReply, JudgeRequest, SandboxRequest, SandboxResult

__all__ = ["FakeClock", "FakeJudge", "FakeSandbox", "judge_json"]


@dataclass
class FakeSandbox:
    """Answers each request with ``respond(request)``; records every request it saw."""

    respond: Callable[[SandboxRequest], SandboxResult] = lambda _r: SandboxResult(exit_code=0)
    identity: str = "sandbox:fake"
    requests: list[SandboxRequest] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self, request: SandboxRequest) -> SandboxResult:
        with self._lock:
            self.requests.append(request)
        return self.respond(request)


@dataclass
class FakeJudge:
    """Answers every question with ``respond(request)``; records the questions."""

    respond: Callable[[JudgeRequest], JudgeReply]
    identity: str = "judge:fake"
    requests: list[JudgeRequest] = field(default_factory=list)

    def ask(self, request: JudgeRequest) -> JudgeReply:
        self.requests.append(request)
        return self.respond(request)


def judge_json(verdict: str, evidence: list[str], confidence: float = 0.9) -> str:
    import json

    return json.dumps(
        {
            "verdict": verdict,
            "confidence": confidence,
            "rationale": f"judged {verdict}",
            "evidence": evidence,
        }
    )


@dataclass
class FakeClock:
    """A clock that only moves when told to; ``sleep`` moves it and remembers how far."""

    current: datetime
    slept: list[float] = field(default_factory=list)

    def now(self) -> datetime:
        return self.current

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.current += timedelta(seconds=seconds)

    def advance(self, **delta: float) -> None:
        self.current += timedelta(**delta)
