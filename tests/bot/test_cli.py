"""The command line end to end: demo, run, cost, stamp, ledger; errors are one clear line."""

from __future__ import annotations

import gc
import json
import shutil
import sqlite3
from importlib.metadata import version
from pathlib import Path

import pytest

from migration_evals.bot import cli
from migration_evals.bot.cli import build_parser, main
from migration_evals.bot.commands import COMMANDS, sentence
from migration_evals.bot.exits import ExitStatus
from migration_evals.core.tasks import task_of
from tests.bot.conftest import DemoRun
from tests.conftest import LEDGER_KEY, ROOT, SPECS_DIR, write_checkpoint_key

EXPECTED = json.loads((ROOT / "examples" / "expected.json").read_text())
JAVA = ROOT / "examples" / "changesets" / "java.jsonl"
MODELS = ("claude-sonnet-4-5", "gemini-2.5-pro", "gpt-5")  # those the examples name


def _json_run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict, str]:  # type: ignore[type-arg]
    code = main([*argv, "--json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


def _stop(trial: dict) -> str | None:  # type: ignore[type-arg]
    return next(
        (t["tier"] for t in trial["tiers"] if t["verdict"] not in ("pass", "skipped")), None
    )


def test_demo_grades_every_example_as_designed(graded_demo: DemoRun) -> None:
    document = graded_demo.document()  # of `demo --jobs 2`, which exited 0
    assert document["fabricated_count"] == 0
    assert "FABRICATED" not in graded_demo.told
    # Every example is graded for every model the examples list, each as designed.
    results = {
        (task_of(t["id"], t["model"]), t["model"]): (t["verdict"], _stop(t))
        for t in document["trials"]
    }
    assert results == {
        (cid, model): (e["verdict"], e["stops_at"])
        for cid, e in EXPECTED.items()
        for model in MODELS
    }
    funnel = {row["tier"]: row for row in document["funnel"]}
    assert funnel["apply"]["reached"] == len(EXPECTED) * len(MODELS)
    passes = sum(e["verdict"] == "pass" for e in EXPECTED.values())
    assert funnel["judge"]["passed"] == passes * len(MODELS)
    assert document["cost_usd"] > 0


@pytest.mark.usefixtures("demo_graded")
def test_demo_again_is_served_from_the_cache_for_free(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, document, _ = _json_run(capsys, "demo")
    assert code == 0
    tiers = [t for trial in document["trials"] for t in trial["tiers"] if t["verdict"] != "skipped"]
    # Everything is reused at $0 but infrastructure errors, which are never reused: the
    # one example whose base commit does not build is graded again.
    assert all(t["cached"] for t in tiers if t["verdict"] != "error")
    errors = [t for t in tiers if t["verdict"] == "error"]
    assert [t["tier"] for t in errors] == ["compile"] * len(MODELS)
    assert document["cost_usd"] == pytest.approx(sum(t["cost_usd"] for t in errors))


def test_demo_prints_tables_and_locations(graded_demo: DemoRun) -> None:
    out = graded_demo.printed  # of a demo that exited 0
    assert f"Funnel over {len(EXPECTED) * len(MODELS)} trial(s)" in out
    assert "database: sqlite:///" in out
    assert "results: migration-evals-demo.json" in out


def test_a_typo_in_the_cassette_path_is_refused_before_grading(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, document, err = _json_run(capsys, "run", str(JAVA), "--cassettes", str(env / "casettes"))
    assert code == ExitStatus.USAGE
    assert document["status"] == "usage" and document["exit_status"] == 2
    assert f"the cassette folder {env / 'casettes'} does not exist" in err
    assert not (env / "results.db").exists()
    (env / "empty").mkdir()
    code, document, err = _json_run(capsys, "run", str(JAVA), "--cassettes", str(env / "empty"))
    assert code == ExitStatus.USAGE
    assert "holds no sandbox cassettes (sandbox/*.json)" in document["error"]


def test_cassettes_that_answer_nothing_fabricate_every_later_tier_and_exit_15(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for port in ("sandbox", "judge"):  # a folder of cassettes, none of them these requests'
        (env / "other" / port).mkdir(parents=True)
        (env / "other" / port / "unrelated.json").write_text("{}")
    code, document, err = _json_run(capsys, "run", str(JAVA), "--cassettes", str(env / "other"))
    assert code == ExitStatus.ALL_FABRICATED == 15
    later = [
        t for trial in document["trials"] for t in trial["tiers"][1:] if t["verdict"] != "skipped"
    ]
    assert later
    assert all(t["fabricated"] for t in later)
    assert document["fabricated_count"] == len(later)
    assert "FABRICATED" in err
    # A fabricated test run is an empty success: no test ran at the base, nothing to
    # compare, so tier 3 is inconclusive and the judge is never asked.
    assert "sandbox" in err
    reached = [trial["tiers"][2] for trial in document["trials"]]
    assert {t["verdict"] for t in reached if t["verdict"] != "skipped"} == {"inconclusive"}
    # stdout stayed one clean JSON document (already parsed above); the stamp is in the store.
    with sqlite3.connect(env / "results.db") as db:
        stored = db.execute("SELECT COUNT(*) FROM ledger WHERE fabricated = 1").fetchone()[0]
    assert stored == len(later)


def test_bad_jsonl_refuses_to_start_and_writes_nothing(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (env / "changesets").mkdir()
    bad = env / "changesets" / "bad.jsonl"
    lines = JAVA.read_text().splitlines()
    bad.write_text("\n".join([*lines[:2], "{not json", *lines[2:]]) + "\n")
    shutil.copytree(ROOT / "examples" / "patches", env / "patches")
    shutil.copytree(ROOT / "examples" / "bundles", env / "bundles")
    code = main(["run", str(bad)])
    err = capsys.readouterr().err
    assert code == 1
    assert err.strip().count("\n") == 0
    assert "bad.jsonl:3: not valid JSON" in err
    assert not (env / "results.db").exists()


def test_a_broken_spec_is_one_clear_error(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    specs = env / "specs"
    shutil.copytree(SPECS_DIR, specs)
    oracle = specs / "oracle.yaml"
    oracle.write_text(oracle.read_text().replace("reach_rate: 0.42", "reach_rate: 4.2"))
    code = main(["run", str(JAVA), "--specs", str(specs)])
    err = capsys.readouterr().err
    assert code == 1
    assert "oracle.yaml: tiers[3].reach_rate: 4.2 is greater than the maximum of 1" in err


def test_budget_below_the_forecast_refuses_to_start(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", str(JAVA), "--budget", "0.5"])
    err = capsys.readouterr().err
    assert code == ExitStatus.BUDGET == 3
    assert "over --budget $0.50" in err
    assert not (env / "results.db").exists()


def test_cost_forecast_for_1000_repos_and_3_models(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, document, _ = _json_run(capsys, "cost", "--repos", "1000", "--models", "3")
    assert code == 0
    assert document["total_usd"] == pytest.approx(185, abs=1)
    assert [t["reach_rate"] for t in document["tiers"]] == [1.0, 0.9, 0.6, 0.42]


def test_stamp_json_has_the_documented_shape(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, document, _ = _json_run(capsys, "stamp")
    assert code == 0
    assert set(document) == {"oracle", "recipes", "hypotheses"}
    assert set(document["recipes"]) == {
        "java8-to-17",
        "junit4-to-5",
        "go-import-rewrite",
        "base-image-bump",
    }
    assert all(
        len(v) == 64
        for v in [document["oracle"], document["hypotheses"], *document["recipes"].values()]
    )


def test_ledger_verify_catches_an_edited_row(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(JAVA), "--json"]) == 0
    assert main(["ledger", "verify"]) == 0
    with sqlite3.connect(env / "results.db") as db:
        db.execute("UPDATE ledger SET verdict = 'pass' WHERE seq = 5")
    capsys.readouterr()
    assert main(["ledger", "verify"]) == ExitStatus.LEDGER_TAMPERED
    assert "row 5: content does not match its hash" in capsys.readouterr().err


def test_a_keyed_run_ends_with_a_signed_checkpoint(
    env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MIGRATION_EVALS_LEDGER_KEY", LEDGER_KEY)
    key = write_checkpoint_key(env / "checkpoint.pem")
    monkeypatch.setenv("MIGRATION_EVALS_CHECKPOINT_KEY", str(key))
    assert main(["run", str(JAVA), "--json"]) == 0
    err = capsys.readouterr().err
    assert "checkpoint 1 signed" in err and "LEDGER_KEY is not set" not in err
    code, document, _ = _json_run(capsys, "ledger", "verify")
    assert code == 0 and document["checkpoint"]["ledger_seq"] == document["rows"] > 0
    with sqlite3.connect(env / "results.db") as db:
        db.execute("UPDATE ledger SET verdict = 'pass' WHERE seq = 5")
    assert main(["ledger", "verify"]) == ExitStatus.LEDGER_TAMPERED
    assert "row 5: content does not match its MAC" in capsys.readouterr().err


def test_every_command_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    for name in COMMANDS:
        with pytest.raises(SystemExit) as done:
            main([name, "--help"])
        assert done.value.code == 0
        assert f"usage: migration-evals {name}" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--help"])
    overview = capsys.readouterr().out
    assert all(name in overview for name in COMMANDS)


def test_version_names_the_installed_release(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"migration-evals {version('migration-evals')}"


@pytest.mark.parametrize(
    "argv",
    [["-v", "cost", "--repos", "1"], ["cost", "--repos", "1", "-v"], ["gate", "check", "-v"]],
)
def test_verbose_goes_before_or_after_the_command(argv: list[str]) -> None:
    assert build_parser(argv).parse_args(argv).verbose is True
    quiet = [a for a in argv if a != "-v"]
    assert build_parser(quiet).parse_args(quiet).verbose is False


def test_help_keeps_acronyms(capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("run", "report"):
        with pytest.raises(SystemExit):
            main([name, "--help"])
        description = capsys.readouterr().out.split("\n\n")[1].replace("\n", " ")
        assert description == sentence(COMMANDS[name][1])
    assert "JSONL" in sentence(COMMANDS["run"][1]) and "HTML" in sentence(COMMANDS["report"][1])


@pytest.mark.parametrize("name", ["cost", "stamp"])
def test_commands_without_a_database_offer_no_db_option(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([name, "--help"])
    text = capsys.readouterr().out
    assert "--db" not in text and "--specs DIR" in text


@pytest.mark.parametrize("argv", [["db", "upgrade"], ["db", "status"], ["ledger", "verify"]])
def test_commands_that_read_no_spec_offer_no_specs_option(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([*argv, "--help"])
    text = capsys.readouterr().out
    assert "--specs" not in text and "--db URL" in text


def test_the_console_script_exits_with_mains_status_past_the_collectors_last_sweeps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(cli, "main", lambda: ExitStatus.GATE_REFUSED)
    # Collected first, so what the console script freezes is alive, never garbage; frozen,
    # it stays so, as the session's own objects are (tests/conftest.py).
    gc.collect()
    frozen = gc.get_freeze_count()
    assert cli.command_line() == ExitStatus.GATE_REFUSED
    # What the process made is out of the collector's reach for the interpreter's exit.
    assert gc.get_freeze_count() > frozen
