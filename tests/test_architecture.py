"""Imports flow bot -> {gate, oracles, miners} -> core; nothing imports bot. All five live
in the one top-level package, ``migration_evals``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.project_code import READS_THE_CODE, environment_reads, read_module

# One worker runs the tests that read the code, so that each file is parsed once.
pytestmark = pytest.mark.xdist_group(READS_THE_CODE)

ROOT = Path(__file__).resolve().parents[1]
TOP = "migration_evals"
SOURCE = ROOT / TOP
PACKAGES = ("core", "oracles", "gate", "miners", "bot")
ALLOWED = {
    "core": set(),
    "oracles": {"core"},
    "gate": {"core"},
    "miners": {"core"},
    "bot": {"core", "oracles", "gate", "miners"},
}


def _import_statements(path: Path) -> tuple[ast.Import | ast.ImportFrom, ...]:
    """The import statements of ``path``: the checks below read the same ~600 files, each
    parsed once (``tests.project_code``)."""
    return read_module(path).imports


def _absolute_imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in _import_statements(path):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif node.module and node.level == 0:
            names.add(node.module)
            if node.module == TOP:  # from migration_evals import core
                names.update(f"{TOP}.{alias.name}" for alias in node.names)
    return names


def _imported_packages(path: Path) -> set[str]:
    """The project's packages ``path`` imports, by their second name (``migration_evals.X``)."""
    parts = (name.split(".") for name in _absolute_imports(path))
    return {p[1] for p in parts if len(p) > 1 and p[0] == TOP} & set(PACKAGES)


def _sources(package: str) -> list[Path]:
    found = sorted((SOURCE / package).rglob("*.py"))
    assert found, f"{TOP}/{package} holds no module: the check would pass on nothing"
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_import_direction(package: str) -> None:
    offenders = {}
    for path in _sources(package):
        wrong = _imported_packages(path) - ALLOWED[package] - {package}
        if wrong:
            offenders[str(path.relative_to(ROOT))] = sorted(wrong)
    assert offenders == {}


def test_the_check_sees_a_wrong_direction(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(f"from {TOP}.bot.cli import main\nfrom {TOP} import gate\n")
    assert _imported_packages(probe) == {"bot", "gate"}


def _project_python() -> list[Path]:
    folders = (SOURCE, ROOT / "tests", ROOT / "scripts", ROOT / "benchmarks", ROOT / "examples")
    skip = ROOT / "examples" / "projects"  # the demo's own repositories, not the project's code
    return [
        path
        for folder in folders
        for path in folder.rglob("*.py")
        if skip not in path.parents and ".venv" not in path.parts
    ]


def test_nothing_imports_the_packages_by_their_old_top_level_names() -> None:
    """Installed, the distribution adds only ``migration_evals``: an import of ``core`` or
    ``bot`` would find some other package of that name, or nothing."""
    offenders = {
        str(path.relative_to(ROOT)): sorted(old)
        for path in _project_python()
        if (old := {n for n in _absolute_imports(path) if n.split(".")[0] in PACKAGES})
    }
    assert offenders == {}


def _readers_below_bot(root: Path) -> dict[str, list[str]]:
    readers: dict[str, list[str]] = {}
    for package in ("core", "oracles", "gate", "miners"):
        for path in sorted((root / TOP / package).rglob("*.py")):
            reads = read_module(path).environment_reads
            if reads:
                readers[str(path.relative_to(root))] = list(reads)
    return readers


def test_nothing_below_bot_reads_the_environment() -> None:
    readers = _readers_below_bot(ROOT)
    # migration_evals/core/git.py only hands the process environment through to git (PATH, HOME,
    # credential helpers) with its no-prompt guards added; it reads no setting from it.
    assert readers.pop("migration_evals/core/git.py") == ["38: .environ"]
    assert readers == {}


@pytest.mark.parametrize(
    "source",
    [
        'flag = __import__("os").environ.get("XP")',
        'import importlib\nflag = importlib.import_module("os").environ["XP"]',
        'from importlib import import_module\nhome = import_module("posix")',
        "import os as system\nflag = system.environ.get('XP')",
        "import os\nflag = os.getenv('XP')",
        "from os import getenv\nflag = getenv('XP')",
        "from os import environ as e\nflag = e.get('XP')",
        "from os import *",
        "import os\nflag = getattr(os, 'environ')['XP']",
        "import sys\nflag = sys.modules['os'].sep",
    ],
)
def test_every_spelling_of_an_environment_read_is_found(source: str) -> None:
    assert environment_reads(source) != []


def test_the_check_fails_on_a_package_that_reads_the_environment(tmp_path: Path) -> None:
    for package in ("core", "oracles", "gate", "miners"):
        (tmp_path / TOP / package).mkdir(parents=True)
    (tmp_path / TOP / "gate" / "evaluation.py").write_text(
        'def evaluate() -> None:\n    if __import__("os").environ.get("XP"):\n        pass\n'
    )
    assert _readers_below_bot(tmp_path) == {
        "migration_evals/gate/evaluation.py": ["2: .environ", "2: __import__('os')"]
    }


def test_harmless_names_are_not_taken_for_environment_reads() -> None:
    source = (
        "import jinja2\n"
        "environment = jinja2.Environment()\n"
        "def run(request):\n    return dict(request.environment)\n"
        'import importlib\nmodule = importlib.import_module("json")\n'
    )
    assert environment_reads(source) == []


def _imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in _import_statements(path):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


# migration_evals/bot/jobs serves the App and the executor, which never import one another.
APART = {
    "migration_evals/bot/app": ("migration_evals.bot.executor",),
    "migration_evals/bot/executor": ("migration_evals.bot.app",),
    "migration_evals/bot/jobs": ("migration_evals.bot.app", "migration_evals.bot.executor"),
}


@pytest.mark.parametrize("folder", sorted(APART))
def test_the_app_the_executor_and_the_job_system_stay_apart(folder: str) -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(
            name
            for name in _imported_modules(path)
            if any(name == banned or name.startswith(banned + ".") for banned in APART[folder])
        )
        for path in sorted((ROOT / folder).rglob("*.py"))
    }
    assert offenders, f"{folder} holds no module"
    assert {path: names for path, names in offenders.items() if names} == {}


def test_the_apart_check_sees_both_spellings(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import migration_evals.bot.executor.driver\nfrom migration_evals.bot import executor\n"
    )
    assert {
        "migration_evals.bot.executor.driver",
        "migration_evals.bot.executor",
    } <= _imported_modules(probe)


# The one GitHub client: PyGithub does the live wire work in one module; every other module
# (the App's client, the miners' provider, tests included) reaches GitHub through
# ``migration_evals.core.github.GitHubApi`` and a transport.
GITHUB_LIVE = SOURCE / "core" / "github" / "live.py"


def _imports_pygithub(path: Path) -> bool:
    return any(name == "github" or name.startswith("github.") for name in _absolute_imports(path))


def test_only_the_live_transport_imports_pygithub() -> None:
    importers = [path for path in _project_python() if _imports_pygithub(path)]
    assert [str(path.relative_to(ROOT)) for path in importers] == [
        str(GITHUB_LIVE.relative_to(ROOT))
    ]


def test_the_pygithub_check_sees_both_spellings(tmp_path: Path) -> None:
    plain, dotted, ours = tmp_path / "a.py", tmp_path / "b.py", tmp_path / "c.py"
    plain.write_text("import github\n")
    dotted.write_text("from github.Requester import Requester\n")
    ours.write_text(f"from {TOP}.core.github import GitHubApi\n")
    assert (_imports_pygithub(plain), _imports_pygithub(dotted)) == (True, True)
    assert not _imports_pygithub(ours)


def test_both_github_callers_use_the_one_client() -> None:
    for caller in ("miners/github.py", "bot/app/github.py"):
        names = _absolute_imports(SOURCE / caller)
        assert f"{TOP}.core.github" in names, caller


# Parts with one job each: the store and the live sandbox were split because one class
# carried everything (Store 44 methods, DockerSandbox 33); these bounds keep any class in
# their modules from growing back into that.
SPLIT_MODULES = (
    "core/store.py",
    "core/database.py",
    "core/ledger.py",
    "core/runs.py",
    "core/trial_queries.py",
    "core/snapshots.py",
    "core/artifacts.py",
    "oracles/sandbox",
)
MAX_PUBLIC_METHODS = 15
# Private helpers included: DockerSandbox had 5 public methods and 28 private ones. The
# images command's ImageBuilder (one public method, 21 in all) is the largest below it.
MAX_METHODS = 24


def _method_counts(path: Path) -> dict[str, tuple[int, int]]:
    """Each class of ``path``: (public methods, methods other than dunders)."""
    counts = {}
    for node in ast.parse(path.read_text(), filename=str(path)).body:
        if isinstance(node, ast.ClassDef):
            names = [
                n.name
                for n in node.body
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                and not n.name.startswith("__")
            ]
            public = [name for name in names if not name.startswith("_")]
            counts[node.name] = (len(public), len(names))
    return counts


def _split_sources() -> list[Path]:
    found = []
    for name in SPLIT_MODULES:
        path = SOURCE / name
        found.extend(sorted(path.glob("*.py")) if path.is_dir() else [path])
    assert all(path.is_file() for path in found) and len(found) > len(SPLIT_MODULES)
    return found


def _too_large(paths: list[Path]) -> dict[str, tuple[int, int]]:
    return {
        f"{path.name}:{name}": counted
        for path in paths
        for name, counted in _method_counts(path).items()
        if counted[0] > MAX_PUBLIC_METHODS or counted[1] > MAX_METHODS
    }


def test_the_store_and_the_sandbox_stay_split_into_small_parts() -> None:
    assert _too_large(_split_sources()) == {}


def test_the_size_check_sees_a_class_that_grew_back(tmp_path: Path) -> None:
    public = "\n".join(f"    def m{n}(self) -> None: ..." for n in range(16))
    private = "\n".join(f"    def _p{n}(self) -> None: ..." for n in range(24))
    (tmp_path / "wide.py").write_text(f"class Wide:\n{public}\n")
    (tmp_path / "deep.py").write_text(f"class Deep:\n    def run(self) -> None: ...\n{private}\n")
    found = _too_large([tmp_path / "wide.py", tmp_path / "deep.py"])
    assert found == {"wide.py:Wide": (16, 16), "deep.py:Deep": (1, 25)}


# Callers take the part of the store they use (``db``, ``ledger``, ``runs``, ``trials``,
# ``snapshots``, ``artifacts``), not the whole bundle. Below the command layer a parameter
# annotated ``Store`` is left only where a function reads most of the parts: the ledger
# scan (db, keys, ledger, snapshots) and the evaluations that hand the store on to it.
WHOLE_STORE = {
    "gate/ledger_scan.py": {"scan_ledger"},
    "gate/evaluation.py": {"evaluate"},
    "gate/incremental.py": {"check_inputs"},
    "gate/bundle.py": {"verify_bundle", "_against_ledger"},
}
BELOW_THE_COMMANDS = ("core", "oracles", "gate", "miners")
STORE_ITSELF = "core/store.py"


def _taking_the_store(path: Path) -> set[str]:
    """The functions and methods of ``path`` with a parameter annotated ``Store``."""
    return set(read_module(path).taking_the_store)


def test_below_the_commands_callers_take_the_store_s_parts() -> None:
    found = {}
    for package in BELOW_THE_COMMANDS:
        for path in _sources(package):
            name = path.relative_to(SOURCE).as_posix()
            taking = _taking_the_store(path) - WHOLE_STORE.get(name, set())
            if name != STORE_ITSELF and taking:
                found[name] = sorted(taking)
    assert found == {}
    # Each function let through still takes the whole store: the list cannot go stale.
    kept = {name: _taking_the_store(SOURCE / name) for name in WHOLE_STORE}
    assert kept == WHOLE_STORE


def test_the_store_check_sees_every_spelling(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "def whole(store: Store) -> None: ...\n"
        "def quoted(found: 'Store | None') -> None: ...\n"
        "def named(store: store_module.Store) -> None: ...\n"
        "class Cascade:\n"
        "    def __init__(self, *, store: Store | None = None) -> None: ...\n"
        "def part(db: Database, artifacts: ArtifactStore, store: StoreError) -> None: ...\n"
    )
    assert _taking_the_store(probe) == {"whole", "quoted", "named", "__init__"}
