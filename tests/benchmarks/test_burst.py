"""The burst benchmark, small: every pull request gets one check run, within GitHub's limits."""

from __future__ import annotations

import json

import pytest

from benchmarks.burst import main


def test_a_small_burst_shows_every_check_run_once_within_the_limits(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The App's pacing at a quarter of GitHub's second: the same rule, kept four times faster.
    interval = 0.25
    argv = ["--prs", "12", "--installations", "4", "--write-interval", str(interval)]
    assert main([*argv, "--timeout", "60"]) == 0
    figures = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (figures["check_runs_shown"], figures["lost"], figures["duplicated"]) == (12, 0, 0)
    assert figures["writes_refused_by_limits"] == 0
    assert figures["shortest_gap_between_writes_s"] >= interval  # three writes per installation
