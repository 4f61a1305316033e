"""The gold-anchor benchmark's own mechanics, offline: labels through ``mine gold --git``
on small dated repositories, the statistic as the gate computes it, the stored table."""

from __future__ import annotations

import io
import json
import os
import subprocess
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from benchmarks import survival
from benchmarks.gold import (
    Row,
    label_cases,
    main,
    markdown,
    phi_interval,
    scrub,
    select,
    summarise,
    tier_rates,
    write_jsonl,
)
from benchmarks.realworld import Case
from migration_evals.bot.cli import main as cli_main
from migration_evals.core.specs import SpecSet
from migration_evals.gate.anchor import anchor_from_table

GO_MOD = "module example.com/m\n\ngo 1.22\n"
HEAD = "package m\n\nimport %s\n\nfunc Read() ([]byte, error) {\n"
OLD = HEAD % '"io/ioutil"' + '\treturn ioutil.ReadFile("x")\n}\n'
NEW = HEAD % '"os"' + '\treturn os.ReadFile("x")\n}\n'


def _git(repo: Path, *args: str, when: str = "2024-01-01T12:00:00+00:00") -> str:
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    env |= {"GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.com"}
    env |= {"GIT_COMMITTER_NAME": "Dev", "GIT_COMMITTER_EMAIL": "dev@example.com"}
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _commit(repo: Path, files: dict[str, str], message: str, when: str) -> str:
    for name, text in files.items():
        (repo / name).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message, when=when)
    return _git(repo, "rev-parse", "HEAD")


def _case(case_id: str, mirror: str, commit: str, parent: str) -> Case:
    return Case.from_dict(
        {
            "id": case_id,
            "repo": f"https://github.com/{mirror.replace('+', '/')}",
            "mirror": mirror,
            "commit": commit,
            "parent": parent,
            "kind": "go-ioutil",
            "recipe": "go-import-rewrite",
            "recipe_params": {"rewrites": ["io/ioutil"]},
        }
    )


@pytest.fixture
def mirrors(tmp_path: Path) -> tuple[Path, list[Case]]:
    """Two repositories: one whose migration was reverted after a week, one whose
    migration (written with an agent, by its trailer) survived; both histories reach
    past the 30-day window."""
    root = tmp_path / "mirrors"
    cases = []
    for name, revert in (("o+reverted", True), ("o+kept", False)):
        repo = root / name
        repo.mkdir(parents=True)
        _git(repo, "init", "-q", "-b", "main")
        base = _commit(repo, {"go.mod": GO_MOD, "m.go": OLD}, "base", "2024-01-01T12:00:00Z")
        trailer = "" if revert else "\n\nCo-authored-by: Claude <noreply@anthropic.com>"
        change = _commit(repo, {"m.go": NEW}, "Replace io/ioutil" + trailer, "2024-02-01T12:00:00Z")
        if revert:
            _git(repo, "revert", "--no-edit", change, when="2024-02-08T12:00:00Z")
        _commit(repo, {"README": "later\n"}, "later", "2024-04-01T12:00:00Z")
        cases.append(_case(f"go-ioutil/{name}", name, change, base))
    cases.append(_case("go-ioutil/o-absent", "o+absent", "0" * 40, "1" * 40))
    return root, cases


@pytest.fixture
def cli_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """The benchmark's ``migration-evals`` runs as the CLI's ``main`` in this process, with
    the environment it is handed: its arguments and the document it prints are the point
    here, not a process of its own (each cost a second of start-up)."""

    def run(
        argv: list[str], *, env: dict[str, str], **_: object
    ) -> subprocess.CompletedProcess[str]:
        assert argv[0] == str(survival.CLI)
        out, err = io.StringIO(), io.StringIO()
        with pytest.MonkeyPatch.context() as patch:
            for name, value in env.items():
                if os.environ.get(name) != value:
                    patch.setenv(name, value)
            with redirect_stdout(out), redirect_stderr(err):
                code = cli_main(argv[1:])
        return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())

    monkeypatch.setattr(survival, "subprocess", SimpleNamespace(run=run))


@pytest.mark.usefixtures("cli_in_process")
def test_labels_come_from_mine_gold_git_with_the_agent_marked(
    mirrors: tuple[Path, list[Case]],
) -> None:
    root, cases = mirrors
    labels = label_cases(cases, root)
    reverted, kept, absent = (labels[c.id] for c in cases)
    assert reverted["label"] == "rejected"
    assert reverted["revert"]  # the revert commit is named
    assert not reverted["is_agent"]
    assert kept["label"] == "accepted"
    assert (kept["alive"], kept["added"]) == (2, 2)
    assert kept["is_agent"]
    assert kept["agent"] == "Claude Code"
    assert absent["label"] == "missing"  # a mirror not there is said, never a label


def test_labels_keep_no_path_of_the_machine(tmp_path: Path) -> None:
    row = {"label": "error", "reason": f"git --git-dir {tmp_path}/o+r/repo failed", "added": 3}
    assert scrub(row, tmp_path) == {
        "label": "error",
        "reason": "git --git-dir DIR/o+r/repo failed",
        "added": 3,
    }


def _rows(pairs: list[tuple[str, str, dict[str, str]]]) -> list[Row]:
    rows = []
    for index, (label, verdict, tiers) in enumerate(pairs):
        case = _case(f"go-ioutil/c{index}", f"o+c{index}", "a" * 40, "b" * 40)
        rows.append(Row(case, {"label": label}, {"verdict": verdict, "tiers": tiers}))
    return rows


PASSED = {"apply": "pass", "compile": "pass", "tests": "pass"}
NOT_BUILT = {"apply": "pass", "compile": "fail", "tests": "skipped"}
NOT_APPLIED = {"apply": "fail", "compile": "skipped", "tests": "skipped"}
BASE_BROKEN = {"apply": "pass", "compile": "error", "tests": "skipped"}


def _sample() -> list[Row]:
    return _rows(
        [("accepted", "pass", PASSED)] * 30
        + [("accepted", "fail", NOT_BUILT)] * 4
        + [("rejected", "pass", PASSED)] * 2
        + [("rejected", "fail", NOT_APPLIED)] * 6
        + [("accepted", "error", BASE_BROKEN)] * 3  # infrastructure: out of the table
        + [("pending", "pass", PASSED)] * 2  # an open window: out of the table
        + [("error", "pass", PASSED)]  # the labeller could not say: no label
    )


def test_the_anchor_is_the_gates_own(specs: SpecSet) -> None:
    gate = specs.oracle.gate
    summary = summarise(_sample(), gate)
    anchor = summary["anchor"]
    assert anchor["table"] == {
        "passed_accepted": 30,
        "passed_rejected": 2,
        "failed_accepted": 4,
        "failed_rejected": 6,
    }
    assert (anchor["n"], anchor["pending"], anchor["unmatched"]) == (42, 2, 3)
    assert anchor == anchor_from_table(anchor, gate).to_dict()  # recomputes to the same
    assert anchor["phi"] == pytest.approx(0.5830, abs=1e-4)
    low, high = summary["phi_95"]
    assert low < anchor["phi"] < high
    assert summary["labels"]["error"] == 1


def test_phi_interval_by_fisher_z() -> None:
    assert phi_interval(None, 40) is None
    assert phi_interval(0.5, 3) is None
    low, high = phi_interval(0.5, 103) or (0, 0)
    assert (low, high) == pytest.approx((0.3393, 0.6323), abs=1e-3)


def test_each_tier_is_held_to_the_labels() -> None:
    rates = tier_rates(_sample())
    # apply passed every accepted change it graded and 2 of the 8 rejected ones.
    assert rates["apply"]["false_pass"]["x"] == 2
    assert rates["apply"]["false_pass"]["n"] == 8
    assert rates["apply"]["false_fail"]["x"] == 0
    # compile failed 4 of the 34 accepted changes it graded (an error is not graded).
    assert (rates["compile"]["false_fail"]["x"], rates["compile"]["false_fail"]["n"]) == (4, 34)
    assert (rates["funnel"]["false_pass"]["x"], rates["funnel"]["false_pass"]["n"]) == (2, 8)
    assert (rates["funnel"]["false_fail"]["x"], rates["funnel"]["false_fail"]["n"]) == (4, 34)


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_the_stored_table_prints_with_one_json_line_last(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = _sample()
    _write(tmp_path / "cases.jsonl", [r.case.raw for r in rows])
    _write(tmp_path / "labels.jsonl", [{"id": r.case.id, **r.label} for r in rows])
    _write(tmp_path / "verdicts.jsonl", [{"id": r.case.id, **r.verdict} for r in rows])
    argv = [f"--{name}={tmp_path / name}.jsonl" for name in ("cases", "labels", "verdicts")]
    assert main(argv) == 0
    out = capsys.readouterr().out.strip().splitlines()
    figures = json.loads(out[-1])
    assert figures["cases"] == len(rows)
    assert figures["anchor"]["n"] == 42
    assert figures["groups"]["agent"]["cases"] == 0
    assert any(line.startswith("go-ioutil/c0 ") for line in out)  # the table came first


def test_a_partial_run_keeps_the_stored_rows(tmp_path: Path) -> None:
    path = tmp_path / "verdicts.jsonl"
    _write(path, [{"id": "a", "verdict": "pass"}, {"id": "b", "verdict": "fail"}])
    write_jsonl(path, {"b": {"id": "b", "verdict": "error"}}, ["a", "b"])
    assert [json.loads(line) for line in path.read_text().splitlines()] == [
        {"id": "a", "verdict": "pass"},
        {"id": "b", "verdict": "error"},
    ]


def test_only_names_an_id_alone_and_a_prefix_all_it_begins() -> None:
    cases = [
        _case(i, "o+r", "a" * 40, "b" * 40) for i in ("go-ioutil/o-r", "go-ioutil/o-r-1a2b3c4")
    ]
    assert [c.id for c in select(cases, ["go-ioutil/o-r"])] == ["go-ioutil/o-r"]
    assert len(select(cases, ["go-ioutil/"])) == 2
    assert len(select(cases, [])) == 2
    with pytest.raises(SystemExit):
        select(cases, ["java"])


def test_a_results_section_names_the_grader_and_every_case(specs: SpecSet) -> None:
    rows = _sample()
    rows[0] = Row(rows[0].case, rows[0].label, {**rows[0].verdict, "grader": "abc123"})
    text = markdown(rows, summarise(rows, specs.oracle.gate))
    assert text.startswith("## ")
    assert "migration-evals abc123:" in text.splitlines()[0]
    assert "| funnel passed (tiers 1-3) | 30 | 2 |" in text
    assert sum(1 for line in text.splitlines() if line.startswith("| `go-ioutil/c")) == len(rows)
