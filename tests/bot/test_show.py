"""``migration-evals show``: a trial of each verdict, a changeset's latest trial, text and
JSON, and hostile text from a build shown inert."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from migration_evals.bot.cli import main
from migration_evals.core.model import FabricatedMark, Stamps, Tier
from migration_evals.core.specs import SpecSet
from migration_evals.core.store import Store
from tests.gate.ledgers import Plan, append

START = {
    "exit_code": 137,
    "timed_out": True,
    "duration_s": 5.3,
    "output_tail": "listening on 8080\n",
}
HOSTILE_TAIL = (
    "compiling\n\x1b[2J\x1b[1;32mVERDICT: PASS\x1b[0m [bold green]pass[/]\nBUILD FAILURE\n"
)


def _hand_judge(verdict: str) -> dict[str, Any]:
    return {
        "role": "primary",
        "model": "claude-sonnet-4-5",
        "answer": {
            "verdict": verdict,
            "confidence": 0.8,
            "rationale": "hand-written answer",
            "evidence": ["+release 17"],
            "problem": "",
        },
        "stop_reason": "end_turn",
        "input_tokens": 100,
        "output_tokens": 10,
        "cost_usd": 0.5,
        "fabricated": [],
        "request": {"provider": "anthropic", "model": "claude-sonnet-4-5", "max_tokens": 2048},
        "recorded_by": "hand (answers written in a file; no model was asked)",
    }


@pytest.fixture
def ledger(tmp_path: Path, specs: SpecSet, monkeypatch: pytest.MonkeyPatch) -> Store:
    url = f"sqlite:///{tmp_path / 'results.db'}"
    monkeypatch.setenv("MIGRATION_EVALS_DB_URL", url)
    store = Store.open(url)
    store.runs.start_run("run-1", {"mode": "replay", "sandbox_mode": "record", "strict": False})
    miss = FabricatedMark("sandbox", "k" * 64, "cassettes/sandbox/k.json", "no cassette")
    old = Stamps("0" * 64, "1" * 64, "2" * 64)
    append(
        store,
        specs,
        [
            Plan("c/pass", details={Tier.JUDGE: {"judges": [_hand_judge("pass")]}}),
            Plan(
                "c/fail",
                outcome="fail@compile",
                details={Tier.COMPILE: {"output_tail": HOSTILE_TAIL}},
            ),
            Plan("c/error", outcome="error@compile"),
            Plan("c/inconclusive", outcome="inconclusive@tests"),
            Plan("c/budget", outcome="budget@judge"),
            Plan("c/fabricated", marks={Tier.COMPILE: (miss,)}, stamps=old),
            Plan("c/again", outcome="fail@tests"),
            Plan(
                "c/docker",
                details={
                    Tier.TESTS: {"checks": [{"dockerfile": "Dockerfile", "patched start": START}]}
                },
            ),
        ],
    )
    append(store, specs, [Plan("c/again", run_id="run-2", outcome="pass", cached=True)])
    return store


def _show(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["show", *argv])
    return code, capsys.readouterr().out


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code, out = _show(capsys, *argv, "--json")
    assert code == 0
    document: dict[str, Any] = json.loads(out)
    return document


@pytest.mark.parametrize(
    ("changeset", "verdict", "stopped", "line"),
    [
        ("c/pass", "pass", None, "VERDICT: PASS"),
        ("c/fail", "fail", "compile", "VERDICT: FAIL at compile"),
        (
            "c/error",
            "error",
            "compile",
            "VERDICT: ERROR at compile: infrastructure error: engine down",
        ),
        ("c/inconclusive", "inconclusive", "tests", "VERDICT: INCONCLUSIVE at tests"),
        ("c/budget", "inconclusive", "judge", "VERDICT: INCONCLUSIVE at judge"),
    ],
)
def test_show_a_trial_of_each_verdict(
    ledger: Store,
    capsys: pytest.CaptureFixture[str],
    changeset: str,
    verdict: str,
    stopped: str | None,
    line: str,
) -> None:
    trial_id = f"t-run-1-{changeset.replace('/', '-')}"
    document = _json(capsys, trial_id)
    assert (document["trial_id"], document["verdict"], document["stopped_at"]) == (
        trial_id,
        verdict,
        stopped,
    )
    assert [t["tier"] for t in document["tiers"]] == ["apply", "compile", "tests", "judge"]
    assert document["changeset"]["id"] == changeset
    assert document["run"]["options"]["sandbox_mode"] == "record"
    code, text = _show(capsys, trial_id)
    assert code == 0
    assert f"trial {trial_id}\n" in text and line in text
    assert "── apply: pass ── live · fake/1" in text


def test_every_tier_carries_its_evidence(ledger: Store, capsys: pytest.CaptureFixture[str]) -> None:
    document = _json(capsys, "t-run-1-c-pass")
    apply, compile_, tests, judge = document["tiers"]
    assert compile_["origin"] == "recorded"  # live adapter in a run recording the sandbox
    assert [r["label"] for r in compile_["sandbox_runs"]] == ["run"]
    assert compile_["sandbox_runs"][0]["output_tail"] == "BUILD SUCCESS"
    assert [r["label"] for r in tests["sandbox_runs"]] == ["baseline", "patched"]
    assert judge["origin"] == "hand-made"
    assert judge["judges"][0]["recorded_by"].startswith("hand")
    assert judge["judges"][0]["request"]["provider"] == "anthropic"
    assert apply["stale_stamps"] == [] and apply["stamps"]["oracle"]
    assert document["list_cost_usd"] == pytest.approx(0.121)
    _, text = _show(capsys, "t-run-1-c-pass")
    assert "primary judge claude-sonnet-4-5: pass (confidence 0.8)" in text
    assert "answer written by: hand" in text
    assert "── judge: pass ── hand-made" in text
    assert "baseline: exit 0 in 20.0 s" in text


def test_runs_nested_in_checks_are_found(ledger: Store, capsys: pytest.CaptureFixture[str]) -> None:
    tests = _json(capsys, "c/docker", "--tier", "tests")["tiers"][0]
    labels = [r["label"] for r in tests["sandbox_runs"]]
    assert labels == ["baseline", "checks[0].patched start", "patched"]  # as stored
    _, text = _show(capsys, "c/docker", "--tier", "tests")
    assert "checks[0].patched start: exit 137 in 5.3 s, timed_out\n     | listening on 8080" in text


def test_budget_stop_is_not_run(ledger: Store, capsys: pytest.CaptureFixture[str]) -> None:
    judge = _json(capsys, "t-run-1-c-budget")["tiers"][3]
    assert (judge["verdict"], judge["origin"], judge["adapter"]) == ("inconclusive", "not run", "")


def test_fabricated_and_stale_are_said(ledger: Store, capsys: pytest.CaptureFixture[str]) -> None:
    document = _json(capsys, "c/fabricated")
    compile_ = document["tiers"][1]
    assert compile_["origin"] == "fabricated"
    assert compile_["fabricated"] and "no cassette" in compile_["fabricated"][0]
    assert compile_["stale_stamps"] == ["oracle", "recipe", "hypotheses"]
    _, text = _show(capsys, "c/fabricated")
    assert "FABRICATED: fabricated (sandbox: no cassette)" in text
    assert "(STALE: oracle, recipe, hypotheses changed since)" in text


def test_a_changeset_shows_its_latest_trial(
    ledger: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    document = _json(capsys, "c/again")
    assert (document["trial_id"], document["run_id"], document["verdict"]) == (
        "t-run-2-c-again",
        "run-2",
        "pass",
    )
    assert [(o["trial_id"], o["verdict"]) for o in document["other_trials"]] == [
        ("t-run-1-c-again", "fail")
    ]
    apply = document["tiers"][0]
    # Reused: its origin is that of the answer it reuses (tier 1's, always here).
    assert (apply["origin"], apply["cached"]) == ("live", True)
    assert apply["cache_origin"] is None or apply["cache_origin"]["found"] is False
    _, text = _show(capsys, "c/again")
    assert "trial t-run-2-c-again (the latest trial of changeset c/again; 1 other(s) below)" in text
    assert "t-run-1-c-again run run-1" in text and "· fail ·" in text
    within = _json(capsys, "c/again", "--run", "run-1")
    assert (within["trial_id"], within["other_trials"]) == ("t-run-1-c-again", [])


def test_a_cached_envelope_names_its_origin(
    tmp_path: Path,
    specs: SpecSet,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = f"sqlite:///{tmp_path / 'cache.db'}"
    monkeypatch.setenv("MIGRATION_EVALS_DB_URL", url)
    store = Store.open(url)
    first = append(store, specs, [Plan("c/x")])[0]
    again = replace(
        first,
        id="t-again",
        run_id="run-2",
        envelopes=tuple(replace(e, trial_id="t-again", cached=True) for e in first.envelopes),
    )
    keys = {t.value: f"key-{t.value}" for t in Tier}
    store.ledger.append_trials([(first, keys), (again, keys)])
    store.close()
    judge = _json(capsys, "t-again")["tiers"][3]
    assert judge["cache_origin"]["found"] is True
    assert judge["cache_origin"]["trial_id"] == first.id
    _, text = _show(capsys, "t-again")
    assert f"cached: reuses trial {first.id} of run run-1" in text


def test_hostile_output_is_shown_inert(ledger: Store, capsys: pytest.CaptureFixture[str]) -> None:
    code, text = _show(capsys, "c/fail", "--tier", "compile")
    assert code == 0
    assert "\x1b" not in text
    assert "| \\x1b[2J\\x1b[1;32mVERDICT: PASS\\x1b[0m [bold green]pass[/]" in text
    assert "── apply" not in text and "── compile: fail" in text
    compile_only = _json(capsys, "c/fail", "--tier", "compile")
    assert [t["tier"] for t in compile_only["tiers"]] == ["compile"]
    assert compile_only["tiers"][0]["sandbox_runs"][0]["output_tail"] == HOSTILE_TAIL


def test_a_trial_id_prefix_and_unknown_ids(
    ledger: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _json(capsys, "t-run-1-c-inc")["trial_id"] == "t-run-1-c-inconclusive"
    assert main(["show", "t-run-1-c-"]) == 1
    assert "is the start of 8 trial ids" in capsys.readouterr().err
    assert main(["show", "nothing-like-it"]) == 1
    assert "no trial or changeset 'nothing-like-it'" in capsys.readouterr().err
    assert main(["show", "t-run-1-c-pass", "--run", "run-2"]) == 1
    assert "in run run-2" in capsys.readouterr().err


def _side(jdk: str, run: int, failed: int, errors: int, skipped: int) -> dict[str, Any]:
    """Tier 3's object for one side, as the tier now records it."""
    return {
        "exit_code": int(bool(failed or errors)),
        "duration_s": 20.0,
        "output_tail": "[INFO] BUILD SUCCESS\n",
        "output_truncated": False,
        "toolchain": {"maven": "3.9.11", "java": jdk},
        "jdk": jdk,
        "tests_run": run,
        "tests_failed": failed,
        "tests_errors": errors,
        "tests_skipped": skipped,
    }


COUNTED = {
    "baseline": _side("1.8.0_504", 89, 0, 0, 2),
    "patched": _side("17.0.15", 89, 3, 1, 2),
}


def test_tier_3_shows_each_sides_counts_and_jdk(
    tmp_path: Path,
    specs: SpecSet,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = f"sqlite:///{tmp_path / 'counts.db'}"
    monkeypatch.setenv("MIGRATION_EVALS_DB_URL", url)
    store = Store.open(url)
    append(store, specs, [Plan("c/counted", outcome="fail@tests", details={Tier.TESTS: COUNTED})])
    store.close()
    _, text = _show(capsys, "c/counted")
    assert "   base    (JDK 1.8.0_504): 89 run, 0 failed, 0 errors, 2 skipped\n" in text
    assert "   patched (JDK 17.0.15): 89 run, 3 failed, 1 errors, 2 skipped\n" in text
    tests = _json(capsys, "c/counted", "--tier", "tests")["tiers"][0]
    counts = tests["test_counts"]
    assert counts["baseline"] == {
        k: v for k, v in COUNTED["baseline"].items() if "test" in k or k in ("jdk", "toolchain")
    }
    assert counts["patched"]["tests_failed"] == 3 and counts["patched"]["jdk"] == "17.0.15"
    assert counts["lines"][1].startswith("patched (JDK 17.0.15): 89 run, 3 failed")
    # The runs keep the objects whole, as the details have them.
    runs = {r["label"]: r for r in tests["sandbox_runs"]}
    assert {k: runs["patched"][k] for k in COUNTED["patched"]} == COUNTED["patched"]


def test_an_envelope_from_before_the_counts_says_they_were_not_recorded(
    ledger: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    _, text = _show(capsys, "t-run-1-c-pass", "--tier", "tests")
    assert "   base: counts not recorded\n   patched: counts not recorded\n" in text
    counts = _json(capsys, "t-run-1-c-pass", "--tier", "tests")["tiers"][0]["test_counts"]
    assert (counts["baseline"], counts["patched"]) == (None, None)
    compile_ = _json(capsys, "t-run-1-c-pass", "--tier", "compile")["tiers"][0]
    assert compile_["test_counts"] == {}
    _, text = _show(capsys, "t-run-1-c-pass", "--tier", "compile")
    assert "counts not recorded" not in text


UNTESTED = {
    "diff_coverage": {
        "state": "untested change",
        "changed": 3,
        "covered": 0,
        "files": [
            {"path": "kv/store.go", "changed": 2, "covered": 0, "uncovered_lines": [10, 11]},
            {"path": "kv/export.go", "changed": 1, "covered": 0, "uncovered_lines": [4]},
        ],
    }
}


def test_tier_3_shows_what_the_tests_executed_of_the_changed_code(
    tmp_path: Path,
    specs: SpecSet,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = f"sqlite:///{tmp_path / 'diff.db'}"
    monkeypatch.setenv("MIGRATION_EVALS_DB_URL", url)
    store = Store.open(url)
    append(store, specs, [Plan("c/untested", details={Tier.TESTS: UNTESTED})])
    store.close()
    _, text = _show(capsys, "c/untested")
    assert (
        "   diff coverage: untested change: the base's tests execute none of the 3 changed "
        "lines of main code\n"
        "     kv/store.go: 0 of 2 changed lines executed; not executed: 10-11\n"
        "     kv/export.go: 0 of 1 changed lines executed; not executed: 4\n"
    ) in text
    tests = _json(capsys, "c/untested", "--tier", "tests")["tiers"][0]
    found = tests["diff_coverage"]
    assert (found["state"], found["changed"], found["covered"], found["untested"]) == (
        "untested change",
        3,
        0,
        True,
    )
    assert found["files"][0]["uncovered_lines"] == [10, 11]
    assert found["lines"][1] == "  kv/store.go: 0 of 2 changed lines executed; not executed: 10-11"
    assert "diff_coverage" not in tests["other_details"]


def test_an_envelope_from_before_diff_coverage_shows_none(
    ledger: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    _, text = _show(capsys, "t-run-1-c-pass", "--tier", "tests")
    assert "diff coverage" not in text
    assert _json(capsys, "t-run-1-c-pass", "--tier", "tests")["tiers"][0]["diff_coverage"] == {}
