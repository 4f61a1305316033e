"""Webhook intake under gunicorn: 2,000 signed deliveries, 20 at a time, 10% duplicates.

Starts ``migration-evals serve`` (gunicorn, loopback, a fresh SQLite database, job workers
and scheduler off so only intake is measured), sends real ``pull_request.opened`` bodies
(one PR number per unique delivery) and measures the time to the 202. Then it counts the
jobs in the database: every unique delivery must have exactly one job, and no duplicate
delivery may have made one. Prints a table, then one JSON object as the last line.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from migration_evals.bot.app.signature import sign  # noqa: E402

PAYLOAD = (
    ROOT / "tests" / "fixtures" / "github" / "webhooks" / "pull_request" / "opened.payload.json"
)
SECRET = "benchmark-secret"  # noqa: S105 - a throwaway secret for loopback only
TOTAL, CONCURRENCY, DUPLICATE_SHARE = 2000, 20, 0.10
TARGET_P99_MS = 100.0


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _key(folder: Path) -> Path:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    path = folder / "app.pem"
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return path


def _deliveries() -> list[tuple[str, bytes]]:
    template = json.loads(PAYLOAD.read_text())
    unique = int(TOTAL * (1 - DUPLICATE_SHARE))
    made = []
    for number in range(1, unique + 1):
        template["pull_request"]["number"] = template["number"] = number
        made.append((f"bench-{number}", json.dumps(template).encode()))
    rng = random.Random(7)
    duplicates = [rng.choice(made) for _ in range(TOTAL - unique)]
    everything = made + duplicates
    rng.shuffle(everything)
    return everything


def _send(port: int, delivery: str, body: bytes) -> tuple[int, float, bool]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {
        "X-GitHub-Event": "pull_request",
        "X-GitHub-Delivery": delivery,
        "X-Hub-Signature-256": sign(SECRET, body),
        "Content-Type": "application/json",
    }
    started = time.perf_counter()
    conn.request("POST", "/webhook", body=body, headers=headers)
    response = conn.getresponse()
    answer = response.read()
    elapsed = time.perf_counter() - started
    conn.close()
    duplicate = response.status == 202 and json.loads(answer).get("duplicate", False)
    return response.status, elapsed, bool(duplicate)


def _wait_healthy(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit("the server exited during start-up")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("the server did not become healthy")


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        db = folder / "bench.db"
        port = _port()
        env = {
            **os.environ,
            "MIGRATION_EVALS_APP_ID": "1",
            "MIGRATION_EVALS_PRIVATE_KEY_PATH": str(_key(folder)),
            "MIGRATION_EVALS_WEBHOOK_SECRET": SECRET,
            "MIGRATION_EVALS_DB_URL": f"sqlite:///{db}",
            "MIGRATION_EVALS_BOT_WORKERS": "0",
            "MIGRATION_EVALS_SCHEDULER": "off",
        }
        command = [sys.executable, "-m", "migration_evals.bot.cli", "serve", "--port", str(port)]
        command += ["--processes", "1", "--threads", "20"]
        proc = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            _wait_healthy(port, proc)
            deliveries = _deliveries()
            started = time.perf_counter()
            with ThreadPoolExecutor(CONCURRENCY) as pool:
                results = list(pool.map(lambda d: _send(port, *d), deliveries))
            wall = time.perf_counter() - started
        finally:
            proc.terminate()
            proc.wait(30)
        with sqlite3.connect(db) as conn:
            jobs = conn.execute("SELECT COUNT(*), COUNT(DISTINCT key) FROM bot_jobs").fetchone()
            recorded = conn.execute("SELECT COUNT(*) FROM bot_deliveries").fetchone()[0]
    return _report(results, deliveries, jobs, recorded, wall)


def _report(
    results: list[tuple[int, float, bool]],
    deliveries: list[tuple[str, bytes]],
    jobs: tuple[int, int],
    recorded: int,
    wall: float,
) -> int:
    times = sorted(r[1] * 1000 for r in results)
    unique = len({d for d, _ in deliveries})
    p50 = statistics.median(times)
    p99 = times[int(len(times) * 0.99) - 1]
    accepted = sum(r[0] == 202 for r in results)
    duplicates = sum(r[2] for r in results)
    lost = unique - jobs[0]
    ok = (
        p99 < TARGET_P99_MS
        and lost == 0
        and jobs[0] == jobs[1] == unique
        and accepted == len(results)
    )
    rows = [
        ("deliveries sent", f"{len(results)} ({CONCURRENCY} concurrent)"),
        ("unique deliveries", str(unique)),
        ("answered 202", str(accepted)),
        ("acknowledged as duplicates", str(duplicates)),
        ("deliveries recorded", str(recorded)),
        ("jobs created", str(jobs[0])),
        ("distinct job keys", str(jobs[1])),
        ("lost", str(lost)),
        ("p50 time to 202", f"{p50:.1f} ms"),
        ("p99 time to 202", f"{p99:.1f} ms (target < {TARGET_P99_MS:.0f} ms)"),
        ("throughput", f"{len(results) / wall:.0f} deliveries/s"),
        ("verdict", "PASS" if ok else "FAIL"),
    ]
    width = max(len(name) for name, _ in rows)
    print("Webhook intake under gunicorn (loopback, SQLite)")
    for name, value in rows:
        print(f"  {name.ljust(width)}  {value}")
    summary = {
        "benchmark": "webhooks",
        "sent": len(results),
        "concurrency": CONCURRENCY,
        "unique_deliveries": unique,
        "accepted_202": accepted,
        "duplicates_acknowledged": duplicates,
        "jobs_created": jobs[0],
        "distinct_job_keys": jobs[1],
        "lost": lost,
        "p50_ms": round(p50, 2),
        "p99_ms": round(p99, 2),
        "throughput_per_s": round(len(results) / wall, 1),
        "target_p99_ms": TARGET_P99_MS,
        "ok": ok,
    }
    print(json.dumps(summary))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
