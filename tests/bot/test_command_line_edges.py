"""The command line without sharp edges: every value a user can mistype is refused as a
usage error (status 2) in one line, with the nearest right spelling when there is one;
``--json`` prints one JSON document on stdout whatever happens; old spellings of the
parallelism flags still work and say what to write now."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from migration_evals.bot.cli import build_parser, main
from migration_evals.bot.exits import ExitStatus
from tests.conftest import ROOT

JAVA = ROOT / "examples" / "changesets" / "java.jsonl"


def _main(argv: list[str]) -> int:
    """``main``'s status, argparse's own errors (a ``SystemExit``) included."""
    try:
        return main(argv)
    except SystemExit as done:
        return int(done.code or 0)


def _one_json_document(out: str) -> dict:  # type: ignore[type-arg]
    document = json.loads(out)  # raises when stdout holds anything but one document
    assert isinstance(document, dict)
    return document


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "ten"])
def test_an_unusable_budget_is_a_usage_error_without_a_traceback(
    env: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    assert _main(["run", str(JAVA), f"--budget={value}"]) == ExitStatus.USAGE
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.splitlines()[-1].startswith("migration-evals run: error: argument --budget:")
    assert not (env / "results.db").exists()


def test_a_zero_budget_is_a_budget_not_a_usage_error(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _main(["run", str(JAVA), "--budget", "0"]) == ExitStatus.BUDGET
    assert "over --budget $0.00" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "status", "says"),
    [
        (["run", "--jsn"], ExitStatus.USAGE, "unrecognized arguments: --jsn"),
        (["run", str(JAVA), "--budget", "nan"], ExitStatus.USAGE, "argument --budget"),
        (["show", "t-nothing"], ExitStatus.ERROR, "no trial or changeset 't-nothing'"),
        (["verify", "nowhere.json"], ExitStatus.ERROR, "cannot read bundle nowhere.json"),
        (["run"], ExitStatus.USAGE, "give CHANGESETS.jsonl"),
    ],
)
def test_json_failures_are_one_json_document_on_stdout(
    env: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    status: ExitStatus,
    says: str,
) -> None:
    assert _main([*argv, "--json"]) == status
    captured = capsys.readouterr()
    document = _one_json_document(captured.out)
    assert document["exit_status"] == int(status)
    assert document["status"] == status.name.lower()
    assert says in document["error"]
    assert says in captured.err  # stderr says it too, as without --json


def test_a_bare_path_for_db_is_that_sqlite_file(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _main(["run", str(JAVA), "--db", "bare.db", "--json"]) == ExitStatus.OK
    document = _one_json_document(capsys.readouterr().out)
    assert document["database"].endswith("bare.db")
    with sqlite3.connect(env / "bare.db") as db:
        assert db.execute("SELECT COUNT(DISTINCT trial_id) FROM ledger").fetchone() == (16,)


@pytest.mark.parametrize("value", ["sqlite:results.db", "postgres:/host/db", ""])
def test_a_db_value_neither_url_nor_path_names_the_url_form(
    env: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    assert _main(["ledger", "verify", "--db", value]) == ExitStatus.USAGE
    err = capsys.readouterr().err
    assert "sqlite:///results.db" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "meant"),
    [
        (["rnu"], "(did you mean run?)"),
        (["gate", "chekc"], "(did you mean check?)"),
        (["run", str(JAVA), "--sandbx", "live"], "(did you mean --sandbox?)"),
        (["gate", "check", "--jsno"], "(did you mean --json?)"),
    ],
)
def test_a_mistyped_command_or_flag_gets_the_nearest_one(
    env: Path, capsys: pytest.CaptureFixture[str], argv: list[str], meant: str
) -> None:
    assert _main(argv) == ExitStatus.USAGE
    assert capsys.readouterr().err.splitlines()[-1].endswith(meant)


def test_nothing_near_suggests_nothing(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _main(["zzzzzz"]) == ExitStatus.USAGE
    assert "did you mean" not in capsys.readouterr().err


def test_verify_on_a_file_that_is_no_bundle_is_a_usage_error_not_tampering(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (env / "report.json").write_text(json.dumps({"title": "migration-evals report"}))
    assert _main(["verify", "report.json"]) == ExitStatus.USAGE
    err = capsys.readouterr().err
    assert "report.json is not a publication bundle" in err
    assert "gate publish --out FILE" in err


@pytest.mark.parametrize(
    "flags",
    [["--mode", "live"], ["--strict"], ["--budget", "5"], ["--jobs", "4"], ["--sandbox", "live"]],
)
def test_resume_refuses_the_flags_its_stored_plan_overrides(
    env: Path, capsys: pytest.CaptureFixture[str], flags: list[str]
) -> None:
    assert _main(["run", "--resume", "r-any", *flags]) == ExitStatus.USAGE
    err = capsys.readouterr().err
    assert f"{flags[0]} cannot change a resumed run: it keeps its stored plan" in err


@pytest.mark.parametrize(
    ("argv", "dest", "value", "instead"),
    [
        (["worker", "--concurrency", "3"], "jobs", 3, "--jobs N"),
        (["worker", "-c", "3"], "jobs", 3, "--jobs N"),
        (["serve", "--threads", "8"], "request_threads", 8, "--request-threads N"),
        (["gate", "check", "--jobs", "2"], "scan_processes", 2, "--scan-processes N"),
        (["report", "--out", "r", "-j", "2"], "scan_processes", 2, "--scan-processes N"),
        (["verify", "b.json", "--jobs", "2"], "scan_processes", 2, "--scan-processes N"),
    ],
)
def test_old_parallelism_spellings_still_work_and_warn(
    capsys: pytest.CaptureFixture[str], argv: list[str], dest: str, value: int, instead: str
) -> None:
    args = build_parser(argv).parse_args(argv)
    assert getattr(args, dest) == value
    assert f"is deprecated and will be removed; write {instead}" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "dest"),
    [
        (["run", "x.jsonl", "--jobs", "3"], "jobs"),
        (["demo", "-j", "3"], "jobs"),
        (["worker", "--jobs", "3"], "jobs"),
        (["gate", "check", "--scan-processes", "3"], "scan_processes"),
        (["serve", "--request-threads", "3"], "request_threads"),
    ],
)
def test_the_current_spellings_do_not_warn(
    capsys: pytest.CaptureFixture[str], argv: list[str], dest: str
) -> None:
    assert getattr(build_parser(argv).parse_args(argv), dest) == 3
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["run"], "--jobs N"),
        (["demo"], "--jobs N"),
        (["worker"], "--jobs N"),
        (["gate", "check"], "--scan-processes N"),
        (["report"], "--scan-processes N"),
        (["verify"], "--scan-processes N"),
        (["serve"], "--request-threads N"),
    ],
)
def test_help_lists_one_name_for_each_kind_of_parallelism(
    capsys: pytest.CaptureFixture[str], argv: list[str], flag: str
) -> None:
    """``--jobs`` is how many trials (or jobs) run at once wherever it is listed; the
    ledger scan's processes and the server's request threads have names of their own."""
    with pytest.raises(SystemExit):
        main([*argv, "--help"])
    listed = {word.strip("[],") for word in capsys.readouterr().out.split()}
    assert flag.split(maxsplit=1)[0] in listed
    for other in {"--jobs", "--scan-processes", "--request-threads"} - {flag.split(maxsplit=1)[0]}:
        assert other not in listed
    assert not listed & {"--concurrency", "--threads", "-c"}
