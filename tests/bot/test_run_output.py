"""What ``run`` tells its user: progress in a log, the summary first, the trials on request,
and a warning and status of its own when infrastructure errors swamp the run."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest
from rich.console import Console

from migration_evals.bot.cli import main
from migration_evals.bot.console import trials_table
from migration_evals.bot.exits import ExitStatus
from migration_evals.core.model import Changeset, Envelope, Stamps, Tier, Trial, Verdict
from tests.conftest import ROOT

JAVA = ROOT / "examples" / "changesets" / "java.jsonl"
NO_ENGINE = "unix:///nonexistent/docker.sock"


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


def test_progress_lines_appear_when_the_output_is_not_a_terminal(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(JAVA)]) == ExitStatus.OK
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("grading: ")]
    assert len(lines) >= 2  # a tenth of 16 trials: a line every two
    last = r"grading: 16/16 trials \(100%\) in \d+s, .*finished, \$[\d.]+ spent"
    assert re.match(last, lines[-1])
    assert all(re.search(r"trials/(s|min)", line) for line in lines)


def test_the_summary_comes_first_and_the_trials_only_when_asked(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(JAVA)]) == ExitStatus.OK
    lines = [line.strip() for line in capsys.readouterr().out.splitlines()]
    assert lines.index("Funnel over 16 trial(s)") < lines.index("Pass rate per model")
    assert "│ claude-sonnet-4-5 │      6 │      6 │      2 │" in "\n".join(lines)
    assert "Trials" not in lines
    assert main(["run", str(JAVA), "--trials"]) == ExitStatus.OK
    lines = [line.strip() for line in capsys.readouterr().out.splitlines()]
    assert lines.index("Pass rate per model") < lines.index("Trials")
    assert any(re.match(r"│ t-[0-9a-f]{16} │ java-calc/no-apply ", line) for line in lines)


def test_piped_trials_are_whole_however_long_their_rows(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(JAVA), "--trials", "--out", "run.json"]) == ExitStatus.OK
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if re.match(r"│ t-[0-9a-f]{16} ", line)]
    trials = json.loads((env / "run.json").read_text())["trials"]
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
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(JAVA), "--json"]) == ExitStatus.OK
    models = {row["model"]: row for row in json.loads(capsys.readouterr().out)["models"]}
    assert sorted(models) == ["claude-sonnet-4-5", "gemini-2.5-pro", "gpt-5"]
    claude = models["claude-sonnet-4-5"]
    assert (claude["trials"], claude["graded"], claude["passed"], claude["errors"]) == (6, 6, 2, 0)
    assert claude["rate"] == pytest.approx(2 / 6)
    low, high = claude["wilson_95"]
    assert low < 2 / 6 < high
