"""In-memory stand-ins for the ports, shared by every test (never copied per file)."""

from __future__ import annotations

import base64
import tarfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

import docker.errors

from migration_evals.bot.app.kinds import APP_KINDS
from migration_evals.bot.executor.trials import TRIAL
from migration_evals.bot.jobs.kinds import KindRegistry
from migration_evals.core.errors import ChangesetProviderError, JudgeUnavailableError, SandboxError
from migration_evals.core.model import Changeset, Envelope, Stamps, Tier, Trial, Verdict
from migration_evals.core.ports import (
    ImageConfig,
    ImageRef,
    Judge,
    JudgeReply,
    JudgeRequest,
    PullRequestInfo,
    PullRequestQuery,
    SandboxAction,
    SandboxRequest,
    SandboxResult,
)
from migration_evals.core.serving import ServingThread
from migration_evals.core.store import Store
from migration_evals.oracles.judges.retry import Retrying, RetryPolicy
from migration_evals.oracles.tree import ChangeKind, FileChange, MemoryTree

__all__ = [
    "JAVA17_CLASS_HEAD",
    "RUNS_APP",
    "BuildScript",
    "FakeClock",
    "FakeDispatcher",
    "FakeDockerClient",
    "FakeJudge",
    "FakeProvider",
    "FakePulledImage",
    "FakeRegistry",
    "FakeRegistryImages",
    "FakeSandbox",
    "FakeTimer",
    "LedgerGrader",
    "OutageJudge",
    "all_kinds",
    "fake_result",
    "judge_json",
    "maven_log",
    "memory_tree",
    "surefire_run",
]


JAVA17_CLASS_HEAD = "cafebabe0000003d"  # magic, minor 0, major 61
RUNS_APP = ImageConfig(user="app", cmd=("app",), workdir="/srv", env_names=("PATH",))


def all_kinds() -> KindRegistry:
    """Every job kind the project defines: the App's and the executor's trials."""
    return KindRegistry([*APP_KINDS, TRIAL])


def maven_log(run: int, failed: int = 0, skipped: int = 0, module: str = "m") -> str:
    """The lines Maven 3.9 and Surefire 3 print for one module's test execution."""
    level = "ERROR" if failed else "INFO"
    return (
        f"[INFO] --- surefire:3.5.2:test (default-test) @ {module} ---\n"
        "[INFO] Results:\n[INFO] \n"
        f"[{level}] Tests run: {run}, Failures: {failed}, Errors: 0, Skipped: {skipped}\n"
        f"[{level}] BUILD {'FAILURE' if failed else 'SUCCESS'}\n"
    )


def surefire_run(
    tests: Mapping[str, bool], classname: str = "x.ATest", image_id: str = ""
) -> SandboxResult:
    """A Maven test run, exiting 1 when a test fails as Surefire does: each test passes or
    fails as ``tests`` says, in its XML report and in Maven's printed summary."""
    cases = "".join(
        f'<testcase classname="{classname}" name="{name}">{"" if ok else "<failure/>"}</testcase>'
        for name, ok in tests.items()
    )
    report = {f"target/surefire-reports/TEST-{classname}.xml": f"<testsuite>{cases}</testsuite>"}
    failed = sum(not ok for ok in tests.values())
    output = maven_log(len(tests), failed) if tests else ""
    return SandboxResult(int(failed > 0), output, report, image_id=image_id)


GO_PASSING = (
    '{"Action":"run","Package":"m","Test":"TestA"}\n'
    '{"Action":"pass","Package":"m","Test":"TestA"}\n'
    '{"Action":"output","Package":"m","Output":"ok  \\tm\\t0.01s\\n"}\n'
    '{"Action":"pass","Package":"m"}\n'
)


def fake_result(request: SandboxRequest) -> SandboxResult:
    """A clean run; a build asked for class-file headers produced one Java 17 class, and
    a test suite ran one test that passed (a suite of no tests has nothing to compare)."""
    if any("surefire-reports" in pattern for pattern in request.collect):
        return surefire_run({"passes": True}, image_id=request.image_id())
    if "-json" in request.command:
        return SandboxResult(0, GO_PASSING, image_id=request.image_id())
    heads = {"target/classes/x/A.class": JAVA17_CLASS_HEAD} if request.inspect else {}
    return SandboxResult(exit_code=0, image_id=request.image_id(), file_heads=heads)


@dataclass
class FakeSandbox:
    """Answers each request with ``respond(request)``; records every request it saw.

    Images resolve to ``images[ref]`` (default ``sha256:fake-<ref>``), except those in
    ``missing``, which the engine lacks; an image's configuration is ``configs[image]``
    (default: an image that runs ``app``).
    """

    respond: Callable[[SandboxRequest], SandboxResult] = fake_result
    identity: str = "sandbox:fake"
    requests: list[SandboxRequest] = field(default_factory=list)
    images: dict[str, str] = field(default_factory=dict)
    configs: dict[str, ImageConfig] = field(default_factory=dict)
    missing: set[str] = field(default_factory=set)
    runs_live: bool = True  # its answers may take their time (``respond`` decides)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def resolve(self, image: str) -> ImageRef:
        if image in self.missing:
            raise SandboxError(f"image {image} is not on the Docker engine")
        return ImageRef(image, self.images.get(image, f"sha256:fake-{image}"))

    def inspect(self, image: str) -> ImageConfig:
        return self.configs.get(image, RUNS_APP)

    def run(self, request: SandboxRequest) -> SandboxResult:
        with self._lock:
            self.requests.append(request)
        return self.respond(request)

    def has_cache(self, cache: str) -> bool:
        return True


@dataclass
class BuildScript:
    """A ``FakeSandbox.respond`` for project builds, answering like the tools would.

    A resolution run answers by its project's build file (pom.xml or go.mod) in the tree
    it was given: ``resolutions[text]`` for the first ``text`` that file contains, else
    ``resolved``. Any other run answers ``run(request, patched)``, ``patched`` being
    whether it is not over the base tree (``base_tree``, the base's tree hash).
    """

    base_tree: str
    resolutions: Mapping[str, SandboxResult] = field(default_factory=dict)
    resolved: SandboxResult = field(default_factory=lambda: SandboxResult(0, image_id="sha256:r"))
    run: Callable[[SandboxRequest, bool], SandboxResult] = field(
        default=lambda request, _patched: fake_result(request)
    )

    def __call__(self, request: SandboxRequest) -> SandboxResult:
        if request.action is not SandboxAction.RESOLVE:
            return self.run(request, request.tree_hash != self.base_tree)
        assert request.tree is not None
        text = ""
        with (
            request.tree(0, 0, request.workdir) as archive,
            tarfile.open(fileobj=archive, mode="r|") as tar,
        ):
            for member in tar:
                handle = tar.extractfile(member) if member.isreg() else None
                if handle is not None and member.name in ("pom.xml", "go.mod"):
                    text += handle.read().decode()
        found = next((result for key, result in self.resolutions.items() if key in text), None)
        return found or self.resolved


@dataclass
class FakeJudge:
    """Answers every question with ``respond(request)``; records the questions."""

    respond: Callable[[JudgeRequest], JudgeReply]
    identity: str = "judge:fake"
    requests: list[JudgeRequest] = field(default_factory=list)

    def ask(self, request: JudgeRequest) -> JudgeReply:
        self.requests.append(request)
        return self.respond(request)


class OutageJudge:
    """A live judge adapter whose API is unavailable for its first ``down`` calls (a 429
    asking for ``retry_after_s``, or none), then answers as ``inner`` does; every call
    goes through ``Retrying`` as the live adapters' do, sleeping on ``timer``."""

    def __init__(
        self,
        inner: Judge,
        timer: FakeTimer,
        *,
        down: int,
        retry_after_s: float | None = None,
        policy: RetryPolicy | None = None,
    ) -> None:
        self.inner = inner
        self.timer = timer
        self.down = down
        self.retry_after_s = retry_after_s
        self.calls = 0
        self.answered = 0
        self.retrying = Retrying(
            policy or RetryPolicy(max_retries=4, deadline_s=180.0),
            sleep=timer.sleep,
            clock=timer,
            jitter=lambda: 1.0,
        )
        self._lock = threading.Lock()

    @property
    def identity(self) -> str:
        return self.inner.identity

    def ask(self, request: JudgeRequest) -> JudgeReply:
        return self.retrying.call(lambda _timeout: self._call(request))

    def _call(self, request: JudgeRequest) -> JudgeReply:
        with self._lock:
            self.calls += 1
            unavailable = self.calls <= self.down
        if unavailable:
            raise JudgeUnavailableError(
                "the judge API answered 429: rate limited", retry_after_s=self.retry_after_s
            )
        reply = self.inner.ask(request)
        with self._lock:
            self.answered += 1
        return reply


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


@dataclass(frozen=True)
class RegistryRequest:
    """One request an upstream registry received."""

    method: str
    path: str
    authorization: str | None


class FakeRegistry:
    """A package registry on loopback: answers GET and HEAD from ``files`` (path below the
    server's root to bytes), 404 otherwise, or ``status`` for every path when set (a
    failing registry); records every request. Use as a context manager."""

    def __init__(self, files: Mapping[str, bytes] | None = None) -> None:
        self.files = dict(files or {})
        # Path below the root to its Last-Modified header (as Maven Central sends it).
        self.modified: dict[str, str] = {}
        self.status: int | None = None
        self.seen: list[RegistryRequest] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _registry_handler(self))
        self._httpd.daemon_threads = True
        self._serving = ServingThread(self._httpd)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def paths(self) -> list[str]:
        with self._lock:
            return [request.path for request in self.seen]

    def answer(self, method: str, path: str, authorization: str | None) -> tuple[int, bytes]:
        with self._lock:
            self.seen.append(RegistryRequest(method, path, authorization))
        if self.status is not None:
            return self.status, b""
        body = self.files.get(path.lstrip("/"))
        return (404, b"") if body is None else (200, body)

    def __enter__(self) -> FakeRegistry:
        self._serving.start()
        return self

    def __exit__(
        self, _t: type[BaseException] | None, _v: BaseException | None, _tb: TracebackType | None
    ) -> None:
        self._serving.stop()


def _registry_handler(registry: FakeRegistry) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out as two small writes

        def do_GET(self) -> None:
            self._reply("GET")

        def do_HEAD(self) -> None:
            self._reply("HEAD")

        def _reply(self, method: str) -> None:
            status, body = registry.answer(method, self.path, self.headers.get("Authorization"))
            self.send_response(status)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(body)))
            modified = registry.modified.get(self.path.lstrip("/"))
            if modified and status == 200:
                self.send_header("Last-Modified", modified)
            self.end_headers()
            if method == "GET":
                self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

    return Handler


@dataclass
class LedgerGrader:
    """Grades like the cascade would (into the ledger): pass unless the patch is empty."""

    store: Store
    seen: list[Changeset] = field(default_factory=list)

    def __call__(self, changesets: Sequence[Changeset]) -> list[Trial]:
        trials = []
        for changeset in changesets:
            self.seen.append(changeset)
            verdict = Verdict.PASS if changeset.patch else Verdict.FAIL
            tid = f"t-{len(self.seen)}"
            envelope = Envelope(
                tid, changeset.id, Tier.APPLY, verdict, 0.001, 0.0, 0.1, Stamps("o", "r", "h")
            )
            trial = Trial(tid, "r-gold", changeset, (envelope,))
            self.store.ledger.append_trial(trial, {})
            trials.append(trial)
        return trials


@dataclass
class FakePulledImage:
    """An image a pull brought in; remembers the names it was tagged with."""

    id: str
    tags: list[tuple[str, str]] = field(default_factory=list)
    attrs: dict[str, Any] = field(default_factory=dict)

    def tag(self, repository: str, tag: str) -> None:
        self.tags.append((repository, tag))


@dataclass
class FakeRegistryImages:
    """What a registry behind the engine answers: tag -> digest, digest -> image."""

    digests: dict[str, str]
    local: dict[str, FakePulledImage] = field(default_factory=dict)
    pulls: list[str] = field(default_factory=list)

    def get(self, name: str) -> FakePulledImage:
        if name not in self.local:
            raise docker.errors.ImageNotFound(name)
        return self.local[name]

    def get_registry_data(self, name: str) -> Any:
        if name not in self.digests:
            raise docker.errors.NotFound(f"manifest unknown: {name}")
        return type("RegistryData", (), {"id": self.digests[name]})()

    def pull(self, reference: str) -> FakePulledImage:
        self.pulls.append(reference)
        pulled = FakePulledImage("sha256:pulled-" + reference.rsplit("@", 1)[1][7:15])
        self.local[reference] = pulled
        return pulled


@dataclass
class FakeDockerClient:
    """Just enough of ``docker.DockerClient`` for the live adapter to resolve and pull."""

    images: FakeRegistryImages
    api: Any = None

    def __post_init__(self) -> None:
        self.api = type("Api", (), {"hooks": {"response": []}})()


def memory_tree(base: Mapping[str, str], patched: Mapping[str, str | None]) -> MemoryTree:
    """The base files and the patch that makes ``patched`` (None deletes) of them."""
    after = {**base, **patched}
    changes = []
    for path, content in patched.items():
        if content is None:
            changes.append(FileChange(ChangeKind.DELETE, path, None))
            after.pop(path, None)
        elif path in base:
            changes.append(FileChange(ChangeKind.MODIFY, path, path))
        else:
            changes.append(FileChange(ChangeKind.ADD, None, path))
    encoded = {p: c.encode() for p, c in after.items() if c is not None}
    return MemoryTree({p: c.encode() for p, c in base.items()}, encoded, changes)


def armored_signature(packet: bytes, *, headers: bytes = b"Version: GnuPG v2\n") -> bytes:
    """``packet`` in ASCII armour, as a ``.asc`` file holds it."""
    data = base64.b64encode(packet)
    lines = b"\n".join(data[i : i + 64] for i in range(0, len(data), 64))
    return (
        b"-----BEGIN PGP SIGNATURE-----\n" + headers + b"\n" + lines + b"\n=xJDW\n"
        b"-----END PGP SIGNATURE-----\n"
    )


def signature_packet(seconds: int, *, new_format: bool = False) -> bytes:
    """A version 4 signature packet: an issuer subpacket, then its creation time."""
    issuer = bytes([9, 16]) + bytes(8)
    created = bytes([5, 2]) + seconds.to_bytes(4, "big")
    hashed = issuer + created
    body = bytes([4, 0, 1, 8]) + len(hashed).to_bytes(2, "big") + hashed + bytes([0, 0]) + bytes(6)
    if new_format:
        return bytes([0xC2, len(body)]) + body
    return bytes([0x89]) + len(body).to_bytes(2, "big") + body
