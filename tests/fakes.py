"""In-memory stand-ins for the ports, shared by every test (never copied per file)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from core.errors import ChangesetProviderError
from core.ports import (
    ImageRef,
    JudgeReply,
    JudgeRequest,
    PullRequestInfo,
    PullRequestQuery,
    SandboxRequest,
    SandboxResult,
)

__all__ = [
    "JAVA17_CLASS_HEAD",
    "FakeClock",
    "FakeDispatcher",
    "FakeJudge",
    "FakeProvider",
    "FakeSandbox",
    "FakeTimer",
    "fake_result",
    "judge_json",
]


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


@dataclass
class FakeProvider:
    """A changeset provider over a dict of pull requests; ``down`` ones fail like an outage."""

    pulls: dict[tuple[str, int], PullRequestInfo] = field(default_factory=dict)
    diffs: dict[tuple[str, int], str] = field(default_factory=dict)
    down: set[tuple[str, int]] = field(default_factory=set)
    asked: list[tuple[str, int]] = field(default_factory=list)

    def add(self, *pulls: PullRequestInfo) -> FakeProvider:
        for pull in pulls:
            self.pulls[(pull.repo, pull.number)] = pull
        return self

    def pull_requests(self, query: PullRequestQuery) -> Iterator[PullRequestInfo]:
        for pull in self.pulls.values():
            if not query.repos or pull.repo in query.repos:
                yield pull

    def pull_request(self, repo: str, number: int) -> PullRequestInfo:
        self.asked.append((repo, number))
        if (repo, number) in self.down:
            raise ChangesetProviderError(f"GitHub answered 502 for pull request {repo}#{number}")
        return self.pulls[(repo, number)]

    def diff(self, repo: str, number: int) -> str:
        if (repo, number) in self.down:
            raise ChangesetProviderError(f"GitHub answered 502 for the diff of {repo}#{number}")
        return self.diffs.get((repo, number), "")


@dataclass
class FakeTimer:
    """A monotonic clock (call it) and a ``sleep`` that advances it instead of waiting."""

    now: float = 0.0
    sleeps: list[float] = field(default_factory=list)

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@dataclass
class FakeDispatcher:
    """The broker in memory: records announcements and, given ``deliver``, hands each job
    id to it at once, ``copies`` times (a broker redelivering). ``fail`` makes every
    publish raise it, like a broker that is down."""

    deliver: Callable[[int], object] | None = None
    copies: int = 1
    fail: Exception | None = None
    waiting: int = 0  # what ``backlog`` says is still queued in the broker
    published: list[tuple[int, Any]] = field(default_factory=list)
    closed: bool = False

    def backlog(self, _kind: Any) -> int:
        return self.waiting

    def publish(self, jobs: Sequence[tuple[int, Any]]) -> None:
        if self.fail is not None:
            raise self.fail
        self.published.extend(jobs)
        if self.deliver is not None:
            for job_id, _kind in jobs:
                for _ in range(self.copies):
                    self.deliver(job_id)

    def close(self) -> None:
        self.closed = True
