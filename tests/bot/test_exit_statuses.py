"""Exit statuses: one condition, one code, documented once (``migration_evals.bot.exits``) in
``--help`` and the generated reference page, and ``--json`` output printed whatever the status."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import pytest

from migration_evals.bot.cli import main
from migration_evals.bot.commands.common import exit_status
from migration_evals.bot.exits import TABLE, ExitStatus
from migration_evals.core.model import Changeset, Envelope, Stamps, Tier, Trial, Verdict
from migration_evals.oracles.runner import RunOutcome, RunStatus
from tests.conftest import ROOT

JAVA = ROOT / "examples" / "changesets" / "java.jsonl"
STAMPS = Stamps("o" * 64, "r" * 64, "h" * 64)


def _trial(n: int, verdict: Verdict) -> Trial:
    changeset = Changeset(
        id=f"c{n}",
        repo="r",
        base_commit="b" * 40,
        patch="p",
        recipe="java8-to-17",
        model="gpt-5",
        repo_created_at=date(2020, 1, 1),
    )
    envelope = Envelope(f"t{n}", f"c{n}", Tier.APPLY, verdict, 0.001, 0.0, 0.1, STAMPS)
    return Trial(f"t{n}", "run", changeset, (envelope,))


def test_every_condition_has_a_code_of_its_own() -> None:
    values = [status.value for status in ExitStatus.__members__.values()]
    assert len(values) == len(set(values))  # no alias hides a second name for one code
    assert [status for status, _ in TABLE] == list(ExitStatus)
    assert ExitStatus.USAGE == 2  # argparse exits 2 on its own


def test_help_and_reference_document_every_status(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    overview = capsys.readouterr().out
    page = (ROOT / "docs" / "reference" / "exit-codes.md").read_text()
    documented = {int(code) for code in re.findall(r"^\| `(\d+)` \|", page, re.MULTILINE)}
    assert documented == {status.value for status in ExitStatus}
    for status, text in TABLE:
        assert re.search(rf"^\s+{status.value}\s+{re.escape(text)}$", overview, re.MULTILINE)


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--no-such-flag"],
        ["no-such-command"],
        ["run", str(JAVA), "--jobs", "0"],
        ["cost", "--repos", "-1"],
        ["gate", "check", "--jobs", "0"],
    ],
)
def test_a_usage_error_exits_2(
    env: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    try:
        code = main(argv)
    except SystemExit as done:  # argparse's own errors
        code = done.code  # type: ignore[assignment]
    err = capsys.readouterr().err
    assert code == ExitStatus.USAGE
    assert "error:" in err.splitlines()[-1]


def test_a_run_where_every_trial_is_an_infrastructure_error_exits_5_with_its_json(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [json.loads(line) for line in JAVA.read_text().splitlines()[:2]]
    for line in lines:
        line["repo"] = str(env / "missing.bundle")  # nothing to clone: the harness's fault
        line["patch_file"] = str(JAVA.parent / line["patch_file"])
    changesets = env / "missing.jsonl"
    changesets.write_text("".join(json.dumps(line) + "\n" for line in lines))
    code = main(["run", str(changesets), "--json"])
    captured = capsys.readouterr()
    assert code == ExitStatus.ALL_INFRA_ERRORS == 5
    document = json.loads(captured.out)
    assert [t["verdict"] for t in document["trials"]] == ["error", "error"]
    assert "every trial (2) ended in an infrastructure error" in captured.err


def test_a_budget_forecast_over_the_limit_is_the_budget_status(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(JAVA), "--budget", "0.5", "--json"]) == ExitStatus.BUDGET
    assert "over --budget" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("verdicts", "status", "expected"),
    [
        ([Verdict.PASS, Verdict.ERROR], RunStatus.COMPLETED, ExitStatus.OK),
        ([Verdict.FAIL, Verdict.ERROR], RunStatus.INTERNAL_ERRORS, ExitStatus.TRIAL_CRASHED),
        ([Verdict.PASS], RunStatus.STOPPED_BUDGET, ExitStatus.BUDGET),
        ([], RunStatus.STOPPED_BUDGET, ExitStatus.BUDGET),
        ([Verdict.ERROR, Verdict.ERROR], RunStatus.COMPLETED, ExitStatus.ALL_INFRA_ERRORS),
        # Every trial an error outranks the crash that made one of them.
        ([Verdict.ERROR], RunStatus.INTERNAL_ERRORS, ExitStatus.ALL_INFRA_ERRORS),
        ([Verdict.ERROR], RunStatus.STOPPED_BUDGET, ExitStatus.ALL_INFRA_ERRORS),
        ([Verdict.PASS, Verdict.ERROR], RunStatus.INTERNAL_ERRORS, ExitStatus.TRIAL_CRASHED),
        ([], RunStatus.COMPLETED, ExitStatus.OK),
    ],
)
def test_a_runs_status_follows_the_documented_precedence(
    verdicts: list[Verdict], status: RunStatus, expected: ExitStatus
) -> None:
    trials = [_trial(n, verdict) for n, verdict in enumerate(verdicts)]
    assert exit_status(RunOutcome("run", trials, status)) is expected


@pytest.mark.parametrize(
    ("verdicts", "status", "expected"),
    [
        ([Verdict.PASS] * 19 + [Verdict.ERROR], RunStatus.COMPLETED, ExitStatus.OK),  # 5%
        ([Verdict.PASS] * 9 + [Verdict.ERROR], RunStatus.COMPLETED, ExitStatus.INFRA_ERRORS),
        ([Verdict.PASS, Verdict.ERROR], RunStatus.STOPPED_BUDGET, ExitStatus.INFRA_ERRORS),
        ([Verdict.PASS, Verdict.ERROR], RunStatus.INTERNAL_ERRORS, ExitStatus.TRIAL_CRASHED),
        ([Verdict.ERROR, Verdict.ERROR], RunStatus.COMPLETED, ExitStatus.ALL_INFRA_ERRORS),
    ],
)
def test_errors_above_the_gates_limit_have_their_own_status(
    verdicts: list[Verdict], status: RunStatus, expected: ExitStatus
) -> None:
    trials = [_trial(n, verdict) for n, verdict in enumerate(verdicts)]
    assert exit_status(RunOutcome("run", trials, status), 0.05) is expected


def test_a_database_behind_the_release_is_its_own_status(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{env / 'empty.db'}"
    assert main(["db", "status", "--db", url, "--json"]) == ExitStatus.SCHEMA_BEHIND
    assert json.loads(capsys.readouterr().out)["standing"] == "empty"
