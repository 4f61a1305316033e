"""``migration-evals judges reliability`` over the demo's ledger."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from migration_evals.bot.cli import main
from migration_evals.bot.exits import ExitStatus


def test_the_demo_pair_agrees_but_on_too_few_items(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--strict", "--json"]) == 0
    capsys.readouterr()
    assert main(["judges", "reliability", "--json"]) == ExitStatus.JUDGES_UNRELIABLE
    document = json.loads(capsys.readouterr().out)
    assert document["reliable"] is False
    assert document["judged"] == 11 and document["labels"] == 11
    assert [(a["n"], a["kappa"], a["status"]) for a in document["agreements"]] == [
        (11, 1.0, "too few items")
    ] * 3
    assert document["strict_disagreements"] == 0


def test_an_empty_ledger_is_reported_not_crashed_on(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["judges", "reliability"]) == ExitStatus.JUDGES_UNRELIABLE
    out = capsys.readouterr().out
    assert "UNRELIABLE" in out
    assert "no item rated by both" in out
