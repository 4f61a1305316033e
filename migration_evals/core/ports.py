"""Ports: the project's outside dependencies as ``typing.Protocol`` types.

Each port has a live adapter (docker SDK, anthropic/openai SDKs, GitHub), a recording
adapter that wraps the live one and writes cassettes, and a replaying adapter that reads
them. Requests expose ``key_data()``: the part of a request that identifies it, hashed into
the cassette key. Results carry ``fabricated`` marks when they did not come from a real
interaction.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from enum import StrEnum
from typing import IO, Any, Protocol

from migration_evals.core.model import Changeset, FabricatedMark, iso_date

__all__ = [
    "DEPENDENCY_CACHE_DIR",
    "SANDBOX_WORKDIR",
    "UNLISTED_SPECIAL_ENTRIES",
    "CacheMount",
    "ChangesetProvider",
    "GitHubClient",
    "ImageConfig",
    "ImageRef",
    "Judge",
    "JudgeReply",
    "JudgeRequest",
    "PullRequestInfo",
    "PullRequestQuery",
    "PullRequestReader",
    "RegistryFetch",
    "Sandbox",
    "SandboxAction",
    "SandboxRequest",
    "SandboxResult",
]


SANDBOX_WORKDIR = "/workspace"
"""Where a sandbox mounts the tree copy; tools inside report paths under it."""

DEPENDENCY_CACHE_DIR = "/deps"
"""Where a run sees its dependency cache (a Maven local repository, a Go module cache)."""


class SandboxAction(StrEnum):
    RUN = "run"  # run a command in an existing image over a copy of the tree
    BUILD = "build"  # build the tree's Dockerfile into an image
    # Run a command over a copy of the tree whose only way out is the registry gate:
    # dependency resolution, before the network-less build.
    RESOLVE = "resolve"
    # Start a built image as it would run (its own entrypoint, user and environment, no
    # tree), the command its CMD; ``timeout_s`` is how long it runs before the harness
    # stops it: a ``timed_out`` result is one that stayed up that long.
    START = "start"


@dataclass(frozen=True, slots=True)
class CacheMount:
    """A dependency cache a run sees at ``target``.

    ``cache`` is a logical name ("maven/<key>", "go"); the adapter decides where it is
    stored. Resolution runs write to it; builds and tests only read it. A ``fresh`` cache
    is emptied before the run, so what the run fetched is everything it holds.
    """

    cache: str
    target: str = DEPENDENCY_CACHE_DIR
    writable: bool = False
    fresh: bool = False

    def key_data(self) -> list[Any]:
        data: list[Any] = [self.cache, self.target, self.writable]
        return [*data, "fresh"] if self.fresh else data


@dataclass(frozen=True, slots=True)
class RegistryFetch:
    """One request a resolution run made through the registry gate, as the gate saw it.

    ``source``: ``store`` (served from the harness's cache), ``upstream`` (the registry
    answered ``status``), ``upstream-error`` (the registry could not be reached or failed),
    ``offline`` (offline mode and not cached), ``refused`` (not a path the gate serves).
    """

    route: str  # "maven" or "go"
    path: str
    status: int
    source: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "route": self.route,
            "path": self.path,
            "status": self.status,
            "source": self.source,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RegistryFetch:
        return cls(str(data["route"]), str(data["path"]), int(data["status"]), str(data["source"]))


@dataclass(frozen=True, slots=True)
class ImageRef:
    """An image reference (``name:tag`` or an id) resolved to its content id."""

    ref: str
    id: str
    fabricated: tuple[FabricatedMark, ...] = ()
    digest: str = ""  # repository@sha256:..., when the engine knows where it came from

    def to_dict(self) -> dict[str, Any]:
        found = {"ref": self.ref, "id": self.id}
        return {**found, "digest": self.digest} if self.digest else found

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ImageRef:
        return cls(ref=str(data["ref"]), id=str(data["id"]), digest=str(data.get("digest", "")))

    @classmethod
    def fabricated_default(cls, ref: str) -> Callable[[FabricatedMark], ImageRef]:
        return lambda mark: cls(ref=ref, id="fabricated", fabricated=(mark,))


@dataclass(frozen=True, slots=True)
class SandboxRequest:
    """Run ``command`` in ``image`` over the tree identified by ``tree_hash``.

    ``pinned`` holds the content id of every image the request depends on (the image it
    runs in, or the images a build starts FROM), so a recording names exactly what it
    ran on and a changed image never replays an old answer. ``collect`` globs name report
    files returned as text; ``inspect`` globs name binary files whose first bytes the
    harness reads itself (class-file versions), never trusting what the run printed.
    ``tree(uid, gid, subdir)`` streams that tree (or its folder ``subdir``) as a tar with
    every entry owned by ``uid``:``gid``, for the engine to copy into the container;
    replaying adapters never call it, so replay costs no file copies.
    """

    action: SandboxAction
    image: str
    command: tuple[str, ...]
    tree_hash: str
    collect: tuple[str, ...] = ()
    timeout_s: float = 600.0
    attempt: int = 0  # re-runs of the same command (flaky-test detection) are distinct requests
    pinned: tuple[tuple[str, str], ...] = ()
    inspect: tuple[str, ...] = ()
    # Where in the tree the command runs ("" is the root); ``collect`` and ``inspect``
    # globs are relative to it.
    workdir: str = ""
    mounts: tuple[CacheMount, ...] = ()
    environment: tuple[tuple[str, str], ...] = ()
    # The digest of the resolved dependency sets the mounted caches hold.
    dependencies: str = ""
    # What the output is, when the sandbox keeps it by its structure rather than by its
    # head and tail ("go-test-json": a go test -json stream, kept by test).
    output_events: str = ""
    # For a resolution: the moment (ISO 8601) whose registry it sees; Maven metadata then
    # lists only versions published by then ("" is today's registry).
    registry_as_of: str = ""
    tree: Callable[[int, int, str], IO[bytes]] | None = field(
        default=None, compare=False, repr=False
    )

    def key_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "action": self.action.value,
            "image": self.image,
            "images": dict(self.pinned),
            "command": list(self.command),
            "tree_hash": self.tree_hash,
            "collect": list(self.collect),
            "inspect": list(self.inspect),
            "attempt": self.attempt,
        }
        # Only when set, so requests without them keep their recorded keys.
        if self.workdir:
            data["workdir"] = self.workdir
        if self.mounts:
            data["mounts"] = [mount.key_data() for mount in self.mounts]
        if self.environment:
            data["environment"] = [list(pair) for pair in self.environment]
        if self.dependencies:
            data["dependencies"] = self.dependencies
        if self.output_events:
            data["output_events"] = self.output_events
        if self.registry_as_of:
            data["registry_as_of"] = self.registry_as_of
        if self.action is SandboxAction.START:
            data["timeout_s"] = self.timeout_s  # how long it must stay up decides the result
        return data

    def image_id(self) -> str:
        """The pinned content id of ``image`` (the reference itself if it is not pinned)."""
        return dict(self.pinned).get(self.image, self.image)


# The last of a result's ``special_entries`` when there were more than a sandbox lists by
# name: what is not listed cannot be compared with a base run's, so nothing excuses it.
UNLISTED_SPECIAL_ENTRIES = "only files, folders and links in the workspace (more than it lists)"


@dataclass(frozen=True, slots=True)
class SandboxResult:
    """What a sandboxed command did: exit code, capped output, collected report files.

    ``file_heads`` maps each inspected file to the hex of its first bytes. ``oom_killed``
    and ``workspace_exceeded`` say which limit stopped the run, beside ``timed_out``;
    ``workspace_limit`` names the workspace limit and its value, where the sandbox knows.
    ``special_entries`` lists what the run left in its workspace that is neither a regular
    file, a folder nor a link, or that its user cannot read (each worded as the limit it
    breaks); when the workspace broke no other limit, ``workspace_limit`` is the first of
    them. A run of the base commit may leave such entries itself (a suite that tests
    copying a FIFO): tiers compare the patched run's with the base's.
    """

    exit_code: int
    output: str = ""
    artifacts: Mapping[str, str] = field(default_factory=dict)
    duration_s: float = 0.0
    timed_out: bool = False
    image_id: str = ""
    output_truncated: bool = False
    file_heads: Mapping[str, str] = field(default_factory=dict)
    oom_killed: bool = False
    workspace_exceeded: bool = False
    workspace_limit: str = ""
    fetches: tuple[RegistryFetch, ...] = ()  # resolution runs: what went through the gate
    # Resolution runs: the Java packages in the jars they fetched, read by the harness.
    packages: tuple[str, ...] = ()
    fabricated: tuple[FabricatedMark, ...] = ()
    special_entries: tuple[str, ...] = ()

    @property
    def special_entries_only(self) -> bool:
        """Whether the only workspace limit the run broke is entries of a special kind."""
        return bool(self.special_entries) and self.workspace_limit == self.special_entries[0]

    def to_dict(self) -> dict[str, Any]:
        data = {
            "exit_code": self.exit_code,
            "output": self.output,
            "artifacts": dict(self.artifacts),
            "duration_s": self.duration_s,
            "timed_out": self.timed_out,
            "image_id": self.image_id,
            "output_truncated": self.output_truncated,
            "file_heads": dict(self.file_heads),
            "oom_killed": self.oom_killed,
            "workspace_exceeded": self.workspace_exceeded,
        }
        if self.workspace_limit:
            data["workspace_limit"] = self.workspace_limit
        if self.fetches:
            data["fetches"] = [fetch.to_dict() for fetch in self.fetches]
        if self.packages:
            data["packages"] = list(self.packages)
        if self.special_entries:
            data["special_entries"] = list(self.special_entries)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SandboxResult:
        return cls(
            exit_code=int(data["exit_code"]),
            output=str(data.get("output", "")),
            artifacts={str(k): str(v) for k, v in (data.get("artifacts") or {}).items()},
            duration_s=float(data.get("duration_s", 0.0)),
            timed_out=bool(data.get("timed_out", False)),
            image_id=str(data.get("image_id", "")),
            output_truncated=bool(data.get("output_truncated", False)),
            file_heads={str(k): str(v) for k, v in (data.get("file_heads") or {}).items()},
            oom_killed=bool(data.get("oom_killed", False)),
            workspace_exceeded=bool(data.get("workspace_exceeded", False)),
            workspace_limit=str(data.get("workspace_limit", "")),
            fetches=tuple(RegistryFetch.from_dict(f) for f in data.get("fetches") or ()),
            packages=tuple(str(name) for name in data.get("packages") or ()),
            special_entries=tuple(str(entry) for entry in data.get("special_entries") or ()),
        )

    @classmethod
    def fabricated_default(cls, mark: FabricatedMark) -> SandboxResult:
        """The ergonomic default on a cassette miss: a clean, empty success, stamped."""
        return cls(exit_code=0, image_id="fabricated", fabricated=(mark,))


@dataclass(frozen=True, slots=True)
class ImageConfig:
    """What an image does when it runs, as its configuration says (``docker inspect``).

    Environment variables are kept by name only: their values may be secrets baked into
    the image, and the image contract compares names.
    """

    user: str = ""
    entrypoint: tuple[str, ...] = ()
    cmd: tuple[str, ...] = ()
    workdir: str = ""
    exposed_ports: tuple[str, ...] = ()
    volumes: tuple[str, ...] = ()
    env_names: tuple[str, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    healthcheck: Mapping[str, Any] | None = None
    fabricated: tuple[FabricatedMark, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "user": self.user,
            "entrypoint": list(self.entrypoint),
            "cmd": list(self.cmd),
            "workdir": self.workdir,
            "exposed_ports": list(self.exposed_ports),
            "volumes": list(self.volumes),
            "env_names": list(self.env_names),
            "labels": dict(self.labels),
            "healthcheck": dict(self.healthcheck) if self.healthcheck is not None else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ImageConfig:
        healthcheck = data.get("healthcheck")
        return cls(
            user=str(data.get("user", "")),
            entrypoint=tuple(str(x) for x in data.get("entrypoint") or ()),
            cmd=tuple(str(x) for x in data.get("cmd") or ()),
            workdir=str(data.get("workdir", "")),
            exposed_ports=tuple(str(x) for x in data.get("exposed_ports") or ()),
            volumes=tuple(str(x) for x in data.get("volumes") or ()),
            env_names=tuple(str(x) for x in data.get("env_names") or ()),
            labels={str(k): str(v) for k, v in (data.get("labels") or {}).items()},
            healthcheck=dict(healthcheck) if isinstance(healthcheck, Mapping) else None,
        )

    @classmethod
    def fabricated_default(cls, mark: FabricatedMark) -> ImageConfig:
        """The ergonomic default on a cassette miss: an empty configuration, stamped.

        Two empty configurations leave the image contract nothing to compare, which is
        inconclusive, never a pass."""
        return cls(fabricated=(mark,))


class Sandbox(Protocol):
    """Port for tiers 2-3: run untrusted code in isolation.

    Infrastructure failures (engine down, image missing, harness killed) raise
    ``SandboxError``; whatever the candidate's code does is a ``SandboxResult``.
    """

    @property
    def identity(self) -> str:
        """Names the adapter and what it runs on; part of cache keys."""
        ...

    def resolve(self, image: str) -> ImageRef:
        """The content id of a local image; ``SandboxError`` if the engine lacks it (and,
        where the adapter may pull, cannot bring it in)."""
        ...

    def run(self, request: SandboxRequest) -> SandboxResult: ...

    def has_cache(self, cache: str) -> bool:
        """Whether the dependency cache a kept resolution filled is still there."""
        ...

    @property
    def runs_live(self) -> bool:
        """Whether a run executes for real, taking its time (an engine), rather than being
        answered at once (a replay): only then can two runs gain by overlapping."""
        ...

    def inspect(self, image: str) -> ImageConfig:
        """The configuration of an image on the engine (a content id, usually one a build
        returned); ``SandboxError`` if the engine lacks it."""
        ...


@dataclass(frozen=True, slots=True)
class JudgeRequest:
    """One question to one judge model; every field is part of the cassette key.

    ``temperature`` None sends no sampling temperature at all (models that take none).
    """

    provider: str
    model: str
    system: str
    prompt: str
    temperature: float | None
    max_tokens: int

    def key_data(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "model": self.model,
            "system": self.system,
            "prompt": self.prompt,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }


@dataclass(frozen=True, slots=True)
class JudgeReply:
    """A judge's raw answer; the judge tier parses and validates it (fail closed)."""

    text: str
    stop_reason: str
    input_tokens: int = 0
    output_tokens: int = 0
    refusal: str | None = None
    fabricated: tuple[FabricatedMark, ...] = ()
    # A replayed answer: the cassette's note of who wrote it (a recorder's identity, or a
    # person's note for hand-written answers); empty for a live answer. Not part of a
    # cassette's response, so recording and replaying leave the cassettes as they are.
    recorded_by: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "stop_reason": self.stop_reason,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "refusal": self.refusal,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JudgeReply:
        return cls(
            text=str(data["text"]),
            stop_reason=str(data["stop_reason"]),
            input_tokens=int(data.get("input_tokens", 0)),
            output_tokens=int(data.get("output_tokens", 0)),
            refusal=data.get("refusal"),
        )

    @classmethod
    def fabricated_default(cls, mark: FabricatedMark) -> JudgeReply:
        """The ergonomic default on a cassette miss: a well-formed pass, stamped.

        It quotes no evidence, so the judge tier can still not call it a real pass.
        """
        text = (
            '{"verdict": "pass", "confidence": 0.0, '
            '"rationale": "no recording for this request", "evidence": []}'
        )
        return cls(text=text, stop_reason="end_turn", fabricated=(mark,))


class Judge(Protocol):
    """Port for tier 4: ask an LLM for a verdict."""

    @property
    def identity(self) -> str: ...

    def ask(self, request: JudgeRequest) -> JudgeReply: ...


@dataclass(frozen=True, slots=True)
class PullRequestQuery:
    """Which pull requests to mine: repositories, and/or labels, authors or a search query.

    Labels are alternatives (any of them); authors too. Without labels, authors or
    ``search`` the provider lists every pull request of ``repos``.
    """

    repos: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()
    search: str | None = None
    limit: int | None = None

    @property
    def needs_search(self) -> bool:
        return bool(self.labels or self.authors or self.search)


@dataclass(frozen=True, slots=True)
class PullRequestInfo:
    """One pull request, as the App and the miners see it (dates are aware).

    The one pull-request type: the miners and the App both build it from the REST or
    webhook JSON (``from_rest``). ``repo_created_at`` is None when GitHub did not
    say; it is never invented, because the contamination tripwire buckets by it.
    """

    repo: str  # "owner/name"
    number: int
    title: str
    url: str
    clone_url: str
    default_branch: str
    base_sha: str
    head_sha: str
    author: str
    is_agent: bool
    created_at: datetime
    repo_created_at: date | None  # None: the API did not say
    merged_at: datetime | None = None
    closed_at: datetime | None = None
    merge_commit_sha: str | None = None
    labels: tuple[str, ...] = ()
    branch: str = ""  # the head branch's name
    state: str = ""  # "open" or "closed", as GitHub says

    @classmethod
    def from_rest(
        cls, data: Mapping[str, Any], *, agent_authors: Collection[str] = ()
    ) -> PullRequestInfo:
        """From the REST (``GET /pulls/{n}``) or webhook shape of a pull request."""
        base_repo = data["base"]["repo"]
        created = _parse_time(base_repo.get("created_at"))
        author = str((data.get("user") or {}).get("login", ""))
        merged_at = _parse_time(data.get("merged_at"))
        return cls(
            repo=str(base_repo["full_name"]),
            number=int(data["number"]),
            title=str(data.get("title", "")),
            url=str(data.get("html_url", "")),
            clone_url=str(base_repo.get("clone_url", "")),
            default_branch=str(base_repo.get("default_branch", "")),
            base_sha=str(data["base"]["sha"]),
            head_sha=str(data["head"]["sha"]),
            author=author,
            is_agent=author in agent_authors,
            created_at=_parse_time(data.get("created_at")) or datetime.fromtimestamp(0, UTC),
            repo_created_at=created.date() if created else None,  # unknown, never invented
            merged_at=merged_at,
            closed_at=_parse_time(data.get("closed_at")),
            # For an unmerged PR GitHub reports a test merge here; it means nothing yet.
            merge_commit_sha=(data.get("merge_commit_sha") or None) if merged_at else None,
            labels=tuple(str(label["name"]) for label in data.get("labels") or ()),
            branch=str(data["head"].get("ref", "")),
            state=str(data.get("state", "")),
        )

    @property
    def merged(self) -> bool:
        return self.merged_at is not None

    @property
    def closed_unmerged(self) -> bool:
        return self.closed_at is not None and self.merged_at is None

    @property
    def changeset_id(self) -> str:
        """Names the pull request at its head commit, so a force-push is a new changeset."""
        return f"{self.repo}/pull/{self.number}@{self.head_sha[:12]}"

    def to_changeset(
        self,
        *,
        patch: str,
        recipe: str,
        model: str,
        base_commit: str | None = None,
        recipe_params: Mapping[str, Any] | None = None,
    ) -> Changeset:
        """The changeset to grade; ``base_commit`` is the merge base when a clone knows it."""
        return Changeset(
            id=self.changeset_id,
            repo=self.clone_url,
            base_commit=base_commit or self.base_sha,
            patch=patch,
            recipe=recipe,
            model=model,
            repo_created_at=self.repo_created_at,
            recipe_params=dict(recipe_params or {}),
            source=self.url or None,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "repo": self.repo,
            "number": self.number,
            "title": self.title,
            "url": self.url,
            "clone_url": self.clone_url,
            "default_branch": self.default_branch,
            "base_sha": self.base_sha,
            "head_sha": self.head_sha,
            "author": self.author,
            "is_agent": self.is_agent,
            "created_at": self.created_at.isoformat(),
            "repo_created_at": iso_date(self.repo_created_at),
            "merged_at": self.merged_at.isoformat() if self.merged_at else None,
            "closed_at": self.closed_at.isoformat() if self.closed_at else None,
            "merge_commit_sha": self.merge_commit_sha,
            "labels": list(self.labels),
            "branch": self.branch,
            "state": self.state,
        }


def _parse_time(value: Any) -> datetime | None:
    if not value:
        return None
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


class PullRequestReader(Protocol):
    """The part of the GitHub port every adapter has: one pull request and its diff.

    The App's client (``GitHubClient``) and the miners' provider (``ChangesetProvider``)
    both implement it; failures are ``InfrastructureError``s (``ServiceUnavailableError``
    when trying again later can help), never a value that looks like an answer.
    """

    def pull_request(self, repo: str, number: int) -> PullRequestInfo: ...

    def diff(self, repo: str, number: int) -> str:
        """The pull request's diff against its merge base, as GitHub renders it."""
        ...


class GitHubClient(PullRequestReader, Protocol):
    """The GitHub port as the App uses it, for one installation.

    Raw reads return GitHub's JSON (the handlers pick the fields they need); writes are
    paced by the adapter. An unavailable API raises at once rather than waiting, so the
    job that called is put back with backoff and its worker thread serves other jobs.
    """

    def pull(self, repo: str, number: int) -> dict[str, Any]: ...
    def pull_diff(self, repo: str, number: int) -> str: ...
    def merge_base(self, repo: str, base: str, head: str) -> str: ...
    def pulls_for_commit(self, repo: str, sha: str) -> list[dict[str, Any]]: ...
    def open_pulls(self, repo: str) -> list[dict[str, Any]]: ...
    def repositories(self) -> list[str]: ...
    def file_text(self, repo: str, path: str, ref: str) -> str | None: ...
    def check_runs(self, repo: str, sha: str, name: str) -> list[dict[str, Any]]: ...
    def permission(self, repo: str, user: str) -> tuple[str, str]: ...
    def create_check_run(self, repo: str, body: Mapping[str, Any]) -> dict[str, Any]: ...
    def update_check_run(
        self, repo: str, run_id: int, body: Mapping[str, Any]
    ) -> dict[str, Any]: ...
    def comment(self, repo: str, number: int, text: str) -> dict[str, Any]: ...
    def react(self, repo: str, comment_id: int, content: str) -> None: ...


class ChangesetProvider(PullRequestReader, Protocol):
    """Port for mining: pull requests from a forge (GitHub), with their diffs.

    Failures raise ``ChangesetProviderError`` (infrastructure): an unreachable API or a
    cassette miss is never a label.
    """

    def pull_requests(self, query: PullRequestQuery) -> Iterator[PullRequestInfo]: ...
