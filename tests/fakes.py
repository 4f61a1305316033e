"""In-memory stand-ins for the ports, shared by every test (never copied per file)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from core.ports import ImageRef, JudgeReply, JudgeRequest, SandboxRequest, SandboxResult

__all__ = ["JAVA17_CLASS_HEAD", "FakeJudge", "FakeSandbox", "fake_result", "judge_json"]


JAVA17_CLASS_HEAD = "cafebabe0000003d"  # magic, minor 0, major 61


def fake_result(request: SandboxRequest) -> SandboxResult:
    """A clean run; a build asked for class-file headers produced one Java 17 class."""
    heads = {"target/classes/x/A.class": JAVA17_CLASS_HEAD} if request.inspect else {}
    return SandboxResult(exit_code=0, image_id=request.image_id(), file_heads=heads)


@dataclass
class FakeSandbox:
    """Answers each request with ``respond(request)``; records every request it saw.

    Images resolve to ``images[ref]`` (default ``sha256:fake-<ref>``).
    """

    respond: Callable[[SandboxRequest], SandboxResult] = fake_result
    identity: str = "sandbox:fake"
    requests: list[SandboxRequest] = field(default_factory=list)
    images: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def resolve(self, image: str) -> ImageRef:
        return ImageRef(image, self.images.get(image, f"sha256:fake-{image}"))

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
