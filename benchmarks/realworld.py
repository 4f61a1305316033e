"""Real-world benchmark: real, merged migration commits graded live, beside a bare build.

Each case of ``benchmarks/realworld/cases.jsonl`` names a public repository, a merged
migration commit and its parent. For every case this script

1. finds the repository's bare git directory under ``--mirrors DIR/<mirror>/``;
2. makes the patch (``git diff --binary parent commit``) and a one-line changesets file
   (repo = that git directory, base commit = the parent, the case's recipe);
3. grades it with the project's own command line,
   ``migration-evals run --sandbox live --mode replay --json``, tiers 1-3 live, the judge
   from cassettes (a cassette miss is fabricated and shown as such, apart from tiers 1-3);
4. times it: a **cold** pass (empty cache directory) when asked for with ``--cold`` or when
   the cache directory is new, then a **warm** re-grade with the same cache directory and a
   fresh ledger, so no stored envelope can be reused (any reuse is reported);
5. times a **bare** build and test of a fresh copy of the same patched tree, with warm
   dependency caches and nothing of the project built before: Maven offline on this
   machine (``mvn -o test`` by default, ``--bare-goal verify`` for the full lifecycle)
   against a local repository warmed by one untimed online run in another copy, as an
   unprivileged user when run as root; ``go build ./... && go test -count=1 ./...`` in the
   recipe's image with the grade's own dependency caches (its module cache, and the build
   cache its resolution made of the dependencies: compiled, and vetted for facts), no
   network, on the sandbox's CPU quota. Only the go commands are timed.

Then it prints a table (tier reached, verdict, shortened reason, cause class, expectation
and times per case) and totals; the last line is one JSON object with the figures.

    python benchmarks/realworld.py --mirrors DIR [--cases FILE] [--only ID ...] [--jobs N]
                                   [--cache DIR] [--cold] [--no-bare] [--no-warm] [--repeat N]
                                   [--out FILE]

Cause classes: ``pass``; ``candidate-fail`` (the grader blames the patch; when the reason
reads like infrastructure the likely cause is shown beside it); ``inconclusive``;
``infra:<cause>`` for infrastructure errors (output-limit, registry, toolchain, build-root,
base-does-not-build, not-supported, image-missing, engine, timeout, other); ``missing``
(mirror or commit not found: reported, never a crash); ``runner-error`` (the command line
produced no readable result).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from migration_evals.core.store import (
    Store,  # the run's ledger is read back for evidence lines and durations
)
from migration_evals.oracles.ecosystems.go.build_env import go_build_env
from migration_evals.oracles.projects import Project

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CASES = ROOT / "benchmarks" / "realworld" / "cases.jsonl"
MODEL = "claude-sonnet-4-5"
GRADED_TIERS = ("apply", "compile", "tests")
CACHE_MARKER = ".realworld-cache"
BARE_DIR = ".bare"
REASON_WIDTH = 70

# Reason text -> infrastructure cause, first match wins. Ordered from the most specific.
_CAUSES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE))
    for name, pattern in (
        ("output-limit", r"exceeded the output limit"),
        (
            "base-does-not-build",
            r"base commit does not build|baseline (cannot|could not|did not|failed)|"
            r"base does not build",
        ),
        (
            "not-supported",
            r"^not supported|: not supported|no go\.mod|go\.mod file not found|"
            r"cannot find main module|gopath",
        ),
        (
            "image-missing",
            r"image .*(not (on|present|found)|missing|unknown)|no such image|"
            r"pull access denied|not on the engine|manifest unknown",
        ),
        (
            "build-root",
            r"there is no pom|no pom in this directory|could not find the selected project|"
            r"build root|does not contain a go\.mod|directory prefix \. does not contain|"
            r"pom\.xml (not found|missing)|cannot locate specified dockerfile",
        ),
        (
            "toolchain",
            r"toolchain|go\.mod requires go|invalid go version|unknown directive|"
            r"release version \d+ not supported|invalid target release|"
            r"unsupported class file|class file has wrong version|requires go ?>=|"
            r"go: errors parsing go\.mod",
        ),
        ("test-network", r"need a network while they run"),
        (
            "registry",
            r"registry|maven central|could not resolve|could not transfer|"
            r"cannot access (central|.*repository)|offline mode|goproxy|go mod download|"
            r"module lookup disabled|missing go\.sum entry|cannot find module providing|"
            r"dependenc(y|ies) .*(missing|not found|unresolv)|non-resolvable|"
            r"plugin .* (could not be resolved|not found)|unknown packaging|"
            r"dial tcp|no such host|connection refused",
        ),
        (
            "engine",
            r"\bengine (is )?(down|not|unreachable|did not answer)|docker daemon|"
            r"cannot connect to the docker|container .* killed from outside",
        ),
        ("timeout", r"timed out|timeout"),
    )
)


# ---------------------------------------------------------------------------- cases


@dataclass
class Case:
    """One line of the cases file."""

    id: str
    repo: str
    mirror: str
    commit: str
    parent: str
    kind: str
    recipe: str
    recipe_params: dict[str, Any]
    outcome: str
    expect: dict[str, Any]
    build: dict[str, Any]
    raw: dict[str, Any] = field(repr=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Case:
        return cls(
            id=str(data["id"]),
            repo=str(data.get("repo", "")),
            mirror=str(data["mirror"]),
            commit=str(data["commit"]),
            parent=str(data["parent"]),
            kind=str(data.get("kind", "")),
            recipe=str(data["recipe"]),
            recipe_params=dict(data.get("recipe_params") or {}),
            outcome=str(data.get("outcome", "survived")),
            expect=dict(data.get("expect") or {}),
            build=dict(data.get("build") or {}),
            raw=data,
        )

    @property
    def roots(self) -> list[str]:
        roots = self.build.get("roots") or ["."]
        return [str(r) for r in roots]

    @property
    def expected_verdict(self) -> str:
        return str(self.expect.get("verdict", "pass"))

    @property
    def expected_cause(self) -> str | None:
        cause = self.expect.get("cause")
        return str(cause) if cause else None


def load_cases(path: Path, only: Sequence[str]) -> list[Case]:
    cases: list[Case] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            cases.append(Case.from_dict(json.loads(line)))
        except (ValueError, KeyError) as exc:
            raise SystemExit(f"{path}:{number}: not a case ({exc})") from None
    if only:
        known = {c.id for c in cases}
        unknown = [o for o in only if o not in known and not any(c.id.startswith(o) for c in cases)]
        if unknown:
            raise SystemExit(f"--only: no case {', '.join(unknown)} in {path}")
        cases = [c for c in cases if any(c.id == o or c.id.startswith(o) for o in only)]
    return cases


# ---------------------------------------------------------------------------- git


def _is_git_dir(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").exists()


def find_git_dir(mirrors: Path, mirror: str) -> Path | None:
    """The bare git directory of ``mirror``: the folder itself, or one inside it."""
    top = mirrors / mirror
    if not top.is_dir():
        return None
    if _is_git_dir(top):
        return top
    for candidate in (top / "repo", top / "repo.git", top / ".git"):
        if _is_git_dir(candidate):
            return candidate
    for depth_one in sorted(p for p in top.iterdir() if p.is_dir()):
        if _is_git_dir(depth_one):
            return depth_one
        for depth_two in sorted(p for p in depth_one.iterdir() if p.is_dir()):
            if _is_git_dir(depth_two):
                return depth_two
    return None


def git(git_dir: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "--git-dir", str(git_dir), *args], capture_output=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr.decode("utf-8", "replace").strip() or f"git {args[0]}")
    return done.stdout.decode("utf-8", "replace")


def has_commit(git_dir: Path, sha: str) -> bool:
    done = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "-e", f"{sha}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


def first_commit_date(git_dir: Path, commit: str) -> str:
    dates = git(git_dir, "log", "--max-parents=0", "--format=%as", commit).split()
    return min(dates) if dates else "1970-01-01"


def is_complete(git_dir: Path) -> bool:
    """Whether every object reachable in the mirror is there (a full clone would work)."""
    done = subprocess.run(
        ["git", "--git-dir", str(git_dir), "fsck", "--connectivity-only", "--no-dangling"],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


def trimmed_repo(git_dir: Path, commit: str, dest: Path) -> Path:
    """A bare repository holding ``commit`` alone (depth 1), for a mirror that lacks
    objects elsewhere in its history (a stored snapshot may leave out large files), so the
    grader's clone of it works. The commit keeps its id. Made beside ``dest`` and moved
    there whole, so a fetch cut short (a kill, a restart) leaves no copy that looks done."""
    if _holds_base(dest, commit):
        return dest
    shutil.rmtree(dest, ignore_errors=True)  # a copy of another commit, or one left half-made
    dest.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    try:
        git(work, "init", "-q", "--bare")
        upload = "git -c uploadpack.allowAnySHA1InWant=true upload-pack"
        git(
            work,
            "fetch",
            "-q",
            "--depth=1",
            "--no-tags",
            f"--upload-pack={upload}",
            git_dir.resolve().as_uri(),
            commit,
        )
        git(work, "update-ref", "refs/heads/base", commit)
        git(work, "symbolic-ref", "HEAD", "refs/heads/base")
        work.rename(dest)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return dest


def _holds_base(dest: Path, commit: str) -> bool:
    """Whether ``dest`` is a finished depth-1 copy of ``commit``."""
    if not (dest / "HEAD").exists():
        return False
    done = subprocess.run(
        ["git", "--git-dir", str(dest), "rev-parse", "-q", "--verify", "refs/heads/base"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode == 0 and done.stdout.strip() == commit


def export_tree(git_dir: Path, commit: str, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.Popen(
        ["git", "--git-dir", str(git_dir), "archive", commit], stdout=subprocess.PIPE
    )
    subprocess.run(["tar", "-x", "-C", str(dest)], stdin=archive.stdout, check=True)
    if archive.stdout is not None:
        archive.stdout.close()
    if archive.wait() != 0:
        raise RuntimeError(f"git archive {commit} failed")


# ---------------------------------------------------------------------------- grading


@dataclass
class Prepared:
    case: Case
    git_dir: Path | None = None
    patch: str = ""
    created: str = ""
    problem: str | None = None
    graded_repo: Path | None = None  # what the changeset points at (the mirror or a trim)
    note: str = ""


def prepare(case: Case, mirrors: Path, trims: Path) -> Prepared:
    prepared = Prepared(case)
    git_dir = find_git_dir(mirrors, case.mirror)
    if git_dir is None:
        prepared.problem = f"mirror {case.mirror!r} not found under {mirrors}"
        return prepared
    prepared.git_dir = git_dir
    for sha in (case.parent, case.commit):
        if not has_commit(git_dir, sha):
            prepared.problem = f"commit {sha[:12]} not in {git_dir}"
            return prepared
    try:
        prepared.patch = git(git_dir, "diff", "--binary", "--full-index", case.parent, case.commit)
        prepared.created = first_commit_date(git_dir, case.commit)
    except RuntimeError as exc:
        prepared.problem = f"git: {exc}"
        return prepared
    if not prepared.patch.strip():
        prepared.problem = "empty diff between parent and commit"
        return prepared
    prepared.graded_repo = git_dir
    if not is_complete(git_dir):
        try:
            prepared.graded_repo = trimmed_repo(git_dir, case.parent, trims / _safe(case.id))
            prepared.note = "mirror lacks objects; graded from a depth-1 copy of the parent"
        except RuntimeError as exc:
            prepared.problem = f"mirror lacks objects and no depth-1 copy could be made: {exc}"
    return prepared


def changeset_line(prepared: Prepared) -> dict[str, Any]:
    case = prepared.case
    return {
        "id": case.id,
        "repo": str(prepared.graded_repo or prepared.git_dir),
        "base_commit": case.parent,
        "patch_file": f"{_safe(case.id)}.diff",
        "recipe": case.recipe,
        "model": MODEL,
        "repo_created_at": prepared.created,
        "recipe_params": case.recipe_params,
        "source": case.repo or None,
    }


def _safe(case_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "__", case_id)


def compile_project() -> None:
    """Byte-compile the project's packages, as an installed wheel has them: with
    PYTHONDONTWRITEBYTECODE set, an editable install compiles them again at every start,
    which is not part of grading."""
    packages = [str(ROOT / name) for name in ("bot", "core", "gate", "oracles", "miners")]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *packages], check=False)


def cli_command() -> list[str]:
    venv = ROOT / ".venv" / "bin" / "migration-evals"
    if venv.exists():
        return [str(venv)]
    found = shutil.which("migration-evals")
    if found:
        return [found]
    return [
        sys.executable,
        "-c",
        "from migration_evals.bot.cli import main; raise SystemExit(main())",
    ]


@dataclass
class Graded:
    """What one CLI run said about one case."""

    seconds: float = 0.0
    trial: dict[str, Any] | None = None
    problem: str | None = None
    evidence: dict[str, list[str]] = field(default_factory=dict)
    durations: dict[str, float] = field(default_factory=dict)
    load: float | None = None  # one-minute load average as it started


def grade(prepared: Prepared, workdir: Path, cache: Path, timeout: float) -> Graded:
    """Grade one prepared case with its own changesets file and its own fresh ledger."""
    workdir.mkdir(parents=True, exist_ok=True)
    line = changeset_line(prepared)
    (workdir / line["patch_file"]).write_text(prepared.patch, encoding="utf-8")
    changesets = workdir / "changesets.jsonl"
    changesets.write_text(json.dumps(line) + "\n", encoding="utf-8")
    db = workdir / "rw.db"
    for stale in workdir.glob("rw.db*"):
        stale.unlink()
    # A re-grade writes to a ledger that exists: its schema is made before the clock starts
    # (a fresh ledger per grade keeps the verdict cache from answering in its place).
    Store.open(f"sqlite:///{db}").close()
    command = [
        *cli_command(),
        "run",
        str(changesets),
        "--sandbox",
        "live",
        "--mode",
        "replay",
        "--json",
        "--db",
        f"sqlite:///{db}",
        "--cache-dir",
        str(cache),
    ]
    env = dict(os.environ, MIGRATION_EVALS_CACHE_DIR=str(cache))
    started = time.perf_counter()
    with subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env=env,
        start_new_session=True,
    ) as child:
        try:
            stdout, stderr = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _end(child)
            return Graded(
                time.perf_counter() - started, problem=f"no result within {timeout:.0f} s"
            )
        except BaseException:
            _end(child)
            raise
    graded = Graded(time.perf_counter() - started)
    done = subprocess.CompletedProcess(command, child.returncode, stdout, stderr)
    (workdir / "stderr.txt").write_bytes(done.stderr)
    (workdir / "stdout.json").write_bytes(done.stdout)
    try:
        document = json.loads(done.stdout.decode("utf-8", "replace"))
        trials = [t for t in document.get("trials", []) if t.get("id") == prepared.case.id]
        graded.trial = trials[0] if trials else None
    except ValueError:
        document = None
    if graded.trial is None:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
        graded.problem = f"exit {done.returncode}: " + " | ".join(tail)[:300]
        return graded
    graded.evidence, graded.durations = _ledger_details(db)
    return graded


def _end(child: subprocess.Popen[Any]) -> None:
    """End a grading run we started, and whatever it started, by its process group."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGTERM)
    try:
        child.wait(timeout=20)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()


def _ledger_details(db: Path) -> tuple[dict[str, list[str]], dict[str, float]]:
    """Evidence lines and durations per tier, read back from the run's own ledger."""
    evidence: dict[str, list[str]] = {}
    durations: dict[str, float] = {}
    with contextlib.suppress(Exception):  # the ledger's layout is the project's to change
        store = Store.open(f"sqlite:///{db}")
        try:
            for entry in store.ledger.entries():
                envelope = entry.envelope
                tier = envelope.tier.value
                durations[tier] = round(float(envelope.duration_s), 2)
                lines = [" ".join(str(item).split()) for item in envelope.evidence]
                lines += [f"log: {line}" for line in _telling_lines(envelope.details)]
                evidence[tier] = lines
        finally:
            store.close()
    return evidence, durations


_TELLING = re.compile(
    r"\[ERROR\]|^go: |error|cannot|not found|no such|denied|unsupported|does not|failed|"
    r"^pattern |not supported",
    re.I,
)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _telling_lines(details: Any, limit: int = 3) -> list[str]:
    """The first few lines of a tier's captured output that say what went wrong."""
    tail = details.get("output_tail") if isinstance(details, dict) else None
    if not isinstance(tail, str):
        return []
    found: list[str] = []
    for raw in tail.splitlines():
        line = " ".join(_ANSI.sub("", raw).split())
        if line and line not in found and _TELLING.search(line) and line != "[ERROR]":
            if "re-run maven" in line.lower() or "full stack trace" in line.lower():
                continue
            found.append(line)
        if len(found) >= limit:
            break
    return found


# ---------------------------------------------------------------------------- verdicts


def classify_reason(text: str) -> str:
    for name, pattern in _CAUSES:
        if pattern.search(text):
            return f"infra:{name}"
    return "infra:other"


@dataclass
class Verdict:
    reached: str = "-"
    verdict: str = "-"
    reason: str = ""
    cause: str = "-"
    hint: str | None = None
    judge: str = "-"
    cached_tiers: list[str] = field(default_factory=list)


def read_verdict(graded: Graded) -> Verdict:
    if graded.trial is None:
        return Verdict(verdict="-", reason=graded.problem or "", cause="runner-error")
    tiers = {t["tier"]: t for t in graded.trial.get("tiers", [])}
    result = Verdict()
    result.cached_tiers = [name for name, t in tiers.items() if t.get("cached")]
    judge = tiers.get("judge")
    if judge and judge.get("verdict") != "skipped":
        fabricated = " (fabricated)" if judge.get("fabricated") else ""
        result.judge = f"{judge.get('verdict')}{fabricated}"
    for name in GRADED_TIERS:
        tier = tiers.get(name)
        if tier is None or tier.get("verdict") == "skipped":
            break
        result.reached = name
        result.verdict = str(tier.get("verdict"))
        result.reason = str(tier.get("reason", ""))
        if result.verdict != "pass":
            break
    evidence = " ".join(graded.evidence.get(result.reached, []))
    text = f"{result.reason} {evidence}"
    if result.verdict == "pass":
        result.cause = "pass"
    elif result.verdict == "fail":
        result.cause = "candidate-fail"
        hint = classify_reason(text)
        result.hint = hint if hint != "infra:other" else None
    elif result.verdict == "inconclusive":
        result.cause = "inconclusive"
    elif result.verdict == "error":
        result.cause = classify_reason(text)
    return result


def _meets(expected_verdict: str, expected_cause: str | None, verdict: Verdict) -> bool:
    if expected_verdict == "pass":
        return verdict.cause == "pass"
    if expected_verdict == "error":
        if not verdict.cause.startswith("infra:"):
            return False
        return expected_cause is None or verdict.cause == expected_cause
    if expected_verdict == "fail":
        return verdict.cause == "candidate-fail"
    return verdict.verdict == expected_verdict


def matches(case: Case, verdict: Verdict) -> bool:
    """The grade is what the case expects, or one of its listed acceptable alternatives."""
    if _meets(case.expected_verdict, case.expected_cause, verdict):
        return True
    for alternative in case.expect.get("also_acceptable") or []:
        expected_verdict, _, expected_cause = str(alternative).partition(" ")
        if _meets(expected_verdict, expected_cause or None, verdict):
            return True
    return False


# ---------------------------------------------------------------------------- bare builds


def _as_user(command: str, cpus: int | None = None) -> list[str]:
    """Run as an unprivileged user when we are root (tests behave as in the sandbox), on
    the first ``cpus`` processors when given (the sandbox's CPU quota, like for like)."""
    pin = ["taskset", "-c", f"0-{cpus - 1}"] if cpus and shutil.which("taskset") else []
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("runuser"):
        return [*pin, "runuser", "-m", "-u", "nobody", "--", "sh", "-c", command]
    return [*pin, "sh", "-c", command]


def _sandbox_limits() -> dict[str, Any]:
    """The limits of every sandboxed run (``specs/oracle.yaml``)."""
    spec = yaml.safe_load((ROOT / "specs" / "oracle.yaml").read_text(encoding="utf-8"))
    return dict(spec.get("sandbox", {}))


def sandbox_cpus() -> int:
    """The sandbox's CPU quota (``specs/oracle.yaml``), rounded up to whole processors."""
    return max(1, math.ceil(float(_sandbox_limits().get("cpus", 1.0))))


def _chown_nobody(*paths: Path) -> None:
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        for path in paths:
            subprocess.run(["chown", "-R", "nobody:nogroup", str(path)], check=False)


def _timed_shell(
    command: str,
    cwd: Path,
    env: dict[str, str],
    log: Path,
    timeout: float,
    *,
    cpus: int | None = None,
) -> tuple[int, float]:
    started = time.perf_counter()
    with log.open("ab") as out:
        out.write(f"\n$ {command}  (in {cwd})\n".encode())
        out.flush()
        with subprocess.Popen(
            _as_user(command, cpus),
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        ) as child:
            try:
                code = child.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                _end(child)
                code = -1
            except BaseException:
                _end(child)
                raise
    return code, time.perf_counter() - started


@dataclass
class Bare:
    seconds: float | None = None
    ok: bool = False
    note: str = ""
    load: float | None = None  # one-minute load average as it started


# The Go bare build, in the recipe's image with the grade's own dependency cache mounted
# read-only: the recipe's resolution command, offline, names the build cache it made for
# this tree (it finds it made and makes nothing); then the build and the tests start from
# a private cache seeded with it, as the grade's steps do. Only the go commands are timed.
_GO_BARE_SCRIPT = r"""cp -R /src/. /tmp/tree && cd "/tmp/tree/$ROOT" || exit 125
key=$(GOPROXY=off GOCACHE=/tmp/list-cache "$@" 2>/dev/null |
  sed -n 's/^== build cache == //p')
echo "== build cache == ${key:-none}"
export MIGRATION_EVALS_BUILD_CACHE="$key" GOFLAGS="${BARE_GOFLAGS:-$GOFLAGS}"
exec with-go-cache sh -c 's=$(date +%s%N); go build ./... && go test -count=1 ./...; rc=$?
echo "== timed ms == $(( ($(date +%s%N) - s) / 1000000 ))"; exit $rc'
"""
_TIMED_MS = re.compile(r"^== timed ms == (\d+)$", re.M)
_BARE_KEY = re.compile(r"^== build cache == (\S+)$", re.M)


def _maven_commands(tree: Path, root: str, goal: str, repo_local: str) -> tuple[str, str]:
    """(warm-up, timed) commands: the warm-up fills the local repository without
    building the project itself; the timed one builds and tests a fresh copy."""
    # the Maven the build asks for: its wrapper when it has one (from Maven Central)
    maven = "sh ./mvnw" if (tree / root / "mvnw").exists() else "mvn"
    return f"{maven} -B -q {repo_local} {goal}", f"{maven} -o -B {repo_local} {goal}"


def _recipe_sandbox(recipe: str) -> dict[str, Any]:
    path = ROOT / "specs" / "recipes" / f"{recipe}.yaml"
    return dict(yaml.safe_load(path.read_text(encoding="utf-8"))["sandbox"])


def _go_bare_flags(tree: Path) -> str:
    """The GOFLAGS the grade's steps use in this module (``-mod=mod`` before Go 1.16)."""
    found = go_build_env(
        Project("go", ""),
        lambda name: (tree / name).read_bytes() if (tree / name).is_file() else None,
    )
    return found.get("GOFLAGS", "")


def go_bare_build(
    prepared: Prepared, scratch: Path, grade_cache: Path, timeout: float, cpus: int | None
) -> Bare:
    """``go build ./... && go test -count=1 ./...`` of a fresh copy of the patched tree in
    the recipe's image, with the grade's dependency caches (read-only) and limits: the
    same toolchain and the same dependencies compiled, nothing of the module."""
    case = prepared.case
    deps = grade_cache / "deps" / "caches" / "go"
    if not deps.is_dir():
        return Bare(note=f"no Go dependency cache in {grade_cache}: grade the case first")
    assert prepared.git_dir is not None
    sandbox = _recipe_sandbox(case.recipe)
    tree = scratch / "tree"
    if tree.exists():
        shutil.rmtree(tree)
    export_tree(prepared.git_dir, case.commit, tree)
    total, passed, tested, notes = 0.0, True, True, []
    for index, root in enumerate(case.roots):
        log = scratch / f"timed-{index}.log"
        code, output = _docker_bare(
            sandbox,
            (tree, deps),
            root,
            cpus=cpus,
            timeout=timeout,
            goflags=_go_bare_flags(tree / root),
        )
        log.write_text(output, encoding="utf-8")
        timed = _TIMED_MS.search(output)
        key = _BARE_KEY.search(output)
        if key is None or key[1] == "none":
            notes.append(f"{root}: no build cache of the grade's")
        if timed is None:
            return Bare(note=f"bare build did not run (exit {code}): {output.strip()[-200:]}")
        total += int(timed[1]) / 1000
        passed = passed and code == 0
        tested = tested and (code == 0 or _tests_ran(log))
    shutil.rmtree(tree, ignore_errors=True)
    return _bare_outcome(total, passed, tested, "; ".join(notes))


def _docker_bare(
    sandbox: dict[str, Any],
    folders: tuple[Path, Path],
    root: str,
    *,
    cpus: int | None,
    timeout: float,
    goflags: str,
) -> tuple[int, str]:
    """Run the Go bare script over ``folders`` (the tree, the Go dependency cache) with the
    sandbox's memory and /tmp limits; (exit code, output)."""
    tree, deps = folders
    limits = _sandbox_limits()
    cpu_quota = str(cpus or os.cpu_count() or 1)
    tmpfs = f"/tmp:exec,size={limits.get('tmpfs_mb', 1024)}m"  # noqa: S108 (the container's)
    command = [
        "docker", "run", "--rm", "--network", "none", "--cpus", cpu_quota,
        "--memory", f"{limits.get('memory_mb', 2048)}m", "--user", "65534:65534",
        "--tmpfs", tmpfs,
        "--mount", f"type=bind,source={deps},target=/deps,readonly",
        "--mount", f"type=bind,source={tree},target=/src,readonly",
        # the sandbox's own HOME and TMPDIR (migration_evals/oracles/sandbox/hardening.py)
        "-e", "HOME=/tmp", "-e", "TMPDIR=/tmp",
        "-e", f"ROOT={root}", "-e", f"BARE_GOFLAGS={goflags}",
        str(sandbox["image"]), "sh", "-c", _GO_BARE_SCRIPT, "bare",
        *[str(part) for part in sandbox["resolve"]["command"]],
    ]  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return -1, f"no result within {timeout:.0f} s"
    return done.returncode, (done.stdout + done.stderr).decode("utf-8", "replace")


def _bare_outcome(total: float, passed: bool, tested: bool, note: str = "") -> Bare:
    if passed:
        return Bare(round(total, 1), True, note)
    if tested:  # the suite ran; some tests fail here (as they do at the base commit)
        return Bare(round(total, 1), True, note or "tests ran, some fail on this machine")
    return Bare(round(total, 1), False, "did not build on this machine")


def bare_build(
    prepared: Prepared,
    scratch: Path,
    caches: Path,
    timeout: float,
    *,
    goal: str = "test",
    cpus: int | None = None,
    grade_cache: Path | None = None,
) -> Bare:
    """A bare build and test of a fresh copy of the patched tree, with warm dependency
    caches and nothing of the project built: what the grader's warm re-grade has, the
    dependencies resolved (and, for Go, compiled), the patched tree built from its
    sources. Go runs in the recipe's image on the grade's own caches (``grade_cache``);
    Maven on this machine, its local repository filled by an online run of the same goal
    in another copy. ``cpus``: the timed run's processors (None: all of them)."""
    case = prepared.case
    if prepared.git_dir is None:
        return Bare(note="no mirror")
    if case.recipe == "base-image-bump":
        return Bare(note="n/a (a Dockerfile build needs its FROM images and their network)")
    if case.recipe == "go-import-rewrite":
        return go_bare_build(prepared, scratch, grade_cache or caches.parent, timeout, cpus)
    return maven_bare_build(prepared, scratch, caches, timeout, goal=goal, cpus=cpus)


def maven_bare_build(
    prepared: Prepared, scratch: Path, caches: Path, timeout: float, *, goal: str, cpus: int | None
) -> Bare:
    """``mvn -o`` of a fresh copy of the patched tree on this machine, after an untimed
    online run of the same goal in another copy filled the local repository."""
    case = prepared.case
    assert prepared.git_dir is not None
    warm_tree, tree = scratch / "warm-up-tree", scratch / "tree"
    for path in (warm_tree, tree):
        if path.exists():
            shutil.rmtree(path)
        export_tree(prepared.git_dir, case.commit, path)
    home, m2 = caches / "home", caches / "m2"
    for path in (home, m2):
        path.mkdir(parents=True, exist_ok=True)
    _chown_nobody(warm_tree, tree, home, m2)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "JAVA_HOME": os.environ.get("JAVA_HOME", _default_java_home()),
        # Maven wrappers (and Maven) look in user.home, not $HOME, for their downloads
        "MAVEN_USER_HOME": str(home / ".m2"),
        "MAVEN_OPTS": f"-Duser.home={home}",
    }
    total, passed, tested = 0.0, True, True
    for index, root in enumerate(case.roots):
        warm_up, timed = _maven_commands(tree, root, goal, f"-Dmaven.repo.local={m2}")
        _timed_shell(warm_up, warm_tree / root, env, scratch / f"warm-up-{index}.log", timeout)
        log = scratch / f"timed-{index}.log"
        code, seconds = _timed_shell(timed, tree / root, env, log, timeout, cpus=cpus)
        total += seconds
        passed = passed and code == 0
        tested = tested and (code == 0 or _tests_ran(log))
    for path in (warm_tree, tree):
        shutil.rmtree(path, ignore_errors=True)
    return _bare_outcome(total, passed, tested)


_TESTS_RAN = re.compile(
    r"^(Tests run: \d+|\[INFO\] Tests run: \d+|ok\s|--- FAIL|FAIL\s+\S+\s+\d)", re.M
)


def _tests_ran(log: Path) -> bool:
    try:
        return bool(_TESTS_RAN.search(log.read_text(encoding="utf-8", errors="replace")))
    except OSError:
        return False


def _default_java_home() -> str:
    javac = shutil.which("javac")
    if javac:
        return str(Path(javac).resolve().parents[1])
    return ""


# ---------------------------------------------------------------------------- running


@dataclass
class Row:
    case: Case
    prepared: Prepared
    passes: dict[str, Graded] = field(default_factory=dict)
    bare: Bare = field(default_factory=Bare)
    warm_runs: list[Graded] = field(default_factory=list)  # each of --repeat's
    bare_runs: list[Bare] = field(default_factory=list)

    @property
    def final(self) -> Graded | None:
        for name in ("warm", "cold"):
            if name in self.passes:
                return self.passes[name]
        return None

    @property
    def verdict(self) -> Verdict:
        if self.prepared.problem:
            return Verdict(reason=self.prepared.problem, cause="missing")
        final = self.final
        return read_verdict(final) if final else Verdict(cause="-")


def _progress(message: str) -> None:
    stamp = datetime.now(UTC).strftime("%H:%M:%S")
    print(f"[{stamp}] {message}", file=sys.stderr, flush=True)


def _prepare_cache(cache: Path | None, cold: bool, scratch: Path) -> tuple[Path, bool]:
    """The cache directory to grade with, and whether the first pass is cold."""
    if cache is None:
        path = scratch / "cache"
        path.mkdir(parents=True)
        (path / CACHE_MARKER).touch()
        return path, True
    cache.mkdir(parents=True, exist_ok=True)
    entries = [p for p in cache.iterdir() if p.name not in (CACHE_MARKER, BARE_DIR)]
    if cold and entries:
        if not (cache / CACHE_MARKER).exists():
            raise SystemExit(
                f"--cold would empty {cache}, which this script did not create "
                f"(no {CACHE_MARKER} in it); pass an empty or new directory"
            )
        for entry in entries:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
        entries = []
    (cache / CACHE_MARKER).touch()
    return cache, cold or not entries


def run(args: argparse.Namespace) -> list[Row]:
    cases = load_cases(args.cases, args.only)
    scratch = Path(tempfile.mkdtemp(prefix="realworld-"))
    scratch.chmod(0o755)  # the bare builds run as an unprivileged user when we are root
    compile_project()
    try:
        cache, first_cold = _prepare_cache(args.cache, args.cold, scratch)
        passes = (["cold"] if first_cold else []) + (
            [] if args.no_warm and first_cold else ["warm"]
        )
        # The depth-1 copies live with the cache: grades key what they keep by the
        # repository's address, so a warm pass run apart from its cold pass must grade
        # from the same copy to find the base commit's builds and runs.
        trims = cache / "benchmark-repos"
        rows = [Row(case, prepare(case, args.mirrors, trims)) for case in cases]
        for row in rows:
            if row.prepared.problem:
                _progress(f"{row.case.id}: skipped, {row.prepared.problem}")
            elif row.prepared.note:
                _progress(f"{row.case.id}: {row.prepared.note}")
        ready = [row for row in rows if not row.prepared.problem]
        _progress(
            f"{len(ready)} of {len(rows)} case(s) ready; passes: {', '.join(passes)}; "
            f"cache {cache}; jobs {args.jobs}"
        )
        if "cold" in passes:
            _grade_pass("cold", ready, scratch, cache, args)
        # The machine may be shared: each case's warm re-grade and its bare build run back
        # to back, so both meet the same load (recorded beside them); with --repeat N,
        # N times in turn, and each keeps its median run.
        for index, row in enumerate(ready, start=1):
            for _ in range(max(1, args.repeat)):
                if "warm" in passes:
                    _grade_pass("warm", [row], scratch, cache, args, index=index, total=len(ready))
                    row.warm_runs.append(row.passes["warm"])
                if not args.no_bare:
                    _bare_one(row, index, len(ready), scratch, cache, args=args)
                    row.bare_runs.append(row.bare)
            _keep_medians(row)
        return rows
    finally:
        if args.keep:
            _progress(f"kept work files in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


def _keep_medians(row: Row) -> None:
    """A repeated case keeps its median warm re-grade and its median bare build (the
    upper one of an even count); a bare build that gave no time is kept if any did."""
    if row.warm_runs:
        ranked = sorted(row.warm_runs, key=lambda graded: graded.seconds)
        row.passes["warm"] = ranked[len(ranked) // 2]
    timed = sorted(
        (bare for bare in row.bare_runs if bare.seconds is not None),
        key=lambda bare: bare.seconds or 0.0,
    )
    if timed and len(timed) == len(row.bare_runs):
        row.bare = timed[len(timed) // 2]


def _bare_one(
    row: Row, index: int, total: int, scratch: Path, cache: Path, *, args: argparse.Namespace
) -> None:
    _progress(f"bare [{index}/{total}] {row.case.id} ...")
    work = scratch / "bare" / _safe(row.case.id)
    work.mkdir(parents=True, exist_ok=True)
    load = _load()
    try:
        row.bare = bare_build(
            row.prepared,
            work,
            cache / BARE_DIR,
            args.timeout,
            goal=args.bare_goal,
            cpus=args.bare_cpus,
            grade_cache=cache,
        )
    except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
        row.bare = Bare(note=f"bare build could not run: {exc}")
    row.bare.load = load
    shown = f"{row.bare.seconds:.1f} s" if row.bare.seconds is not None else "-"
    _progress(
        f"bare [{index}/{total}] {row.case.id}: {shown}"
        f"{' (' + row.bare.note + ')' if row.bare.note else ''}"
    )


def _load() -> float | None:
    """The one-minute load average as a timing starts (the machine may be shared)."""
    with contextlib.suppress(OSError, AttributeError):
        return round(os.getloadavg()[0], 2)
    return None


def _grade_pass(
    name: str,
    rows: list[Row],
    scratch: Path,
    cache: Path,
    args: argparse.Namespace,
    *,
    index: int | None = None,
    total: int | None = None,
) -> None:
    total = total or len(rows)

    def one(indexed: tuple[int, Row]) -> None:
        index, row = indexed
        _progress(f"{name} [{index}/{total}] {row.case.id} ...")
        work = scratch / name / _safe(row.case.id)
        load = _load()
        graded = grade(row.prepared, work, cache, args.timeout)
        graded.load = load
        row.passes[name] = graded
        verdict = read_verdict(graded)
        hint = f" ~{verdict.hint}" if verdict.hint else ""
        _progress(
            f"{name} [{index}/{total}] {row.case.id}: {graded.seconds:.1f} s, "
            f"{verdict.reached} {verdict.verdict} ({verdict.cause}{hint})"
        )

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        list(pool.map(one, enumerate(rows, start=index or 1)))
    if index is None:
        _progress(f"{name} pass done in {time.perf_counter() - started:.1f} s")


# ---------------------------------------------------------------------------- report


def _short(text: str, width: int = REASON_WIDTH) -> str:
    """One line of at most ``width`` characters: the head and the tail, where errors end."""
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    head = (width * 3) // 5
    return text[:head] + " … " + text[-(width - head - 3) :]


def _fmt_ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _load_range(values: Iterable[float | None]) -> dict[str, float] | None:
    """The lowest, mean and highest one-minute load average of a set of timings."""
    known = [v for v in values if v is not None]
    if not known:
        return None
    return {"min": min(known), "mean": round(sum(known) / len(known), 2), "max": max(known)}


def _load_line(summary: dict[str, Any]) -> str:
    load = summary.get("load_average") or {}
    parts = [
        f"{name} {found['min']:.1f}-{found['max']:.1f} (mean {found['mean']:.1f})"
        for name in ("warm", "bare")
        if (found := load.get(name))
    ]
    shown = "; ".join(parts) or "not recorded"
    cores = load.get("cores")
    pinned = summary.get("bare_cpus")
    on = f"; the bare builds ran on {pinned} of them" if pinned else ""
    return f"- one-minute load average as each timing started, on {cores} cores: {shown}{on}"


def summarise(rows: list[Row], commit: str) -> dict[str, Any]:
    graded = [r for r in rows if not r.prepared.problem and r.final and r.final.trial]
    verdicts = {r.case.id: r.verdict for r in rows}
    causes = Counter(v.cause for v in verdicts.values())
    infra = Counter({k: n for k, n in causes.items() if k.startswith("infra:")})
    surviving = [r for r in graded if r.case.outcome == "survived"]
    surviving_pass = [r for r in surviving if verdicts[r.case.id].cause == "pass"]
    infra_as_fail = [
        r.case.id
        for r in graded
        if r.case.expected_verdict == "error" and verdicts[r.case.id].verdict == "fail"
    ]
    infra_as_pass = [
        r.case.id
        for r in graded
        if r.case.expected_verdict in ("error", "fail") and verdicts[r.case.id].cause == "pass"
    ]
    fail_looks_infra = [
        r.case.id
        for r in graded
        if verdicts[r.case.id].cause == "candidate-fail" and verdicts[r.case.id].hint
    ]

    def pass_total(name: str) -> float | None:
        values = [r.passes[name].seconds for r in rows if name in r.passes]
        return round(sum(values), 1) if values else None

    with_both = [r for r in rows if "warm" in r.passes and r.bare.seconds is not None and r.bare.ok]
    warm_sum = sum(r.passes["warm"].seconds for r in with_both)
    bare_sum = sum(r.bare.seconds or 0.0 for r in with_both)
    # like for like: the grade ran the suite (reached tier 3), as the bare build did
    full = [r for r in with_both if read_verdict(r.passes["warm"]).reached == "tests"]
    full_warm = sum(r.passes["warm"].seconds for r in full)
    full_bare = sum(r.bare.seconds or 0.0 for r in full)
    return {
        "benchmark": "realworld",
        "migration_evals_commit": commit,
        "date": datetime.now(UTC).date().isoformat(),
        "cases": len(rows),
        "graded": len(graded),
        "missing": causes.get("missing", 0),
        "runner_errors": causes.get("runner-error", 0),
        "passes": causes.get("pass", 0),
        "candidate_fails": causes.get("candidate-fail", 0),
        "candidate_fails_that_read_as_infra": fail_looks_infra,
        "inconclusive": causes.get("inconclusive", 0),
        "infra_errors": sum(infra.values()),
        "infra_errors_by_cause": dict(sorted(infra.items())),
        "surviving_graded": len(surviving),
        "surviving_pass_share": round(len(surviving_pass) / len(surviving), 3)
        if surviving
        else None,
        "expected_infra_graded_fail": infra_as_fail,
        "any_expected_infra_graded_fail": bool(infra_as_fail),
        "expected_error_or_fail_graded_pass": infra_as_pass,
        "matches_expectation": sum(1 for r in graded if matches(r.case, verdicts[r.case.id])),
        "warm_envelopes_reused": sorted(
            r.case.id
            for r in rows
            if "warm" in r.passes and read_verdict(r.passes["warm"]).cached_tiers
        ),
        "seconds": {
            "cold_total": pass_total("cold"),
            "warm_total": pass_total("warm"),
            "bare_total": round(sum(r.bare.seconds or 0.0 for r in rows), 1),
            "warm_with_bare": round(warm_sum, 1),
            "bare_with_warm": round(bare_sum, 1),
        },
        "warm_over_bare": round(warm_sum / bare_sum, 2) if bare_sum else None,
        "reached_tests_with_bare": len(full),
        "warm_over_bare_reached_tests": round(full_warm / full_bare, 2) if full_bare else None,
        "load_average": {
            "warm": _load_range(r.passes["warm"].load for r in with_both),
            "bare": _load_range(r.bare.load for r in with_both),
            "cores": os.cpu_count(),
        },
        "per_case": {
            r.case.id: {
                "tier": verdicts[r.case.id].reached,
                "verdict": verdicts[r.case.id].verdict,
                "cause": verdicts[r.case.id].cause,
                "hint": verdicts[r.case.id].hint,
                "judge": verdicts[r.case.id].judge,
                "expected": r.case.expected_verdict
                + (f" {r.case.expected_cause}" if r.case.expected_cause else ""),
                "match": matches(r.case, verdicts[r.case.id]) if r in graded else None,
                "cold_s": round(r.passes["cold"].seconds, 1) if "cold" in r.passes else None,
                "warm_s": round(r.passes["warm"].seconds, 1) if "warm" in r.passes else None,
                "bare_s": r.bare.seconds,
                "bare_ok": r.bare.ok,
                "warm_runs_s": [round(g.seconds, 1) for g in r.warm_runs],
                "bare_runs_s": [b.seconds for b in r.bare_runs],
                "reason": verdicts[r.case.id].reason,
            }
            for r in rows
        },
    }


def print_table(rows: list[Row], summary: dict[str, Any]) -> None:
    header = (
        f"{'case':<52} {'tier':<8} {'verdict':<12} {'cause':<30} {'expect':<6} "
        f"{'judge':<22} {'cold s':>7} {'warm s':>7} {'bare s':>7}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        verdict = row.verdict
        cause = verdict.cause + (f" ~{verdict.hint}" if verdict.hint else "")
        expect = "ok" if row in rows and summary["per_case"][row.case.id]["match"] else "MISS"
        if summary["per_case"][row.case.id]["match"] is None:
            expect = "-"
        cold = row.passes.get("cold")
        warm = row.passes.get("warm")
        bare = row.bare.seconds if row.bare.ok else None
        print(
            f"{row.case.id:<52} {verdict.reached:<8} {verdict.verdict:<12} {cause:<30} "
            f"{expect:<6} {verdict.judge:<22} {_seconds(cold.seconds if cold else None):>7} "
            f"{_seconds(warm.seconds if warm else None):>7} {_seconds(bare):>7}"
        )
        if verdict.reason:
            print(f"{'':<4}reason: {_short(verdict.reason, 140)}")
        final = row.final
        if final and verdict.reached in final.evidence and verdict.cause != "pass":
            for line in final.evidence[verdict.reached][:2]:
                print(f"{'':<4}evidence: {_short(line, 136)}")
        if row.bare.note:
            print(f"{'':<4}bare: {_short(row.bare.note, 140)}")
    print()
    print(
        f"passes {summary['passes']}, candidate fails {summary['candidate_fails']} "
        f"({len(summary['candidate_fails_that_read_as_infra'])} read as infrastructure), "
        f"inconclusive {summary['inconclusive']}, infrastructure errors {summary['infra_errors']}, "
        f"missing {summary['missing']}, runner errors {summary['runner_errors']}"
    )
    for cause, count in summary["infra_errors_by_cause"].items():
        print(f"  {cause}: {count}")
    share = summary["surviving_pass_share"]
    print(
        f"surviving commits passing every tier they reach: "
        f"{'-' if share is None else f'{share:.0%}'} of {summary['surviving_graded']}"
    )
    flagged = summary["expected_infra_graded_fail"]
    print(
        "cases the expectations call infrastructure graded fail: "
        + (", ".join(flagged) if flagged else "none")
    )
    passed_wrongly = summary["expected_error_or_fail_graded_pass"]
    print(
        "cases the expectations call error or fail graded pass: "
        + (", ".join(passed_wrongly) if passed_wrongly else "none")
    )
    print(f"matching the expectation: {summary['matches_expectation']} of {summary['graded']}")
    if summary["warm_envelopes_reused"]:
        print(
            "WARNING: warm pass reused stored envelopes for: "
            + ", ".join(summary["warm_envelopes_reused"])
        )
    seconds = summary["seconds"]
    ratio = summary["warm_over_bare"]
    both = len([r for r in rows if r.bare.ok and "warm" in r.passes])
    print(
        f"time: cold {_seconds(seconds['cold_total'])} s, "
        f"warm {_seconds(seconds['warm_total'])} s, bare {_seconds(seconds['bare_total'])} s; "
        f"warm/bare over the {both} case(s) with both "
        f"({_seconds(seconds['warm_with_bare'])} s / {_seconds(seconds['bare_with_warm'])} s): "
        f"{'-' if ratio is None else f'{ratio:.2f}x'}"
    )
    full = summary["warm_over_bare_reached_tests"]
    print(
        f"warm/bare over the {summary['reached_tests_with_bare']} case(s) whose grade ran the "
        f"suite (tier 3), like for like: {'-' if full is None else f'{full:.2f}x'}"
    )


def markdown(rows: list[Row], summary: dict[str, Any]) -> str:
    """The table and totals as Markdown, for RESULTS.md."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    lines = [
        f"## {summary['date']}, migration-evals {summary['migration_evals_commit']}",
        "",
        "| case | tier | verdict | cause | expected | ok | judge | cold s | warm s | bare s |",
        "|---|---|---|---|---|---|---|---:|---:|---:|",
    ]
    for row in rows:
        verdict = row.verdict
        data = summary["per_case"][row.case.id]
        cause = verdict.cause + (f" ~{verdict.hint}" if verdict.hint else "")
        ok = {True: "yes", False: "**no**", None: "-"}[data["match"]]
        bare = data["bare_s"] if data["bare_ok"] else None
        lines.append(
            f"| `{row.case.id}` | {verdict.reached} | {verdict.verdict} | {cell(cause)} | "
            f"{cell(data['expected'])} | {ok} | {cell(verdict.judge)} | "
            f"{_seconds(data['cold_s'])} | {_seconds(data['warm_s'])} | {_seconds(bare)} |"
        )
    lines += ["", "Reasons and first evidence lines:", ""]
    for row in rows:
        verdict = row.verdict
        if verdict.cause == "pass":
            continue
        final = row.final
        first = (final.evidence.get(verdict.reached) or [""])[0] if final else ""
        detail = f" — {_short(first, 160)}" if first and first not in verdict.reason else ""
        lines.append(f"- `{row.case.id}`: {cell(_short(verdict.reason, 200))}{cell(detail)}")
    seconds = summary["seconds"]
    infra = ", ".join(f"{k} {v}" for k, v in summary["infra_errors_by_cause"].items()) or "none"
    share = summary["surviving_pass_share"]
    ratio = summary["warm_over_bare"]
    flagged = summary["expected_infra_graded_fail"]
    lines += [
        "",
        f"- passes {summary['passes']}, candidate fails {summary['candidate_fails']} "
        f"({len(summary['candidate_fails_that_read_as_infra'])} of them read as infrastructure), "
        f"inconclusive {summary['inconclusive']}, infrastructure errors "
        f"{summary['infra_errors']} ({infra}), missing {summary['missing']}",
        f"- surviving commits that pass every tier they reach: "
        f"{'-' if share is None else f'{share:.0%}'} of {summary['surviving_graded']}",
        "- cases the expectations call infrastructure graded `fail`: "
        + (", ".join(f"`{c}`" for c in flagged) if flagged else "none"),
        "- cases the expectations call `error` or `fail` graded `pass`: "
        + (", ".join(f"`{c}`" for c in summary["expected_error_or_fail_graded_pass"]) or "none"),
        f"- grades matching the expectation: {summary['matches_expectation']} of "
        f"{summary['graded']}",
        f"- time: cold {_seconds(seconds['cold_total'])} s, warm "
        f"{_seconds(seconds['warm_total'])} s, bare {_seconds(seconds['bare_total'])} s; "
        f"warm/bare over the cases with both "
        f"({_seconds(seconds['warm_with_bare'])} s / {_seconds(seconds['bare_with_warm'])} s): "
        f"{'-' if ratio is None else f'{ratio:.2f}x'}; over the "
        f"{summary['reached_tests_with_bare']} case(s) whose grade ran the suite (tier 3): "
        f"{_fmt_ratio(summary['warm_over_bare_reached_tests'])}; "
        f"wall {_seconds(seconds.get('wall'))} s",
        _load_line(summary),
        "",
    ]
    return "\n".join(lines)


def project_commit() -> str:
    """The grader's version: the last commit that changed the project's code or specs (not
    the benchmarks, the documentation or the Makefile)."""
    excluded = ["benchmarks", "docs", "README.md", "Makefile"]
    done = subprocess.run(
        ["git", "-C", str(ROOT), "log", "-1", "--format=%h", "--abbrev=12", "--", "."]
        + [f":(exclude){path}" for path in excluded],
        capture_output=True,
        check=False,
    )
    return done.stdout.decode().strip() or "unknown"


def _cpus(text: str) -> int:
    """``--bare-cpus``: a count of processors, or ``all`` (0: not pinned)."""
    if text == "all":
        return 0
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a count of processors: {text!r}") from None
    if count < 1:
        raise argparse.ArgumentTypeError("at least 1 processor, or all")
    return count


def parse_args(argv: Iterable[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, help="folder of bare git mirrors")
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES, help="cases JSONL")
    parser.add_argument(
        "--only", nargs="+", default=[], metavar="ID", help="these cases (or id prefixes)"
    )
    parser.add_argument("--jobs", type=int, default=1, help="cases graded at once")
    parser.add_argument("--cache", type=Path, default=None, help="cache directory to grade with")
    parser.add_argument("--cold", action="store_true", help="start from an empty cache directory")
    parser.add_argument("--no-warm", action="store_true", help="skip the warm re-grade")
    parser.add_argument("--no-bare", action="store_true", help="skip the bare build+test")
    parser.add_argument(
        "--bare-goal",
        default="test",
        help="Maven phase of the bare build (test: the phases tiers 2-3 run; verify adds "
        "packaging, javadoc and integration tests, which need more network in some cases)",
    )
    parser.add_argument(
        "--bare-cpus",
        type=_cpus,
        default=None,
        metavar="N|all",
        help="processors the bare build's timed run may use (default: the sandbox's CPU "
        "quota from specs/oracle.yaml, as the grade's builds get; all: every one)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="time each case's warm re-grade and bare build N times in turn and keep the "
        "median of each (a shared machine's noise)",
    )
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per case and pass")
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON figures here")
    parser.add_argument("--keep", action="store_true", help="keep changesets, logs and trees")
    parser.add_argument(
        "--markdown", type=Path, default=None, metavar="FILE", help="also write the table here"
    )
    parser.add_argument(
        "--rescore",
        type=Path,
        default=None,
        metavar="FILE",
        help="grade nothing: re-read an earlier --out file and print its table again "
        "(with this script's classification and the cases file's expectations)",
    )
    return parser.parse_args(list(argv) if argv is not None else None)


def _stop(signum: int, _frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def raw_rows(rows: list[Row]) -> dict[str, Any]:
    """What each case's runs said, so a later --rescore can print the table again."""
    return {
        row.case.id: {
            "problem": row.prepared.problem,
            "note": row.prepared.note,
            "passes": {
                name: {
                    "seconds": graded.seconds,
                    "trial": graded.trial,
                    "problem": graded.problem,
                    "evidence": graded.evidence,
                    "durations": graded.durations,
                    "load": graded.load,
                }
                for name, graded in row.passes.items()
            },
            "bare": {
                "seconds": row.bare.seconds,
                "ok": row.bare.ok,
                "note": row.bare.note,
                "load": row.bare.load,
            },
        }
        for row in rows
    }


def rescored_rows(path: Path, cases: list[Case]) -> tuple[list[Row], dict[str, Any]]:
    earlier = json.loads(path.read_text(encoding="utf-8"))
    raw = earlier.get("raw") or {}
    rows: list[Row] = []
    for case in cases:
        data = raw.get(case.id)
        if data is None:
            continue
        prepared = Prepared(case, problem=data.get("problem"), note=data.get("note") or "")
        row = Row(case, prepared)
        for name, graded in (data.get("passes") or {}).items():
            row.passes[name] = Graded(
                seconds=float(graded.get("seconds") or 0.0),
                trial=graded.get("trial"),
                problem=graded.get("problem"),
                evidence=graded.get("evidence") or {},
                durations=graded.get("durations") or {},
                load=graded.get("load"),
            )
        bare = data.get("bare") or {}
        row.bare = Bare(
            bare.get("seconds"), bool(bare.get("ok")), bare.get("note") or "", bare.get("load")
        )
        rows.append(row)
    return rows, earlier


def main(argv: Iterable[str] | None = None) -> int:
    args = parse_args(argv)
    if args.bare_cpus is None:
        args.bare_cpus = sandbox_cpus()
    signal.signal(signal.SIGTERM, _stop)  # so running grades are ended, not orphaned
    if args.rescore is not None:
        rows, earlier = rescored_rows(args.rescore, load_cases(args.cases, args.only))
        summary = summarise(rows, str(earlier.get("migration_evals_commit", "unknown")))
        summary["date"] = earlier.get("date", summary["date"])
        summary["seconds"]["wall"] = (earlier.get("seconds") or {}).get("wall")
    else:
        if args.mirrors is None or not args.mirrors.is_dir():
            raise SystemExit(f"--mirrors {args.mirrors}: not a directory")
        started = time.perf_counter()
        rows = run(args)
        summary = summarise(rows, project_commit())
        summary["bare_cpus"] = args.bare_cpus or os.cpu_count()
        summary["seconds"]["wall"] = round(time.perf_counter() - started, 1)
    print_table(rows, summary)
    if args.markdown:
        args.markdown.write_text(markdown(rows, summary), encoding="utf-8")
    if args.out:
        document = {**summary, "raw": raw_rows(rows)}
        args.out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(summary, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
