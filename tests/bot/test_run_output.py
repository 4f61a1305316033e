"""What ``run`` tells its user: progress in a log, the summary first, the trials on request,
and a warning and status of its own when infrastructure errors swamp the run."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pytest
from rich.console import Console

from migration_evals.bot.cli import main
from migration_evals.bot.console import trials_table
from migration_evals.bot.exits import ExitStatus
from migration_evals.core.model import Changeset, Envelope, Stamps, Tier, Trial, Verdict
from tests.bot.conftest import use_folder
from tests.conftest import ROOT

JAVA = ROOT / "examples" / "changesets" / "java.jsonl"
NO_ENGINE = "unix:///nonexistent/docker.sock"


@dataclass(frozen=True)
class Graded:
    """``run`` over the Java examples with the trials shown and the results written, in
    ``folder`` with ``env``'s settings, and what it printed. It exited 0."""

    folder: Path
    printed: str
    told: str


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Graded:
    """The one fresh run whose output the tests below read: a run of the examples costs
    about half a second of CPU. A test that runs ``run`` again does so in a copy of this
    folder (``graded_env``), where the trials are served from its cache."""
    folder = tmp_path_factory.mktemp("graded")
    printed, told = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        use_folder(folder, patch)
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(told):
            code = main(["run", str(JAVA), "--trials", "--out", "run.json"])
    assert code == ExitStatus.OK, told.getvalue()
    return Graded(folder, printed.getvalue(), told.getvalue())


@pytest.fixture
def graded_env(graded: Graded, env: Path) -> Path:
    """``env`` holding a copy of what ``graded`` ran and wrote."""
    shutil.copytree(graded.folder, env, dirs_exist_ok=True)
    return env


def test_a_run_whose_sandbox_never_starts_ends_with_the_warning_and_its_status(
    env: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE)
    code = main(["run", str(JAVA), "--sandbox", "live", "--out", "run.json"])
    err = capsys.readouterr().err
    assert code == ExitStatus.INFRA_ERRORS == 12
    errors = json.loads((env / "run.json").read_text())["infrastructure_errors"]
    assert errors["above_limit"] is True and errors["limit"] == 0.05
    assert errors["rate"] == pytest.approx(errors["count"] / 16)
    warning = err[err.index("WARNING:") :]
    # Apply needs no sandbox, so the trials that fail there are graded; the rest errored.
    assert re.match(r"WARNING: (\d+) of 16 trials \(\d+%\) ended in an infrastructure", warning)
    assert "above the gate's limit of 5% (max_infra_error_rate)" in warning
    assert f"no Docker engine at {NO_ENGINE}" in warning
    assert "migration-evals show t-" in warning


def test_progress_lines_appear_when_the_output_is_not_a_terminal(graded: Graded) -> None:
    lines = [line for line in graded.told.splitlines() if line.startswith("grading: ")]
    assert len(lines) >= 2  # a tenth of 16 trials: a line every two
    last = r"grading: 16/16 trials \(100%\) in \d+s, .*finished, \$[\d.]+ spent"
    assert re.match(last, lines[-1])
    assert all(re.search(r"trials/(s|min)", line) for line in lines)


def test_the_summary_comes_first_and_the_trials_only_when_asked(
    graded: Graded, graded_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shown = [line.strip() for line in graded.printed.splitlines()]  # run with --trials
    assert main(["run", str(JAVA)]) == ExitStatus.OK  # again, without
    lines = [line.strip() for line in capsys.readouterr().out.splitlines()]
    for printed in (shown, lines):
        assert printed.index("Funnel over 16 trial(s)") < printed.index("Pass rate per model")
        assert "│ claude-sonnet-4-5 │      6 │      6 │      2 │" in "\n".join(printed)
    assert "Trials" not in lines
    assert shown.index("Pass rate per model") < shown.index("Trials")
    assert any(re.match(r"│ t-[0-9a-f]{16} │ java-calc/no-apply ", line) for line in shown)


def test_piped_trials_are_whole_however_long_their_rows(graded: Graded) -> None:
    out = graded.printed  # of --trials --out run.json
    rows = [line for line in out.splitlines() if re.match(r"│ t-[0-9a-f]{16} ", line)]
    trials = json.loads((graded.folder / "run.json").read_text())["trials"]
    assert sorted(row.split("│")[1].strip() for row in rows) == sorted(
        t["trial_id"] for t in trials
    )
    assert "…" not in "".join(rows)  # no cell cut short, at any width
    assert max(len(line) for line in out.splitlines()) > 140  # nor the table at 140


def test_model_names_are_never_cut_however_narrow_the_console() -> None:
    stamps = Stamps("o" * 64, "r" * 64, "h" * 64)
    trials = []
    for n, model in enumerate(["claude-sonnet-4-5-20250929", "claude-sonnet-5-5-20260101"]):
        changeset = Changeset(f"c{n}", "r", "b" * 40, "p", "java8-to-17", model, date(2020, 1, 1))
        reason = "a long reason " * 20
        envelope = Envelope(f"t{n}", f"c{n}", Tier.APPLY, Verdict.FAIL, 0, 0, 0, stamps, reason)
        trials.append(Trial(f"t{n}", "run", changeset, (envelope,)))
    console = Console(record=True, width=80)
    console.print(trials_table(trials))
    text = console.export_text()
    assert "claude-sonnet-4-5-20250929" in text
    assert "claude-sonnet-5-5-20260101" in text


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d, "not a regular file (give a JSONL file)"),
        (lambda d: d / "missing.jsonl", "file not found"),
        (lambda d: _written(d / "latin1.jsonl", b'{"id": "caf\xe9"}\n'), "not UTF-8 text"),
    ],
)
def test_an_unusable_changesets_path_is_one_line(
    env: Path,
    capsys: pytest.CaptureFixture[str],
    make: Callable[[Path], Path],
    message: str,
) -> None:
    path = make(env)
    assert main(["run", str(path)]) == ExitStatus.ERROR
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"migration-evals: error: {path}") and message in err


def _written(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_the_json_document_carries_the_per_model_pass_rates(
    graded: Graded, graded_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(JAVA), "--json"]) == ExitStatus.OK  # the trials reused
    document = json.loads(capsys.readouterr().out)
    written = json.loads((graded.folder / "run.json").read_text())  # the first run's
    assert document["models"] == written["models"]
    models = {row["model"]: row for row in document["models"]}
    assert sorted(models) == ["claude-sonnet-4-5", "gemini-2.5-pro", "gpt-5"]
    claude = models["claude-sonnet-4-5"]
    assert (claude["trials"], claude["graded"], claude["passed"], claude["errors"]) == (6, 6, 2, 0)
    assert claude["rate"] == pytest.approx(2 / 6)
    low, high = claude["wilson_95"]
    assert low < 2 / 6 < high
