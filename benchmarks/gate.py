"""Gate benchmark: ``gate check`` and ``report`` over a large synthetic ledger.

Writes N synthetic results (envelopes, one per tier reached or skipped, four per trial)
through the real ``Ledger.append_trials`` into a fresh SQLite ledger, with the payloads the
cascade writes (sandbox runs, judge transcripts), a realistic funnel, a few infrastructure
errors and strict-mode judge pairs, plus an anchored gold table. Then it runs the real
command line, as a user would, and measures each command's wall time, the CPU time of
the command and its scan workers, and the peak memory of the whole process tree (sampled).

    python benchmarks/gate.py                      # 100,000 results = 25,000 trials
    python benchmarks/gate.py --results 400000     # 100,000 trials
    python benchmarks/gate.py --keyed              # an HMAC-chained ledger, checkpointed

Targets: ``gate check`` under 3 s, ``report`` under 10 s, peak memory under 1 GB, on
2 cores. Prints a table, then one JSON object of the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from migration_evals.bot.exits import ExitStatus
from migration_evals.bot.ledger_keys import open_store
from migration_evals.bot.settings import settings_from_env
from migration_evals.core.gold import GoldLabel, GoldRow, upsert_gold
from migration_evals.core.model import Changeset, Envelope, Tier, Trial, Verdict
from migration_evals.core.specs import SpecSet
from migration_evals.oracles.ecosystems.registry import load_specs

ROOT = Path(__file__).resolve().parents[1]
CLI = Path(sys.executable).with_name("migration-evals")
MODELS = ("claude-sonnet-4-5", "gpt-5", "gemini-2.5-pro")
RECIPES = ("java8-to-17", "go-import-rewrite", "base-image-bump")
# Chance of passing each tier once reached: about 90% apply, 60% compile, 42% tests reached.
PASS_RATE = {Tier.APPLY: 0.90, Tier.COMPILE: 0.67, Tier.TESTS: 0.70, Tier.JUDGE: 0.85}
ERROR_RATE = 0.01
STRICT_SHARE = 0.2
TAIL = "[INFO] BUILD SUCCESS\n" * 12


def _sandbox_run(rng: random.Random) -> dict[str, Any]:
    return {
        "image_id": "sha256:" + "b" * 64,
        "exit_code": 0,
        "timed_out": False,
        "duration_s": round(rng.uniform(5, 60), 3),
        "output_tail": TAIL,
        "output_truncated": False,
    }


def _judge(role: str, model: str, verdict: str) -> dict[str, Any]:
    return {
        "role": role,
        "model": model,
        "answer": {
            "verdict": verdict,
            "confidence": 0.9,
            "rationale": "The pom sets maven.compiler.release to 17 and nothing else changes.",
            "evidence": ["+    <maven.compiler.release>17</maven.compiler.release>"],
            "problem": "",
        },
        "stop_reason": "end_turn",
        "input_tokens": 3100,
        "output_tokens": 180,
        "cost_usd": 0.0120,
        "fabricated": [],
    }


def _details(tier: Tier, verdict: Verdict, strict: bool, rng: random.Random) -> dict[str, Any]:
    if tier is Tier.COMPILE:
        return _sandbox_run(rng)
    if tier is Tier.TESTS:
        return {"baseline": _sandbox_run(rng), "patched": _sandbox_run(rng), "reruns": 0}
    if tier is Tier.JUDGE:
        judges = [_judge("primary", "claude-sonnet-4-5", verdict.value)]
        if strict:
            judges.append(_judge("secondary", "gpt-5", verdict.value))
        return {"strict": strict, "judges": judges}
    return {}


def _verdict(tier: Tier, rng: random.Random) -> Verdict:
    if rng.random() < ERROR_RATE / 4:
        return Verdict.ERROR
    return Verdict.PASS if rng.random() < PASS_RATE[tier] else Verdict.FAIL


def _trial(n: int, specs: SpecSet, rng: random.Random) -> Trial:
    model, recipe = MODELS[n % 3], RECIPES[(n // 3) % 3]
    created = date(2016, 1, 1) + timedelta(days=rng.randrange(3650))
    changeset = Changeset(
        id=f"repo{n // 3:06d}/{model}",
        repo=f"https://example.com/org/repo{n // 3:06d}.git",
        base_commit=f"{n:040x}",
        patch=f"diff {n}",
        recipe=recipe,
        model=model,
        repo_created_at=created,
    )
    stamps, trial_id = specs.stamps_for(recipe), f"t-bench-{n:08d}"
    strict = rng.random() < STRICT_SHARE
    envelopes, stopped = [], False
    for spec in specs.oracle.tiers:
        if stopped:
            envelope = Envelope(trial_id, changeset.id, spec.tier, Verdict.SKIPPED, 0, 0, 0, stamps)
            envelopes.append(envelope)
            continue
        verdict = _verdict(spec.tier, rng)
        details = _details(spec.tier, verdict, strict, rng) if verdict is not Verdict.ERROR else {}
        envelopes.append(
            Envelope(
                trial_id=trial_id,
                changeset_id=changeset.id,
                tier=spec.tier,
                verdict=verdict,
                list_cost_usd=spec.list_cost_usd,
                actual_cost_usd=spec.list_cost_usd * 0.2,
                duration_s=round(rng.uniform(0.1, 30), 3),
                stamps=stamps,
                reason="" if verdict is Verdict.PASS else f"{spec.tier.value}: {verdict.value}",
                adapter=f"{spec.tier.value}/1",
                details=details,
            )
        )
        stopped = verdict is not Verdict.PASS
    return Trial(trial_id, "r-bench", changeset, tuple(envelopes))


def build_ledger(url: str, specs: SpecSet, trials: int, env: dict[str, str]) -> None:
    """The ledger, written with the keys ``env`` names (none: unkeyed)."""
    rng = random.Random(5)
    store = open_store(settings_from_env(env), url=url)
    batch = []
    for n in range(trials):
        batch.append((_trial(n, specs, rng), {}))
        if len(batch) == 2000:
            store.ledger.append_trials(batch)
            batch = []
    store.ledger.append_trials(batch)
    now = datetime.now(UTC)
    for number in range(1, 201):  # an anchored gold table: 90% of labels agree
        passed = number % 2 == 0
        accepted = passed if rng.random() < 0.9 else not passed
        label = GoldLabel.ACCEPTED if accepted else GoldLabel.REJECTED
        verdict = Verdict.PASS if passed else Verdict.FAIL
        upsert_gold(
            store.ledger, GoldRow("example/gold", number, label, now, funnel_verdict=verdict)
        )
    if store.keys.signer is not None:
        store.ledger.checkpoint()
    store.close()


def _key_env(folder: Path) -> dict[str, str]:
    """A ledger key and a checkpoint key, as the environment gives them."""
    from cryptography.hazmat.primitives import serialization  # noqa: PLC0415
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (  # noqa: PLC0415
        Ed25519PrivateKey,
    )

    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    (folder / "checkpoint.pem").write_bytes(pem)
    return {
        "MIGRATION_EVALS_LEDGER_KEY": "benchmark-ledger-key-" + "0" * 32,
        "MIGRATION_EVALS_CHECKPOINT_KEY": str(folder / "checkpoint.pem"),
    }


def _tree_rss_kib(pid: int) -> int:
    """Resident memory of ``pid`` and all its descendants, from /proc."""
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            total += next(
                int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")
            )
            for task in Path(f"/proc/{current}/task").iterdir():
                stack.extend(int(c) for c in (task / "children").read_text().split())
        except (OSError, StopIteration):
            continue
    return total


def timed(argv: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Wall time, CPU time (command and workers) and sampled peak memory of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak = 0

    def sample() -> None:
        nonlocal peak
        while process.poll() is None:
            peak = max(peak, _tree_rss_kib(process.pid))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    stdout, stderr = process.communicate()
    sampler.join()
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if process.returncode not in (ExitStatus.OK, ExitStatus.GATE_REFUSED):
        raise SystemExit(f"{' '.join(argv)} failed ({process.returncode}): {stderr.decode()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    last = stdout.decode().strip().splitlines()[-1:] or [""]
    inner = json.loads(last[0]).get("inner_s") if last[0].startswith('{"inner_s"') else None
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "peak_mib": peak / 1024,
        "exit": process.returncode,
        "inner_s": inner,
        "stdout": stdout.decode(),
    }


def _median_run(argv: list[str], env: dict[str, str], runs: int) -> dict[str, Any]:
    results = [timed(argv, env) for _ in range(runs)]
    best = sorted(results, key=lambda r: r["wall_s"])[len(results) // 2]
    best["peak_mib"] = max(r["peak_mib"] for r in results)
    best["wall_all"] = [round(r["wall_s"], 2) for r in results]
    return best


def inner(kind: str, url: str, out: str) -> int:
    """The gate's own work, timed inside one process after its imports (no command-line
    start-up): what the command costs beyond loading the program."""
    from migration_evals.bot.commands.gate import scan_workers  # noqa: PLC0415 - imports are not timed
    from migration_evals.gate.evaluation import evaluate  # noqa: PLC0415
    from migration_evals.gate.publication import check  # noqa: PLC0415
    from migration_evals.gate.report import report_document, write_report  # noqa: PLC0415

    started = time.perf_counter()
    store = open_store(settings_from_env(), url=url)
    evaluation = evaluate(store, load_specs(ROOT / "specs"), workers=scan_workers(None))
    decision = check(evaluation)
    if kind == "report":
        write_report(report_document(evaluation, decision, "now"), Path(out))
    print(json.dumps({"inner_s": time.perf_counter() - started}))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=int, default=100_000, help="ledger envelopes")
    parser.add_argument("--runs", type=int, default=3, help="runs of each command (median)")
    parser.add_argument(
        "--keyed", action="store_true", help="a ledger key and a checkpoint key (default: none)"
    )
    parser.add_argument("--inner", nargs=3, metavar=("KIND", "URL", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        return inner(*args.inner)
    trials = args.results // len(Tier)
    specs = load_specs(ROOT / "specs")
    with tempfile.TemporaryDirectory(prefix="me-gate-bench-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'ledger.db'}"
        env = {**os.environ, "MIGRATION_EVALS_DB_URL": url}
        if args.keyed:
            env.update(_key_env(Path(tmp)))
        started = time.perf_counter()
        build_ledger(url, specs, trials, env)
        setup_s = time.perf_counter() - started
        startup = _median_run([str(CLI), "--help"], env, args.runs)
        check = _median_run([str(CLI), "gate", "check", "--json"], env, args.runs)
        report = _median_run([str(CLI), "report", "--out", f"{tmp}/report"], env, args.runs)
        this = [sys.executable, __file__, "--inner"]
        check_inner = _median_run([*this, "check", url, "-"], env, args.runs)
        report_inner = _median_run([*this, "report", url, f"{tmp}/inner"], env, args.runs)
        size_mib = Path(tmp, "ledger.db").stat().st_size / 2**20
    load = os.getloadavg()
    peak = max(check["peak_mib"], report["peak_mib"])
    figures = {
        "results": trials * len(Tier),
        "keyed": args.keyed,
        "trials": trials,
        "ledger_mib": round(size_mib, 1),
        "cores": len(os.sched_getaffinity(0)),
        "gate_check_s": round(check["wall_s"], 2),
        "gate_check_runs_s": check["wall_all"],
        "gate_check_cpu_s": round(check["cpu_s"], 2),
        "gate_check_exit": check["exit"],
        "cli_startup_s": round(startup["wall_s"], 2),
        "gate_check_in_process_s": round(check_inner["inner_s"], 2),
        "report_in_process_s": round(report_inner["inner_s"], 2),
        "report_s": round(report["wall_s"], 2),
        "report_runs_s": report["wall_all"],
        "report_cpu_s": round(report["cpu_s"], 2),
        "peak_mib": round(peak, 1),
        "load_average_1m": round(load[0], 2),
        "setup_s": round(setup_s, 1),
        "target_met": check["wall_s"] < 3 and report["wall_s"] < 10 and peak < 1024,
    }
    rows = [
        ("results (envelopes) / trials", f"{figures['results']:,} / {trials:,}"),
        ("ledger size", f"{figures['ledger_mib']} MiB, {figures['cores']} cores"),
        (
            "gate check --json (median wall)",
            f"{figures['gate_check_s']} s (target < 3 s); runs {figures['gate_check_runs_s']}",
        ),
        ("gate check CPU (command + workers)", f"{figures['gate_check_cpu_s']} s"),
        ("  of which the CLI's start-up (--help)", f"{figures['cli_startup_s']} s"),
        ("  gate check's own work, in process", f"{figures['gate_check_in_process_s']} s"),
        (
            "report --out (median wall)",
            f"{figures['report_s']} s (target < 10 s); runs {figures['report_runs_s']}",
        ),
        ("report CPU (command + workers)", f"{figures['report_cpu_s']} s"),
        ("  report's own work, in process", f"{figures['report_in_process_s']} s"),
        ("peak memory, process tree", f"{figures['peak_mib']} MiB (target < 1024 MiB)"),
        ("machine load average (1 min) after", f"{figures['load_average_1m']}"),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
