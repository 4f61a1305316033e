"""A burst of pull requests: 1,000 signed ``pull_request.opened`` deliveries in seconds.

A batch change opens hundreds of pull requests at once. This benchmark sends 1,000 signed
deliveries (20 at a time) to the App, serving on loopback with its real intake, job queue
(SQLite) and GitHub client, against the fake GitHub of the tests, which enforces GitHub's
documented secondary rate limits on content-creating requests per installation (80 a
minute, 500 an hour; a write past them is refused with 403). The pull requests are spread
over 50 installations (organisations), 20 repositories each.

It measures, for every pull request, the time from its delivery to the moment GitHub held
its check run in progress, and checks: none lost (every pull request has a check run),
none duplicated (exactly one each), no write refused by a limit, and per installation at
most 80 writes in any minute and writes at least a second apart (GitHub's best practice).
Grading itself is not measured (its workers are off: the check runs are opened by the
App's announce threads, before and beside grading); ``benchmarks/realworld.py`` measures
grades.

What a single installation can do is bounded by GitHub, not by the App: the pacing rule
(``migration_evals.bot.app.pacing``) gives the earliest time each of 1,000 writes may be sent,
printed beside the measured run. No installation can show 1,000 check runs within a minute.

    python benchmarks/burst.py                     # 1,000 PRs over 50 installations
    python benchmarks/burst.py --prs 200 --installations 10
    python benchmarks/burst.py --write-interval 0.25   # the App's pacing, shortened

Prints a table, then one JSON object of the figures as the last line.
"""

from __future__ import annotations

import argparse
import copy
import http.client
import itertools
import json
import logging
import statistics
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from werkzeug.serving import make_server

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from migration_evals.bot.app.kinds import ANNOUNCE  # noqa: E402
from migration_evals.bot.app.pacing import GITHUB_PACING, schedule  # noqa: E402
from migration_evals.bot.app.repo_config import CONFIG_PATH  # noqa: E402
from migration_evals.bot.app.service import BotService, build_service  # noqa: E402
from migration_evals.bot.app.signature import sign  # noqa: E402
from migration_evals.bot.jobs.model import JobState  # noqa: E402
from migration_evals.core.serving import ServingThread  # noqa: E402
from migration_evals.core.settings import CassetteMode, GitHubAppSettings, Settings  # noqa: E402
from tests.fake_github import FakeGitHub, FakePull, write_app_key  # noqa: E402

PAYLOAD = (
    ROOT / "tests" / "fixtures" / "github" / "webhooks" / "pull_request" / "opened.payload.json"
)
SECRET = "burst-secret"  # noqa: S105 - a throwaway secret for loopback only
APP_ID = 77
TARGET_S = 60.0
CONFIG = """\
agents:
  - author: {author}
    model: claude-sonnet-4-5
recipes:
  - recipe: java8-to-17
    label: bug
"""


def _pull_requests(fake: FakeGitHub, prs: int, installations: int) -> list[tuple[str, bytes]]:
    """Each pull request in a repository of its own, round-robin over the installations;
    returns (repository, signed body) per delivery, in the order they are sent."""
    template = json.loads(PAYLOAD.read_text())
    author = template["pull_request"]["user"]["login"]
    bodies = []
    for index in range(prs):
        installation = index % installations + 1
        repo = f"org{installation}/service-{index}"
        event = copy.deepcopy(template)
        event["installation"] = {"id": installation}
        event["repository"]["full_name"] = repo
        event["pull_request"]["base"]["repo"]["full_name"] = repo
        event["pull_request"]["head"]["sha"] = uuid.uuid4().hex + uuid.uuid4().hex[:8]
        fake.add_pull(FakePull(event["pull_request"], "", "0" * 40), installation=installation)
        fake.files[(repo, CONFIG_PATH)] = CONFIG.format(author=author)
        bodies.append((repo, json.dumps(event).encode()))
    return bodies


def _send(port: int, body: bytes) -> tuple[int, float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {
        "X-GitHub-Event": "pull_request",
        "X-GitHub-Delivery": str(uuid.uuid4()),
        "X-Hub-Signature-256": sign(SECRET, body),
        "Content-Type": "application/json",
    }
    conn.request("POST", "/webhook", body=body, headers=headers)
    status = conn.getresponse().status
    conn.close()
    return status, time.time()


def _created(fake: FakeGitHub) -> dict[str, list[float]]:
    """When each repository's check runs were created (201 answers to the POST)."""
    found: dict[str, list[float]] = {}
    for call in list(fake.calls):
        if call.method == "POST" and call.path.endswith("/check-runs") and call.status == 201:
            repo = call.path.removeprefix("/repos/").removesuffix("/check-runs")
            found.setdefault(repo, []).append(call.at)
    return found


def _most_in_a_minute(times: list[float]) -> int:
    times = sorted(times)
    most, start = 0, 0
    for end, at in enumerate(times):
        while times[start] + 60.0 <= at:
            start += 1
        most = max(most, end - start + 1)
    return most


def _announcing(service: BotService) -> bool:
    """Whether a job that opens check runs is still waiting or running (grading jobs
    stay queued: no worker runs them here)."""
    waiting = (JobState.QUEUED, JobState.RUNNING)
    return bool(service.queue.admin.listing(states=waiting, kind=ANNOUNCE.name, limit=1))


def _run(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    key_path, public = write_app_key(folder)
    fake = FakeGitHub(app_id=APP_ID, public_key=public, secondary_limits=True)
    url = fake.start()
    deliveries = _pull_requests(fake, args.prs, args.installations)
    settings = Settings(
        specs_dir=ROOT / "specs",
        cassette_dir=ROOT / "cassettes",
        cache_dir=folder / "cache",
        db_url=f"sqlite:///{folder / 'burst.db'}",
        github_app=GitHubAppSettings(
            app_id=APP_ID,
            private_key_path=key_path,
            webhook_secret=SECRET,
            api_url=url,
            workers=0,  # grading is not measured here
            announce_workers=args.announce_workers,
            write_interval_s=args.write_interval,
            scheduler=False,
        ),
    )
    # GitHub is the fake, talked to live (the settings' own mode would replay it).
    service = build_service(settings, github_mode=CassetteMode.LIVE)
    server = make_server("127.0.0.1", 0, service.app, threaded=True)
    serving = ServingThread(server)
    serving.start()
    service.start()
    sent: dict[str, float] = {}
    try:
        started = time.time()
        with ThreadPoolExecutor(args.concurrency) as pool:
            answers = list(pool.map(lambda d: (d[0], *_send(server.port, d[1])), deliveries))
        sending_s = time.time() - started
        sent = {repo: at for repo, _status, at in answers}
        # Until there are as many check runs as pull requests and no job that opens one
        # is left, so that anything late (a duplicate) has been made too. Both checks are
        # cheap (a length, then one query): the App's threads keep the interpreter.
        deadline = time.time() + args.timeout
        while time.time() < deadline and (
            len(fake.check_runs) < len(deliveries) or _announcing(service)
        ):
            time.sleep(0.02)
    finally:
        service.stop()
        serving.stop()
        fake.stop()
    return _figures(args, fake, answers, sent, sending_s)


def _figures(
    args: argparse.Namespace,
    fake: FakeGitHub,
    answers: list[tuple[str, int, float]],
    sent: dict[str, float],
    sending_s: float,
) -> dict[str, Any]:
    created = _created(fake)
    latencies = sorted(created[repo][0] - sent[repo] for repo in created if repo in sent)
    per_installation = list(fake.writes_by_installation.values())
    gaps = [b - a for times in per_installation for a, b in itertools.pairwise(times)]
    single = schedule(GITHUB_PACING, args.prs)
    return {
        "prs": args.prs,
        "installations": args.installations,
        "concurrency": args.concurrency,
        "announce_workers": args.announce_workers,
        "accepted_202": sum(status == 202 for _repo, status, _at in answers),
        "sending_s": round(sending_s, 2),
        "check_runs_shown": len(created),
        "lost": len(sent) - len(created),
        "duplicated": sum(len(times) > 1 for times in created.values()),
        "p50_s": round(statistics.median(latencies), 2) if latencies else None,
        "p90_s": round(latencies[int(len(latencies) * 0.9) - 1], 2) if latencies else None,
        "p99_s": round(latencies[int(len(latencies) * 0.99) - 1], 2) if latencies else None,
        "max_s": round(latencies[-1], 2) if latencies else None,
        "within_target": sum(lat <= TARGET_S for lat in latencies),
        "target_s": TARGET_S,
        "writes_refused_by_limits": len(fake.refused_writes),
        "most_writes_in_a_minute": max((_most_in_a_minute(t) for t in per_installation), default=0),
        "shortest_gap_between_writes_s": round(min(gaps), 3) if gaps else None,
        "most_requests_in_flight": fake.most_in_flight,
        "one_installation_last_write_s": round(single[-1], 1),
        "one_installation_in_first_minute": sum(at < 60.0 for at in single),
    }


def _report(figures: dict[str, Any], write_interval_s: float) -> bool:
    ok = (
        figures["lost"] == 0
        and figures["duplicated"] == 0
        and figures["within_target"] == figures["prs"]
        and figures["writes_refused_by_limits"] == 0
        and figures["most_writes_in_a_minute"] <= GITHUB_PACING.per_minute
        and (figures["shortest_gap_between_writes_s"] or write_interval_s)
        >= write_interval_s - 0.01
    )
    rows = [
        ("pull requests", f"{figures['prs']} over {figures['installations']} installations"),
        ("deliveries answered 202", f"{figures['accepted_202']} in {figures['sending_s']} s"),
        ("check runs shown in progress", str(figures["check_runs_shown"])),
        ("lost / duplicated", f"{figures['lost']} / {figures['duplicated']}"),
        (
            "delivery to check run p50/p90/p99/max",
            f"{figures['p50_s']} / {figures['p90_s']} / {figures['p99_s']} / {figures['max_s']} s",
        ),
        ("within 60 s", f"{figures['within_target']} of {figures['prs']}"),
        ("writes refused by secondary limits", str(figures["writes_refused_by_limits"])),
        (
            "most writes of one installation a minute",
            f"{figures['most_writes_in_a_minute']} (<= 80)",
        ),
        (
            "shortest gap between its writes",
            f"{figures['shortest_gap_between_writes_s']} s (>= {write_interval_s:g})",
        ),
        ("most requests in flight", f"{figures['most_requests_in_flight']} (<= 100)"),
        (
            f"one installation, {figures['prs']} PRs (GitHub's limits)",
            f"{figures['one_installation_in_first_minute']} in the first minute, the last "
            f"after {figures['one_installation_last_write_s']} s",
        ),
        ("verdict", "PASS" if ok else "FAIL"),
    ]
    width = max(len(name) for name, _ in rows)
    print("A burst of pull requests (loopback, SQLite, the fake GitHub enforcing its limits)")
    for name, value in rows:
        print(f"  {name.ljust(width)}  {value}")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prs", type=int, default=1000)
    parser.add_argument("--installations", type=int, default=50)
    parser.add_argument("--concurrency", type=int, default=20, help="deliveries in flight")
    parser.add_argument(
        "--announce-workers",
        type=int,
        default=GitHubAppSettings().announce_workers,
        help="threads opening check runs (default: the App's)",
    )
    parser.add_argument(
        "--write-interval",
        type=float,
        default=GitHubAppSettings().write_interval_s,
        help="seconds between one installation's writes (default: the App's, GitHub's advice)",
    )
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds to wait")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as tmp:
        figures = _run(args, Path(tmp))
    ok = _report(figures, args.write_interval)
    print(json.dumps({"benchmark": "burst", **figures, "ok": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
