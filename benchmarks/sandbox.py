"""Sandbox benchmark: the live adapter's container overhead against a bare ``docker run``.

Per recipe and tier, the median wall time of

* **bare**: ``docker run --rm IMAGE true`` with the docker CLI, on the same engine (for the
  Dockerfile recipe: ``docker build -q`` of the same tree, layers cached);
* **bare SDK**: the same run through the docker SDK's ``containers.run`` (no CLI process
  to start, so a stricter yardstick; not measured for builds);
* **adapter**: ``DockerSandbox.run`` of ``true`` in the same image, as the tier asks for it:
  a fresh copy of the example's tree, every hardening setting, live output capture, the
  report and class-file collection, the kill check and the clean-up,

run alternately so load on the machine hits both alike; the target is adapter <= 1.2x
bare. Then tier 2 for a Java example (java-calc's good patch) through the real cascade:
cold (empty clone cache), warm (clone and snapshot cached, the build runs again) and
cached (the stored envelope is reused, no container at all).

    python benchmarks/sandbox.py [--runs 10] [--warm 3]

Needs a Docker engine with the images (``migration-evals images build``). Prints a table,
then one JSON object on its last line.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import docker

from migration_evals.core.model import Changeset, Tier
from migration_evals.core.ports import JudgeReply, SandboxAction, SandboxRequest
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from migration_evals.oracles.cascade import Budget, Cascade
from migration_evals.oracles.ecosystems.registry import load_specs, output_captures
from migration_evals.oracles.repos import RepoCache
from migration_evals.oracles.sandbox import DockerSandbox, SandboxLimits
from migration_evals.oracles.sandbox.docker import default_user
from migration_evals.oracles.tiers.apply import ApplyOracle
from migration_evals.oracles.tiers.compile import CompileOracle
from migration_evals.oracles.tiers.judge import JudgeOracle
from migration_evals.oracles.tiers.tests import TestsOracle

ROOT = Path(__file__).resolve().parents[1]
PROJECTS = ROOT / "examples" / "projects"
TARGET_RATIO = 1.2
# (recipe, tier, example project whose tree is copied in)
CASES = [
    ("java8-to-17", "compile", "java-calc"),
    ("java8-to-17", "tests", "java-calc"),
    ("go-import-rewrite", "compile", "go-ioutil"),
    ("go-import-rewrite", "tests", "go-ioutil"),
    ("base-image-bump", "compile", "docker-worker"),
]


def _median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 1)


def _timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _copier(project: str, scratch: Path) -> Callable[[], Path]:
    def tree() -> Path:
        target = Path(tempfile.mkdtemp(dir=scratch)) / "tree"
        shutil.copytree(PROJECTS / project, target)
        return target

    return tree


def _request(specs: SpecSet, case: tuple[str, str, str], scratch: Path, image_id: str) -> Any:
    recipe_name, tier, project = case
    sandbox = specs.recipe(recipe_name).sandbox
    tree = _copier(project, scratch)
    if sandbox.get("build_dockerfile"):
        command = tuple(sandbox["compile"]["command"])
        return SandboxRequest(SandboxAction.BUILD, "@dockerfile", command, "b", tree=tree)
    image = str(sandbox["image"])
    rule = sandbox.get("class_files") or {}
    return SandboxRequest(
        SandboxAction.RUN,
        image,
        ("true",),
        "b",
        collect=tuple(sandbox[tier].get("collect", ())),
        inspect=tuple(rule.get("paths", ())) if tier == "compile" else (),
        pinned=((image, image_id),),
        tree=tree,
    )


def _bare(specs: SpecSet, case: tuple[str, str, str], scratch: Path) -> Callable[[], object]:
    recipe_name, _tier, project = case
    sandbox = specs.recipe(recipe_name).sandbox
    if sandbox.get("build_dockerfile"):
        context = _copier(project, scratch)()
        command = ["docker", "build", "--network", "none", "-q", str(context)]
    else:
        command = ["docker", "run", "--rm", str(sandbox["image"]), "true"]
    return lambda: subprocess.run(command, check=True, capture_output=True)


def _bare_sdk(client: docker.DockerClient, image_id: str) -> Callable[[], object] | None:
    if not image_id:
        return None
    return lambda: client.containers.run(image_id, ["true"], remove=True)


def overhead(
    sandbox: DockerSandbox, client: docker.DockerClient, specs: SpecSet, runs: int, scratch: Path
) -> list[dict[str, Any]]:
    rows = []
    for case in CASES:
        image = specs.recipe(case[0]).sandbox.image
        image_id = "" if image == "@dockerfile" else str(client.images.get(image).id)
        bare, sdk = _bare(specs, case, scratch), _bare_sdk(client, image_id)
        bare()  # warm the page cache and the builder cache for both sides
        sandbox.run(_request(specs, case, scratch, image_id))
        bare_s, sdk_s, adapter_s = [], [], []
        for _ in range(runs):
            bare_s.append(_timed(bare))
            if sdk is not None:
                sdk_s.append(_timed(sdk))
            request = _request(specs, case, scratch, image_id)
            adapter_s.append(_timed(lambda request=request: sandbox.run(request)))
        adapter = statistics.median(adapter_s)
        rows.append(
            {
                "recipe": case[0],
                "tier": case[1],
                "bare_ms": _median_ms(bare_s),
                "bare_sdk_ms": _median_ms(sdk_s) if sdk_s else None,
                "adapter_ms": _median_ms(adapter_s),
                "ratio": round(adapter / statistics.median(bare_s), 2),
                "ratio_sdk": round(adapter / statistics.median(sdk_s), 2) if sdk_s else None,
            }
        )
    return rows


def _judge() -> Any:
    class Passing:
        identity = "bench:judge"

        def ask(self, _request: object) -> JudgeReply:
            return JudgeReply('{"verdict": "pass"}', "end_turn")

    return Passing()


def _java_changeset(scratch: Path) -> Changeset:
    lines = (ROOT / "examples" / "changesets" / "java.jsonl").read_text().splitlines()
    data = json.loads(next(line for line in lines if '"java-calc/good"' in line))
    base = ROOT / "examples" / "changesets"
    return Changeset(
        "java-calc/good",
        str((base / data["repo"]).resolve()),
        data["base_commit"],
        (base / data["patch_file"]).read_text(),
        data["recipe"],
        data["model"],
        date.fromisoformat(data["repo_created_at"]),
    )


def tier_two(sandbox: DockerSandbox, specs: SpecSet, warm: int, scratch: Path) -> dict[str, Any]:
    """Apply and compile only (the spec cut to tiers 1-2), cold, warm and cached."""
    two = replace(specs, oracle=replace(specs.oracle, tiers=specs.oracle.tiers[:2]))
    oracles = [ApplyOracle(), CompileOracle(sandbox), TestsOracle(sandbox), JudgeOracle(_judge())]
    changeset = _java_changeset(scratch)

    def trial(repos: RepoCache, store: Store | None = None) -> tuple[float, float, bool]:
        trials, artifacts = (store.trials, store.artifacts) if store is not None else (None, None)
        cascade = Cascade(two, oracles, repos, trials=trials, artifacts=artifacts)  # type: ignore[arg-type]
        started = time.perf_counter()
        record = cascade.run_trial("bench", changeset, Budget(None))
        total = time.perf_counter() - started
        compile_envelope = next(e for e in record.trial.envelopes if e.tier is Tier.COMPILE)
        if store is not None:
            store.ledger.append_trial(record.trial, record.cache_keys)
        return total, compile_envelope.duration_s, compile_envelope.cached

    cold = [trial(RepoCache(Path(tempfile.mkdtemp(dir=scratch)))) for _ in range(2)]
    repos = RepoCache(Path(tempfile.mkdtemp(dir=scratch)))
    trial(repos)
    warm_runs = [trial(repos) for _ in range(warm)]
    store = Store.open(f"sqlite:///{scratch / 'bench.db'}")
    trial(repos, store)
    cached = trial(repos, store)
    store.close()
    return {
        "cold_trial_s": round(statistics.median(c[0] for c in cold), 2),
        "cold_compile_s": round(statistics.median(c[1] for c in cold), 2),
        "warm_trial_s": round(statistics.median(w[0] for w in warm_runs), 2),
        "warm_compile_s": round(statistics.median(w[1] for w in warm_runs), 2),
        "cached_trial_s": round(cached[0], 3),
        "cached_served_from_store": cached[2],
    }


def _print(rows: list[dict[str, Any]], java: dict[str, Any]) -> None:
    header = f"{'recipe':20} {'tier':8} {'bare ms':>9} {'bare SDK ms':>12} {'adapter ms':>11}"
    print(f"{header} {'ratio':>6} {'vs SDK':>7}")
    for row in rows:
        sdk = f"{row['bare_sdk_ms']:12.1f}" if row["bare_sdk_ms"] else f"{'-':>12}"
        vs_sdk = f"{row['ratio_sdk']:7.2f}" if row["ratio_sdk"] else f"{'-':>7}"
        print(
            f"{row['recipe']:20} {row['tier']:8} {row['bare_ms']:9.1f} {sdk} "
            f"{row['adapter_ms']:11.1f} {row['ratio']:6.2f} {vs_sdk}"
        )
    print(f"target: adapter <= {TARGET_RATIO}x bare (`docker run --rm IMAGE true`)")
    print()
    print("tier 2, java-calc/good (apply + compile through the cascade)")
    print(
        f"  cold   (empty clone cache)      trial {java['cold_trial_s']:6.2f} s, "
        f"compile {java['cold_compile_s']:6.2f} s"
    )
    print(
        f"  warm   (clone + snapshot cached) trial {java['warm_trial_s']:6.2f} s, "
        f"compile {java['warm_compile_s']:6.2f} s"
    )
    print(
        f"  cached (envelope reused)        trial {java['cached_trial_s']:6.3f} s, "
        f"served from the store: {java['cached_served_from_store']}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="timed runs per case")
    parser.add_argument("--warm", type=int, default=3, help="warm tier-2 trials")
    args = parser.parse_args()
    specs = load_specs(ROOT / "specs")
    client = docker.DockerClient(
        base_url=os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock", timeout=300
    )
    user = default_user(euid=os.geteuid(), uid=os.getuid(), gid=os.getgid())
    limits = SandboxLimits.from_spec(specs.oracle.sandbox)
    sandbox = DockerSandbox(
        client, limits, user=user, as_root=os.geteuid() == 0, captures=output_captures()
    )
    with tempfile.TemporaryDirectory(prefix="me-bench-") as folder:
        scratch = Path(folder)
        rows = overhead(sandbox, client, specs, args.runs, scratch)
        java = tier_two(sandbox, specs, args.warm, scratch)
    _print(rows, java)
    worst = max(row["ratio"] for row in rows)
    figures = {
        "overhead": rows,
        "worst_ratio": worst,
        "worst_ratio_sdk": max(row["ratio_sdk"] or 0 for row in rows),
        "target_ratio": TARGET_RATIO,
        "target_met": worst <= TARGET_RATIO,
        "java_tier2": java,
        "runs": args.runs,
    }
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
