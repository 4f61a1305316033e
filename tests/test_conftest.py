"""The suite's own set-up: what tests/conftest.py promises the other tests."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from tests import conftest
from tests.conftest import ROOT, budget_line


@pytest.mark.docker
def test_a_docker_test_runs_in_its_module_s_docker_group(request: pytest.FixtureRequest) -> None:
    # Marked docker but asks for no engine, so it runs everywhere. Under xdist's loadgroup
    # the group shows as a suffix of the node id; without the suffix, tests of one module
    # run on both workers and one worker's teardown removes images the other still uses.
    if not hasattr(request.config, "workerinput"):
        pytest.skip("not under pytest-xdist: there are no workers to keep apart")
    assert request.node.nodeid.endswith("@docker-test_conftest"), request.node.nodeid


@pytest.mark.docker
def test_the_docker_tests_come_longest_modules_first(request: pytest.FixtureRequest) -> None:
    # Asks for no engine. The session's docker tests, in the order xdist hands them out.
    docker_items = [i for i in request.session.items if i.get_closest_marker("docker")]
    assert request.node in docker_items
    ranks = [conftest.docker_rank(item) for item in docker_items]
    assert ranks == sorted(ranks), [item.nodeid for item in docker_items]


def test_the_longest_docker_modules_named_are_modules_of_docker_tests() -> None:
    # A module renamed or no longer marked docker would silently lose its place.
    modules = {path.stem: path for path in (ROOT / "tests").rglob("test_*.py")}
    for stem in conftest.LONGEST_DOCKER_MODULES:
        assert stem in modules, f"{stem} names no test module"
        assert "mark.docker" in modules[stem].read_text(), f"{stem} has no docker test"


@pytest.mark.postgres
@pytest.mark.redis
def test_a_database_test_runs_in_the_databases_group(request: pytest.FixtureRequest) -> None:
    # Asks for no server, so it runs everywhere: the databases' tests run one at a time,
    # beside the engine's, which need none of their servers.
    if not hasattr(request.config, "workerinput"):
        pytest.skip("not under pytest-xdist: there are no workers to keep apart")
    assert request.node.nodeid.endswith("@databases"), request.node.nodeid


@pytest.mark.docker
@pytest.mark.postgres
def test_a_test_of_docker_and_a_database_runs_in_its_module_s_docker_group(
    request: pytest.FixtureRequest,
) -> None:
    if not hasattr(request.config, "workerinput"):
        pytest.skip("not under pytest-xdist: there are no workers to keep apart")
    assert request.node.nodeid.endswith("@docker-test_conftest"), request.node.nodeid


def test_a_test_of_no_service_is_left_to_any_worker(request: pytest.FixtureRequest) -> None:
    if not hasattr(request.config, "workerinput"):
        pytest.skip("not under pytest-xdist: there are no workers to keep apart")
    assert "@" not in request.node.nodeid, request.node.nodeid


def test_a_test_of_the_judge_sdks_runs_in_their_group(
    request: pytest.FixtureRequest, judge_sdks: object
) -> None:
    # Only the worker that runs this group imports the SDKs.
    if not hasattr(request.config, "workerinput"):
        pytest.skip("not under pytest-xdist: there are no workers to keep apart")
    assert request.node.nodeid.endswith("@judge-sdks"), request.node.nodeid


@pytest.fixture(scope="module")
def _built_once_for_the_module() -> None:
    """Asked for by a test below, so that it shares a module-scoped fixture."""


@pytest.mark.usefixtures("_built_once_for_the_module")
def test_tests_sharing_a_module_fixture_run_in_their_modules_group(
    request: pytest.FixtureRequest,
) -> None:
    # On one worker, the module's fixture is built once, not once on each worker.
    if not hasattr(request.config, "workerinput"):
        pytest.skip("not under pytest-xdist: there are no workers to keep apart")
    assert request.node.nodeid.endswith("@tests/test_conftest.py"), request.node.nodeid


# An import at the start of a line is a module's own (a function's or TYPE_CHECKING's is
# indented).
_SDK_IMPORT = re.compile(
    r"^(?:import|from) (anthropic|openai|oracles\.judges\.(?:anthropic|openai)_judge)\b", re.M
)


def test_no_test_module_imports_a_judge_sdk_at_its_top() -> None:
    # Collecting imports every test module in every worker: the SDKs come from judge_sdks.
    found = {
        str(path.relative_to(ROOT)): _SDK_IMPORT.findall(path.read_text())
        for path in (ROOT / "tests").rglob("*.py")
    }
    assert {name: sdks for name, sdks in found.items() if sdks} == {}


def _sorted_dump(url: str) -> list[str]:
    # Sorted: the chain itself creates a table's indexes in no fixed order.
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return sorted(conn.connection.driver_connection.iterdump())  # type: ignore[union-attr]
    finally:
        engine.dispose()


def _chain_refused(_conn: Connection) -> None:
    raise AssertionError("the migration chain ran for a new ledger")


def test_a_new_sqlite_ledger_is_made_from_the_template_not_the_chain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conftest.migrated_ledger_dump()  # the worker's one run of the chain, if not yet made
    monkeypatch.setattr(conftest, "_run_chain", _chain_refused)
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    Store.open(url).close()
    assert "CREATE TABLE ledger_head" in "".join(_sorted_dump(url))


def test_the_template_holds_what_the_chain_makes_of_an_empty_ledger(tmp_path: Path) -> None:
    from_template = f"sqlite:///{tmp_path / 'template.db'}"
    Store.open(from_template).close()
    by_chain = f"sqlite:///{tmp_path / 'chain.db'}"
    engine = sa.create_engine(by_chain)
    with engine.begin() as conn:
        conftest._run_chain(conn)
    engine.dispose()
    assert _sorted_dump(from_template) == _sorted_dump(by_chain)


@pytest.mark.real_migrations
def test_a_test_marked_real_migrations_runs_the_chain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(conftest, "_run_chain", _chain_refused)
    with pytest.raises(AssertionError, match="the migration chain ran"):
        Store.open(f"sqlite:///{tmp_path / 'ledger.db'}")


def test_a_ledger_that_is_not_empty_is_upgraded_by_the_chain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    Store.open(url).close()
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql("DELETE FROM alembic_version")  # as a release before migrations
    engine.dispose()
    monkeypatch.setattr(conftest, "_run_chain", _chain_refused)
    with pytest.raises(AssertionError, match="the migration chain ran"):
        Store.open(url)


def _make_variable(name: str) -> str:
    found = re.search(rf"^{name} := (.*)$", (ROOT / "Makefile").read_text(), re.MULTILINE)
    assert found, f"the Makefile defines no {name}"
    return found.group(1)


def test_make_test_leaves_out_every_service_and_make_test_services_runs_them() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    declared = {m.split(":")[0] for m in pyproject["tool"]["pytest"]["ini_options"]["markers"]}
    services = set(_make_variable("SERVICES").split(" or "))
    # A marker of a new service must be named here, or `make test` would run its tests.
    assert services | {"live", "real_migrations"} == declared
    assert _make_variable("OFFLINE") == "not ($(SERVICES)) and not live"
    makefile = (ROOT / "Makefile").read_text()
    assert '-m "$(OFFLINE)" --suite-budget' in makefile
    # The two halves of `make test-services` select every service marker between them.
    assert '-m "($(SERVICES)) and not docker"' in makefile
    assert "docker" in services
    assert "-m docker --no-loadscope-reorder --suite-budget $(DOCKER_BUDGET)\n" in makefile
    assert re.search(r"^test-services: test-databases test-docker$", makefile, re.MULTILINE)
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    made = [line.split("make ", 1)[1] for line in ci if line.startswith("timed make ")]
    beside = [line.rsplit("make ", 1)[1] for line in ci if line.startswith("in_background ")]
    assert made == ["lint", "test", "test-docker"]
    assert beside == ["test-databases"]
    # The docker tests start only once the background jobs (the images, the other services'
    # tests) are done, and a failed one fails the run.
    started = ci.index('in_background "make test-databases" make test-databases')
    waits = [n for n, line in enumerate(ci) if 'wait "${background[$name]}"' in line]
    assert waits and started < waits[0] < ci.index("timed make test-docker")
    assert any('exit "$rc"' in line for line in ci[waits[0] :])


def test_the_suite_time_is_told_against_its_budget() -> None:
    assert budget_line(12.34, 30) == "suite time: 12.3 s, within its budget of 30 s"
    over = budget_line(45.0, 30)
    assert over.startswith("suite time: 45.0 s, OVER its budget of 30 s")
    assert "--durations" in over


def test_a_report_written_with_plots_not_drawn_has_the_stand_in_plots(
    plots_not_drawn: list[str], specs: SpecSet, tmp_path: Path
) -> None:
    from migration_evals.gate.evaluation import evaluate
    from migration_evals.gate.publication import check
    from migration_evals.gate.report import report_document, write_report
    from tests.gate.ledgers import add_gold

    store = Store.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    add_gold(store)  # the gold anchor's matrix: the one plot of an otherwise empty ledger
    evaluation = evaluate(store, specs)
    store.close()
    files = write_report(report_document(evaluation, check(evaluation), "now"), tmp_path / "r")
    assert plots_not_drawn == ["gold_anchor"]
    assert files.plots == (tmp_path / "r" / "gold_anchor.png",)
    assert files.plots[0].read_bytes() == conftest.STAND_IN_PLOTS["png"]
    assert (tmp_path / "r" / "gold_anchor.svg").read_bytes() == conftest.STAND_IN_PLOTS["svg"]


def test_a_copied_empty_repository_commits_what_git_init_would(tmp_path: Path) -> None:
    by_init = tmp_path / "by-init"
    by_init.mkdir()
    conftest.run_git(by_init, "init", "-q", "-b", "main")
    copied = tmp_path / "copied"
    conftest.init_repository(copied)
    for repo in (by_init, copied):
        conftest.write_files(repo, {"a.txt": "a\n", "src/b.txt": "b\n"})
    assert conftest.commit_all(copied, "base") == conftest.commit_all(by_init, "base")
    assert conftest.run_git(copied, "status", "--porcelain") == ""
    assert conftest.run_git(copied, "branch", "--show-current") == "main"


def test_a_ref_read_from_files_is_what_rev_parse_says(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    conftest.init_repository(repo)
    conftest.write_files(repo, {"a.txt": "a\n"})
    first = conftest.commit_all(repo, "first")
    conftest.run_git(repo, "checkout", "-q", "-b", "topic")
    conftest.write_files(repo, {"a.txt": "b\n"})
    second = conftest.commit_all(repo, "second")
    assert [conftest.resolve_ref(repo, rev) for rev in ("main", "topic", "HEAD")] == [
        first,
        second,
        second,
    ]
    conftest.run_git(repo, "checkout", "-q", "--detach", "main")
    assert conftest.resolve_ref(repo) == first
    conftest.run_git(repo, "pack-refs", "--all")  # a packed ref is asked of git
    assert conftest.resolve_ref(repo, "topic") == second
    assert conftest.resolve_ref(repo, "HEAD~0") == first
