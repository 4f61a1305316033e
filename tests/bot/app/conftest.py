"""The App under test: a service wired to the fake GitHub, real payloads, signed deliveries.

The PR in the octokit payloads (Codertocat/Hello-World #2) is mapped by the fake GitHub
onto the bundled java-calc example: its clone URL is the example's bundle, its merge base
the example's base commit and its diff one of the example patches, so grading runs the
real cascade on the replay cassettes.
"""

from __future__ import annotations

import copy
import json
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from markdown_it import MarkdownIt

from migration_evals.bot.app.github import ClientPolicy, GitHubApp
from migration_evals.bot.app.pacing import PacingRule
from migration_evals.bot.app.service import BotService, build_service
from migration_evals.bot.app.signature import sign
from migration_evals.core.gold import GoldLabel, GoldRow, upsert_gold_rows
from migration_evals.core.model import Verdict
from migration_evals.core.settings import (
    Executor,
    GitHubAppSettings,
    LedgerKeySettings,
    ScaleSettings,
    Settings,
)
from migration_evals.core.store import Store
from tests.conftest import ROOT, SPECS_DIR
from tests.fake_github import FakeGitHub, FakePull, write_app_key
from tests.fakes import FakeDispatcher

WEBHOOKS = ROOT / "tests" / "fixtures" / "github" / "webhooks"
SECRET = "test-webhook-secret"
APP_ID = 4242
INSTALLATION = 1
REPO = "Codertocat/Hello-World"
JAVA_BASE = "7ea68cbcecdf91633132b078f21be4637e1639d1"
BUNDLE = ROOT / "examples" / "bundles" / "java-calc.bundle"
PATCHES = ROOT / "examples" / "patches" / "java-calc"
CONFIG = """\
agents:
  - author: Codertocat
    model: claude-sonnet-4-5
recipes:
  - recipe: java8-to-17
    label: bug
"""

# Tests make hundreds of writes in a moment: no pacing (the rule has tests of its own).
UNPACED = PacingRule(min_interval_s=0.0, per_minute=0, per_hour=0)


# CommonMark with GFM tables and strikethrough: how GitHub renders check runs and comments.
_GITHUB_MARKDOWN = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def render_markdown(text: str) -> str:
    """``text`` as GitHub would show it (HTML), to compare with what a reader should see."""
    return _GITHUB_MARKDOWN.render(text)


@pytest.fixture(scope="session")
def app_key(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """An RSA key pair for the App: (private key file, public key PEM)."""
    return write_app_key(tmp_path_factory.mktemp("key"))


@pytest.fixture(scope="session")
def repo_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


def payload(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((WEBHOOKS / name).read_text())
    return data


def raw(name: str) -> bytes:
    return (WEBHOOKS / name).read_bytes()


def pull_data(head_sha: str | None = None, number: int = 2) -> dict[str, Any]:
    """The PR as GET /pulls/{n} returns it: the webhook's pull_request object."""
    data = copy.deepcopy(payload("pull_request/opened.payload.json")["pull_request"])
    data["number"] = number
    if head_sha:
        data["head"]["sha"] = head_sha
    data["base"]["repo"]["clone_url"] = str(BUNDLE)
    return data


def with_head(name: str, head_sha: str) -> bytes:
    """A real payload whose PR head is moved to ``head_sha`` (for a second commit)."""
    data = payload(name)
    data["pull_request"]["head"]["sha"] = head_sha
    if "after" in data:
        data["after"] = head_sha
    return json.dumps(data, indent=2).encode()


@dataclass
class Harness:
    """The service, its fake GitHub and helpers to deliver webhooks and run jobs."""

    service: BotService
    github: FakeGitHub
    client: FlaskClient
    sleeps: list[float] = field(default_factory=list)

    def deliver(
        self,
        event: str,
        body: bytes,
        *,
        delivery: str | None = None,
        signature: str | None = "valid",
    ) -> Any:
        headers = {
            "X-GitHub-Event": event,
            "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
            "Content-Type": "application/json",
        }
        if signature == "valid":
            headers["X-Hub-Signature-256"] = sign(SECRET, body)
        elif signature is not None:
            headers["X-Hub-Signature-256"] = signature
        return self.client.post("/webhook", data=body, headers=headers)

    def drain(self, limit: int = 50) -> int:
        """Run queued jobs on this thread until none is left; returns how many the grading
        workers ran. Announce jobs (opening check runs) run first, as their own threads
        would, and are not counted (``announced`` runs them alone)."""
        ran = 0
        while ran < limit:
            self.announced(limit)
            if not self.service.workers.run_one("test-worker"):
                break
            ran += 1
        return ran

    def jobs(self, kind: str | None = "grade") -> list[dict[str, Any]]:
        """The queue's jobs of ``kind`` (grade jobs unless asked; None: every kind)."""
        return [j for j in self.service.queue.admin.jobs() if kind is None or j["kind"] == kind]

    def announced(self, limit: int = 50) -> int:
        """Run the queued announce jobs only; returns how many ran."""
        pool = self.service.announcers
        ran = 0
        while pool is not None and ran < limit and pool.run_one("test-announcer"):
            ran += 1
        return ran

    def set_pull(
        self, patch: str = "good", head_sha: str | None = None, number: int = 2
    ) -> FakePull:
        data = pull_data(head_sha, number)
        pull = FakePull(data, (PATCHES / f"{patch}.diff").read_text(), JAVA_BASE)
        self.github.add_pull(pull, installation=INSTALLATION)
        return pull


@pytest.fixture(scope="session")
def _anchored_ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An unkeyed ledger holding only ``seed_anchored_gold``'s table, written once per worker
    and copied for each anchored harness: writing and chaining its 40 rows took about 0.07 s
    of CPU for each harness."""
    path = tmp_path_factory.mktemp("anchored") / "ledger.db"
    store = Store.open(f"sqlite:///{path}")
    seed_anchored_gold(store)
    store.close()  # the last connection: SQLite folds the WAL into the file
    return path


@pytest.fixture
def make_harness(
    tmp_path: Path, app_key: tuple[Path, str], repo_cache: Path, _anchored_ledger: Path
) -> Iterator[Callable[..., Harness]]:
    made: list[Harness] = []

    def build(
        *,
        config: str | None = CONFIG,
        token_ttl_s: float = 3600.0,
        dispatcher: FakeDispatcher | None = None,
        anchored: bool = True,
        clock: Callable[[], float] = time.time,
        app_slug: str = "migration-evals",
        public_url: str | None = None,
        ledger: LedgerKeySettings | None = None,
        announce_workers: int = 0,  # no announce jobs unless a test asks for them
    ) -> Harness:
        key_path, public = app_key
        fake = FakeGitHub(app_id=APP_ID, public_key=public, token_ttl_s=token_ttl_s)
        url = fake.start()
        if config is not None:
            fake.files[(REPO, ".github/migration-evals.yml")] = config
        fake.permissions[(REPO, "writer")] = ("write", "maintain")
        fake.permissions[(REPO, "reader")] = ("read", "triage")
        db_path = tmp_path / f"bot{len(made)}.db"
        settings = Settings(
            specs_dir=SPECS_DIR,
            cassette_dir=ROOT / "cassettes",
            cache_dir=repo_cache,
            db_url=f"sqlite:///{db_path}",
            github_app=GitHubAppSettings(
                app_id=APP_ID,
                private_key_path=key_path,
                webhook_secret=SECRET,
                api_url=url,
                workers=0,
                announce_workers=announce_workers,
                scheduler=False,
                app_slug=app_slug,
                public_url=public_url,
            ),
            scale=ScaleSettings(executor=Executor.CELERY if dispatcher else Executor.EMBEDDED),
            ledger=ledger or LedgerKeySettings(),
        )
        if anchored and ledger is None:  # the copy holds what seeding would write
            shutil.copyfile(_anchored_ledger, db_path)
        sleeps: list[float] = []
        github = GitHubApp(
            APP_ID,
            key_path.read_text(),
            base_url=url,
            policy=ClientPolicy(pacing=UNPACED),
            sleep=sleeps.append,
            clock=clock,
        )
        service = build_service(settings, github=github, dispatcher=dispatcher, clock=clock)
        if anchored and ledger is not None:  # a keyed ledger: the unkeyed copy would not do
            seed_anchored_gold(service.store)
        harness = Harness(service, fake, service.app.test_client(), sleeps)
        harness.set_pull()
        made.append(harness)
        return harness

    yield build
    for harness in made:
        harness.service.stop()
        harness.github.stop()


def seed_anchored_gold(store: Store, n: int = 40) -> None:
    """A gold table whose labels agree with the funnel (phi 1 over n PRs): an anchored eval."""
    when = datetime(2026, 1, 1, tzinfo=UTC)
    upsert_gold_rows(
        store.ledger,
        [
            GoldRow(
                "gold/anchor",
                number,
                GoldLabel.ACCEPTED if number % 2 == 0 else GoldLabel.REJECTED,
                when,
                funnel_verdict=Verdict.PASS if number % 2 == 0 else Verdict.FAIL,
            )
            for number in range(1, n + 1)
        ],
    )


@pytest.fixture
def harness(make_harness: Callable[..., Harness]) -> Harness:
    return make_harness()
