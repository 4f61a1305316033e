"""Diff coverage of the bundled examples, from the coverage reports their replayed tier-3
runs collected: the good Java and Go patches' changed lines of main code, and which of
them the base's tests executed, as ``show`` prints them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from migration_evals.bot.cli import main


def _tests_tier(capsys: pytest.CaptureFixture[str], changeset: str) -> dict[str, Any]:
    assert main(["show", changeset, "--tier", "tests", "--json"]) == 0
    tier: dict[str, Any] = json.loads(capsys.readouterr().out)["tiers"][0]
    assert tier["fabricated"] == [], "the tier-3 runs were not replayed from the cassettes"
    return tier


@pytest.mark.usefixtures("demo_graded")
def test_the_good_examples_say_how_much_of_their_change_the_tests_ran(
    capsys: pytest.CaptureFixture[str],
) -> None:
    java = _tests_tier(capsys, "java-calc/good")["diff_coverage"]
    # Every changed line of code ran; the annotation, the imports and pom.xml are no code.
    assert (java["state"], java["changed"], java["covered"]) == ("executed", 13, 13)
    assert {f["path"]: f["changed"] for f in java["files"]} == {
        "src/main/java/com/example/calc/Calculator.java": 10,
        "src/main/java/com/example/calc/RpnEvaluator.java": 3,
    }
    go = _tests_tier(capsys, "go-ioutil/good")
    found = go["diff_coverage"]
    assert (found["state"], found["changed"], found["covered"]) == ("executed", 10, 9)
    # The command's main function has no test: its changed line is the one not run.
    assert found["files"][0] == {
        "path": "cmd/kvdump/main.go",
        "changed": 1,
        "covered": 0,
        "uncovered_lines": [33],
    }
    assert [e["path"] for e in go["evidence"] if e["severity"] == "notice"] == [
        "cmd/kvdump/main.go"
    ]
    docker = _tests_tier(capsys, "docker-web/good")["diff_coverage"]
    assert docker["state"] == "no changed main code"
    assert main(["show", "go-ioutil/good", "--tier", "tests"]) == 0
    assert (
        "   diff coverage: the base's tests execute 9 of the 10 changed lines of main code (90%)\n"
        in capsys.readouterr().out
    )
