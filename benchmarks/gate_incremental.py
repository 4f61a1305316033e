"""Incremental gate benchmark: ``gate check`` after the signed gate snapshot versus ``--full``.

For each backend (SQLite, PostgreSQL) it writes N synthetic results (the payloads of
``benchmarks/gate.py``, four envelopes per trial) through the real ``Ledger.append_trials``
in large group commits, so the chain is the store's own, under a ledger key and a
checkpoint key; signs a checkpoint; runs ``gate check`` once (a full walk, which keeps the
gate snapshot at the checkpoint); appends M more results; then times, through the real
command line, ``gate check`` (which walks only the M new rows) and ``gate check --full``
(every row), and the incremental check's own work in process (after imports) in its
parts: reading the snapshot, walking the new rows, counting from the columns, deciding.

    python benchmarks/gate_incremental.py                        # 1,000,000 + 1,000 results
    python benchmarks/gate_incremental.py --results 100000 --backends sqlite

PostgreSQL: ``MIGRATION_EVALS_TEST_POSTGRES_URL`` (``.ci/setup.d/20-postgres.sh`` starts the
server and writes it to ``.ci/services.env``); the benchmark works in a schema of its own
and drops it. Target: under 1 s for 1,000 new results over 1,000,000. Prints a table, then
one JSON object of the figures.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from migration_evals.bot.ledger_keys import open_store
from migration_evals.bot.settings import settings_from_env
from migration_evals.core.model import Tier
from migration_evals.core.store import Store
from migration_evals.oracles.ecosystems.registry import load_specs

ROOT = Path(__file__).resolve().parents[1]
CLI = Path(sys.executable).with_name("migration-evals")
POSTGRES_SETTING = "MIGRATION_EVALS_TEST_POSTGRES_URL"


def _gate_benchmark() -> ModuleType:
    """``benchmarks/gate.py`` (its ledger and timing helpers), loaded by path: its module
    name would be the ``gate`` package's."""
    spec = importlib.util.spec_from_file_location("gate_benchmark", ROOT / "benchmarks/gate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BENCH = _gate_benchmark()


@contextmanager
def sqlite_url(folder: Path) -> Iterator[str]:
    yield f"sqlite:///{folder / 'ledger.db'}"


@contextmanager
def postgres_url(base: str) -> Iterator[str]:
    """A fresh schema of the PostgreSQL database at ``base``, upgraded; dropped after."""
    schema = f"bench_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(base)
    with admin.begin() as conn:
        conn.execute(sa.text(f"CREATE SCHEMA {schema}"))
    url = sa.make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
    rendered = url.render_as_string(hide_password=False)
    try:
        store = Store.attach(rendered)
        store.db.upgrade_schema()
        store.close()
        yield rendered
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


def append_results(url: str, env: dict[str, str], first: int, trials: int) -> None:
    """``trials`` more trials (four results each), numbered from ``first``."""
    specs = load_specs(ROOT / "specs")
    rng = random.Random(first)
    store = open_store(settings_from_env(env), url=url)
    batch = [(BENCH._trial(n, specs, rng), {}) for n in range(first, first + trials)]
    store.ledger.append_trials(batch)
    store.close()


def inner(url: str) -> int:
    """The incremental check's own work, timed after its imports (scipy's included), in
    its parts: checking and reading the snapshot, the scan (which does that again, then
    walks the new rows), counting from the columns, and deciding."""
    from migration_evals.bot.commands.gate import scan_workers  # noqa: PLC0415 - imports are not timed
    from migration_evals.gate.incremental import column_inputs  # noqa: PLC0415
    from migration_evals.gate.ledger_scan import SNAPSHOT_FORM, scan_ledger  # noqa: PLC0415
    from migration_evals.gate.publication import decide  # noqa: PLC0415
    from migration_evals.gate.snapshot import find_start  # noqa: PLC0415
    from migration_evals.gate.stats import two_proportion_ztest  # noqa: PLC0415

    two_proportion_ztest(1, 2, 1, 2)  # loads scipy, as the command does during its scan
    store = open_store(settings_from_env(), url=url)
    specs = load_specs(ROOT / "specs")
    started, cpu = time.perf_counter(), time.process_time()
    find_start(store.snapshots, store.keys, SNAPSHOT_FORM)
    read = time.perf_counter()
    scan = scan_ledger(store, full=False, workers=scan_workers(None))
    scanned = time.perf_counter()
    if scan.earlier is None:
        raise SystemExit("the incremental check did not start from a gate snapshot")
    columns = scan.earlier.extended(scan.trials)
    inputs = column_inputs(store.db, store.runs, specs, scan.chain, columns)
    counted = time.perf_counter()
    decide(inputs)
    done = time.perf_counter()
    figures = {
        "snapshot_s": read - started,
        "scan_s": scanned - read,
        "count_s": counted - scanned,
        "decide_s": done - counted,
        "total_s": done - read,
        "cpu_s": time.process_time() - cpu,  # with find_start's: the machine may be busy
    }
    print(json.dumps({"inner_s": figures, "resumed_at": scan.chain.resumed_at}))
    return 0


def _inner_run(env: dict[str, str], url: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--inner", url], env=env, capture_output=True, check=True
    )
    found: dict[str, Any] = json.loads(done.stdout.decode().strip().splitlines()[-1])
    return found


def measure(url: str, env: dict[str, str], args: argparse.Namespace) -> dict[str, Any]:
    """Build, checkpoint, prime, append, then time both kinds of check on one backend."""
    env = {**env, "MIGRATION_EVALS_DB_URL": url}
    specs = load_specs(ROOT / "specs")
    trials, new = args.results // len(Tier), args.new // len(Tier)
    started = time.perf_counter()
    BENCH.build_ledger(url, specs, trials, env)  # signs a checkpoint at its head
    build_s = time.perf_counter() - started
    prime = BENCH.timed([str(CLI), "gate", "check", "--json"], env)  # walks all, keeps one
    append_results(url, env, trials, new)
    incremental = BENCH._median_run([str(CLI), "gate", "check", "--json"], env, args.runs)
    full = BENCH._median_run([str(CLI), "gate", "check", "--json", "--full"], env, args.full_runs)
    fast, slow = json.loads(incremental["stdout"]), json.loads(full["stdout"])
    in_process = _inner_run(env, url)
    return {
        "results": trials * len(Tier),
        "new_results": new * len(Tier),
        "build_s": round(build_s, 1),
        "prime_check_s": round(prime["wall_s"], 2),
        "incremental_check_s": round(incremental["wall_s"], 2),
        "incremental_check_cpu_s": round(incremental["cpu_s"], 2),
        "incremental_runs_s": incremental["wall_all"],
        "incremental_peak_mib": round(incremental["peak_mib"], 1),
        "incremental_in_process_s": {k: round(v, 3) for k, v in in_process["inner_s"].items()},
        "full_check_s": round(full["wall_s"], 2),
        "full_check_cpu_s": round(full["cpu_s"], 2),
        "full_runs_s": full["wall_all"],
        "full_peak_mib": round(full["peak_mib"], 1),
        "resumed_at": fast["ledger"]["resumed_at"],
        "same_decision": _decision(fast) == _decision(slow),
    }


def _decision(document: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in document.items() if key != "ledger"}


def _rows(backend: str, figures: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (f"{backend}: results + new", f"{figures['results']:,} + {figures['new_results']:,}"),
        (f"{backend}: build (append_trials)", f"{figures['build_s']} s"),
        (f"{backend}: first check (full, keeps snapshot)", f"{figures['prime_check_s']} s"),
        (
            f"{backend}: gate check (incremental)",
            f"{figures['incremental_check_s']} s (target < 1 s), CPU "
            f"{figures['incremental_check_cpu_s']} s; runs {figures['incremental_runs_s']}, "
            f"resumed at row {figures['resumed_at']:,}",
        ),
        (
            f"{backend}:   in process, after imports",
            "{total_s} s (CPU {cpu_s} s): scan {scan_s} s (reading the snapshot alone "
            "{snapshot_s} s), counting {count_s} s, deciding {decide_s} s".format(
                **figures["incremental_in_process_s"]
            ),
        ),
        (
            f"{backend}: gate check --full",
            f"{figures['full_check_s']} s, CPU {figures['full_check_cpu_s']} s; "
            f"runs {figures['full_runs_s']}",
        ),
        (
            f"{backend}: peak memory incremental / full",
            f"{figures['incremental_peak_mib']} / {figures['full_peak_mib']} MiB",
        ),
        (f"{backend}: same decision both ways", str(figures["same_decision"])),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=int, default=1_000_000, help="results before")
    parser.add_argument("--new", type=int, default=1_000, help="results appended after")
    parser.add_argument("--runs", type=int, default=3, help="incremental checks (median)")
    parser.add_argument("--full-runs", type=int, default=1, help="full checks (median)")
    parser.add_argument("--backends", default="sqlite,postgres", help="comma-separated")
    parser.add_argument("--inner", metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        return inner(args.inner)
    figures: dict[str, Any] = {"cores": len(os.sched_getaffinity(0))}
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="me-gate-incr-") as tmp:
        # Compiled modules cached as an installed program has them, even where the
        # environment sets PYTHONDONTWRITEBYTECODE (compiling costs every start seconds).
        pycache = {"PYTHONDONTWRITEBYTECODE": "", "PYTHONPYCACHEPREFIX": f"{tmp}/pycache"}
        env = {**os.environ, **BENCH._key_env(Path(tmp)), **pycache}
        for backend in args.backends.split(","):
            if backend == "postgres" and not os.environ.get(POSTGRES_SETTING):
                raise SystemExit(f"postgres: set {POSTGRES_SETTING} (see .ci/services.env)")
            where = (
                sqlite_url(Path(tmp))
                if backend == "sqlite"
                else postgres_url(os.environ[POSTGRES_SETTING])
            )
            with where as url:
                figures[backend] = measure(url, env, args)
            rows.extend(_rows(backend, figures[backend]))
    figures["load_average_1m"] = round(os.getloadavg()[0], 2)
    rows.append(("machine load average (1 min) after", str(figures["load_average_1m"])))
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
