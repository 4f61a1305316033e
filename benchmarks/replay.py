"""Replay benchmark: the cascade over synthetic repositories, tier 1 real, tiers 2-4 replayed.

Generates N small Java 8 Maven repositories and, per repository, one upgrade patch per
model; records cassettes for tiers 2-4 once (not timed); then, with a cold clone cache and
a fresh SQLite ledger, grades every changeset and reports trials per second. Separately it
times a bare ``git apply --check`` of every patch in a checkout of its base commit and the
cascade's mean time per trial run one at a time, so the framework's own overhead can be set
beside the git call it wraps.

    python benchmarks/replay.py                     # 1,000 repos x 3 models, --jobs 2
    python benchmarks/replay.py --repos 50 --models 3 --jobs 2

Targets: 3,000 trials in under 2 minutes on 2 cores; overhead per trial at most 2x the
bare ``git apply --check``. Prints a table, then one JSON object of the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import astuple, dataclass
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from migration_evals.bot.settings import default_scratch_dir
from migration_evals.core.cassette import CassetteLibrary
from migration_evals.core.model import Changeset, Verdict
from migration_evals.core.ports import (
    ImageConfig,
    ImageRef,
    Judge,
    JudgeReply,
    JudgeRequest,
    Sandbox,
    SandboxRequest,
    SandboxResult,
)
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.oracles.cascade import Budget, Cascade
from migration_evals.oracles.ecosystems.registry import load_specs
from migration_evals.oracles.judges import RecordingJudge, ReplayingJudge
from migration_evals.oracles.repos import RepoCache
from migration_evals.oracles.runner import Runner
from migration_evals.oracles.sandbox import RecordingSandbox, ReplayingSandbox
from migration_evals.oracles.tiers.apply import ApplyOracle
from migration_evals.oracles.tiers.base import TierOracle
from migration_evals.oracles.tiers.compile import CompileOracle
from migration_evals.oracles.tiers.judge import JudgeOracle
from migration_evals.oracles.tiers.tests import TestsOracle

ROOT = Path(__file__).resolve().parents[1]
MODELS = ("claude-sonnet-4-5", "gpt-5", "gemini-2.5-pro")
GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}
POM = """<project>
  <modelVersion>4.0.0</modelVersion>
  <groupId>bench</groupId><artifactId>r{n}</artifactId><version>1</version>
  <properties>
{levels}
  </properties>
</project>
"""
OLD_LEVELS = (
    "    <maven.compiler.source>1.8</maven.compiler.source>\n"
    "    <maven.compiler.target>1.8</maven.compiler.target>"
)
NEW_LEVELS = "    <maven.compiler.release>17</maven.compiler.release>"
JAVA = """package bench;

import java.util.ArrayList;
import java.util.List;

public class Service{n} {{
    public List<Integer> values() {{
        List<Integer> out = new ArrayList<Integer>();
        for (int i = 0; i < {n}; i++) {{
            out.add(new Integer(i));
        }}
        return out;
    }}
}}
"""


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, capture_output=True, check=True)
    return done.stdout.decode().strip()


def make_repo(folder: Path, n: int) -> tuple[str, list[str]]:
    """One repository and one patch per model (each modernises the loop differently)."""
    java = Path("src/main/java/bench") / f"Service{n}.java"
    (folder / java.parent).mkdir(parents=True)
    (folder / "pom.xml").write_text(POM.format(n=n, levels=OLD_LEVELS))
    (folder / java).write_text(JAVA.format(n=n))
    _git(folder, "init", "-q", "-b", "main")
    _git(folder, "add", "-A")
    _git(folder, "commit", "-q", "-m", "base")
    commit = _git(folder, "rev-parse", "HEAD")
    bodies = ("out.add(i);", "out.add(Integer.valueOf(i));", "out.add((Integer) i);")
    patches = []
    for body in bodies:
        (folder / "pom.xml").write_text(POM.format(n=n, levels=NEW_LEVELS))
        (folder / java).write_text(
            JAVA.format(n=n).replace("new ArrayList<Integer>()", "new ArrayList<>()")
            .replace("out.add(new Integer(i));", body)
        )  # fmt: skip
        patches.append(_git(folder, "diff", "--no-color") + "\n")
        _git(folder, "checkout", "-q", "--", ".")
    return commit, patches


def make_changesets(root: Path, repos: int, models: int) -> list[Changeset]:
    changesets = []
    for n in range(repos):
        folder = root / f"repo{n:05d}"
        commit, patches = make_repo(folder, n)
        for m in range(models):
            changesets.append(
                Changeset(
                    id=f"repo{n:05d}/{MODELS[m % len(MODELS)]}",
                    repo=str(folder),
                    base_commit=commit,
                    patch=patches[m % len(patches)],
                    recipe="java8-to-17",
                    model=MODELS[m % len(MODELS)],
                    repo_created_at=date(2022, 1, 1),
                )
            )
    return changesets


class _ScriptedSandbox:
    identity = "bench:scripted"

    def resolve(self, image: str) -> ImageRef:
        return ImageRef(image, "sha256:bench")

    def inspect(self, image: str) -> ImageConfig:
        return ImageConfig(cmd=("bench",))

    def has_cache(self, cache: str) -> bool:
        return True  # a scripted resolution leaves nothing behind that could go missing

    @property
    def runs_live(self) -> bool:
        return False  # scripted answers come at once

    def run(self, request: SandboxRequest) -> SandboxResult:
        report = '<testsuite><testcase classname="b.T" name="t"/></testsuite>'
        artifacts = {"target/surefire-reports/TEST-b.T.xml": report} if request.collect else {}
        heads = {"target/classes/b/Service.class": "cafebabe0000003d"} if request.inspect else {}
        # A test run prints Surefire's summary of the one test its report holds, as Maven
        # does: tier 3 cross-checks the report against it.
        summary = _SUREFIRE_SUMMARY if request.collect else ""
        return SandboxResult(
            0, summary + "BUILD SUCCESS", artifacts, 1.0, image_id="sha256:bench", file_heads=heads
        )


_SUREFIRE_SUMMARY = (
    "[INFO] --- surefire:3.5.2:test (default-test) @ bench ---\n[INFO] Results:\n[INFO] \n"
    "[INFO] Tests run: 1, Failures: 0, Errors: 0, Skipped: 0\n"
)


class _ScriptedJudge:
    identity = "bench:scripted"

    def ask(self, request: JudgeRequest) -> JudgeReply:
        answer = {
            "verdict": "pass",
            "confidence": 0.9,
            "rationale": "release 17",
            "evidence": [f"+{NEW_LEVELS}"],
        }
        return JudgeReply(json.dumps(answer), "end_turn", 3000, 200)


def _oracles(sandbox: Sandbox, judge: Judge) -> list[TierOracle]:
    return [ApplyOracle(), CompileOracle(sandbox), TestsOracle(sandbox), JudgeOracle(judge, judge)]


def record(
    specs: SpecSet, changesets: Sequence[Changeset], library: CassetteLibrary, work: Path
) -> None:
    sandbox = RecordingSandbox(_ScriptedSandbox(), library)
    judge = RecordingJudge(_ScriptedJudge(), library)
    cascade = Cascade(specs, _oracles(sandbox, judge), RepoCache(work / "record-cache"))
    for changeset in changesets:
        cascade.run_trial("record", changeset, Budget(None))


def cpu_s() -> float:
    """CPU seconds this process and its finished children (git) have used so far. On a
    busy machine wall time mostly measures the wait for a core; CPU time does not."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


@dataclass(frozen=True)
class Timed:
    """A replayed run: its wall and CPU seconds, verdicts and fabricated marks."""

    wall_s: float
    cpu_s: float
    verdicts: list[Verdict]
    fabricated: int


def replay_run(
    specs: SpecSet,
    changesets: Sequence[Changeset],
    library: CassetteLibrary,
    *,
    jobs: int,
    db: Path,
    cache: Path,
) -> Timed:
    """Grade through a fresh ledger (so nothing is served from the result cache)."""
    store = Store.open(f"sqlite:///{db}")
    oracles = _oracles(ReplayingSandbox(library), ReplayingJudge(library))
    # The framework's own default scratch folder, as `migration-evals run` would use.
    scratch = default_scratch_dir(os.environ)
    cascade = Cascade(
        specs,
        oracles,
        RepoCache(cache),
        trials=store.trials,
        artifacts=store.artifacts,
        scratch=scratch,
    )
    started, used = time.perf_counter(), cpu_s()
    outcome = Runner(cascade, store.runs, store.ledger, jobs=jobs).run(
        changesets, budget=Budget(None)
    )
    elapsed, used = time.perf_counter() - started, cpu_s() - used
    fabricated = sum(len(t.fabricated) for t in outcome.trials)
    assert store.ledger.verify_ledger().ok
    store.close()
    return Timed(elapsed, used, [t.verdict for t in outcome.trials], fabricated)


@dataclass
class PerTrial:
    """Mean seconds per changeset, wall and CPU, of the bare git call and the framework."""

    bare_wall: float = 0.0
    bare_cpu: float = 0.0
    framework_wall: float = 0.0
    framework_cpu: float = 0.0

    def scaled(self, count: int) -> PerTrial:
        return PerTrial(*(value / count for value in astuple(self)))


def interleaved_times(
    specs: SpecSet,
    sample: Sequence[Changeset],
    library: CassetteLibrary,
    work: Path,
    chunk: int = 50,
) -> PerTrial:
    """Mean seconds per changeset, wall and CPU, of a bare ``git apply --check`` (in a
    checkout of its base) and of the framework (a serial run: cascade plus ledger),
    measured in alternating chunks so that drift in machine load hits both alike. Clone
    cache warm."""
    cache = work / "interleaved"
    repos = RepoCache(cache)
    for changeset in sample:
        repos.snapshot(changeset.repo, changeset.base_commit)
    total = PerTrial()
    patch = work / "bare.diff"
    for start in range(0, len(sample), chunk):
        part = sample[start : start + chunk]
        for changeset in part:
            patch.write_text(changeset.patch)
            began, used = time.perf_counter(), cpu_s()
            subprocess.run(["git", "apply", "--check", str(patch)], cwd=changeset.repo, check=True)
            total.bare_wall += time.perf_counter() - began
            total.bare_cpu += cpu_s() - used
        timed = replay_run(specs, part, library, jobs=1, db=work / f"chunk{start}.db", cache=cache)
        total.framework_wall += timed.wall_s
        total.framework_cpu += timed.cpu_s
    return total.scaled(len(sample))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", type=int, default=1000)
    parser.add_argument("--models", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--overhead-sample", type=int, default=300,
                        help="trials timed one at a time for the overhead figure")  # fmt: skip
    args = parser.parse_args()
    specs = load_specs(ROOT / "specs")
    with tempfile.TemporaryDirectory(prefix="me-bench-") as tmp:
        work = Path(tmp)
        started = time.perf_counter()
        changesets = make_changesets(work / "repos", args.repos, args.models)
        library = CassetteLibrary(work / "cassettes")
        record(specs, changesets, library, work)
        setup_s = time.perf_counter() - started
        cold = replay_run(
            specs, changesets, library, jobs=args.jobs, db=work / "cold.db", cache=work / "cold"
        )
        sample = changesets[: args.overhead_sample]
        serial = replay_run(
            specs, sample, library, jobs=1, db=work / "s1.db", cache=work / "serial"
        ).wall_s
        per = interleaved_times(specs, sample, library, work)
    wall, verdicts, fabricated = cold.wall_s, cold.verdicts, cold.fabricated
    trials = len(changesets)
    git_apply, per_trial_serial = per.bare_wall, per.framework_wall
    overhead = per_trial_serial - git_apply
    cpu_overhead = per.framework_cpu - per.bare_cpu
    figures = {
        "trials": trials,
        "jobs": args.jobs,
        "wall_s": round(wall, 2),
        "trials_per_s": round(trials / wall, 1),
        "passed": sum(v is Verdict.PASS for v in verdicts),
        "fabricated_marks": fabricated,
        "serial_cold_ms_per_trial": round(1000 * serial / len(sample), 2),
        "serial_warm_ms_per_trial": round(1000 * per_trial_serial, 2),
        "bare_git_apply_check_ms": round(1000 * git_apply, 2),
        "overhead_ms_per_trial": round(1000 * overhead, 2),
        "overhead_ratio": round(overhead / git_apply, 2),
        "cpu_ms_per_trial": round(1000 * per.framework_cpu, 2),
        "bare_git_apply_check_cpu_ms": round(1000 * per.bare_cpu, 2),
        "cpu_overhead_ratio": round(cpu_overhead / per.bare_cpu, 2),
        "setup_s": round(setup_s, 1),
        "target_met": wall < 120 * trials / 3000 and overhead <= 2 * git_apply,
    }
    rows = [
        ("trials graded", f"{trials} ({args.repos} repos x {args.models} models)"),
        (f"wall time, --jobs {args.jobs}, cold cache", f"{wall:.1f} s (target < 120 s for 3,000)"),
        ("throughput", f"{trials / wall:.1f} trials/s"),
        ("verdicts pass / fabricated marks", f"{figures['passed']} / {fabricated}"),
        ("per trial, serial, cold clone cache", f"{figures['serial_cold_ms_per_trial']} ms"),
        ("per trial, serial, warm clone cache", f"{figures['serial_warm_ms_per_trial']} ms"),
        ("bare git apply --check", f"{figures['bare_git_apply_check_ms']} ms"),
        (
            "framework overhead per trial",
            f"{figures['overhead_ms_per_trial']} ms "
            f"({figures['overhead_ratio']}x git apply; target <= 2x)",
        ),
        (
            "the same in CPU time (framework / bare)",
            f"{figures['cpu_ms_per_trial']} / {figures['bare_git_apply_check_cpu_ms']} ms "
            f"(overhead {figures['cpu_overhead_ratio']}x; steadier on a busy machine)",
        ),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
