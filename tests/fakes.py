"""In-memory stand-ins for the ports, shared by every test (never copied per file)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

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
    """A monotonic clock and a ``sleep`` that advances it instead of waiting."""

    now: float = 0.0
    sleeps: list[float] = field(default_factory=list)

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
