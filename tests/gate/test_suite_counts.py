"""Tier 3's counts as worded for people: each side's totals and toolchain, and envelopes
from before they were recorded."""

from __future__ import annotations

from migration_evals.gate.suite_counts import count_lines, counts_document, table_cells

GO_SIDE = {
    "exit_code": 1,
    "output_tail": "",
    "output_truncated": True,
    "toolchain": {"go": "go1.22.12"},
    "tests_run": 12,
    "tests_failed": 1,
    "tests_errors": 0,
    "tests_skipped": 0,
}


def test_a_go_side_names_its_release_and_a_cut_output_says_counts_may_be_missing() -> None:
    details = {"baseline": {**GO_SIDE, "output_truncated": False}, "patched": GO_SIDE}
    assert count_lines(details) == (
        "base    (Go 1.22.12): 12 run, 1 failed, 0 errors, 0 skipped",
        "patched (Go 1.22.12): 12 run, 1 failed, 0 errors, 0 skipped"
        " (output cut: some may be missing)",
    )


def test_old_envelopes_and_tiers_without_sides() -> None:
    old = {"baseline": {"exit_code": 0, "output_tail": ""}, "patched": {"exit_code": 1}}
    assert count_lines(old) == ("base: counts not recorded", "patched: counts not recorded")
    assert table_cells(old) == ("counts not recorded", "counts not recorded")
    assert counts_document(old)["baseline"] is None
    # A tier that decided before any run, or a Dockerfile recipe's checks.
    assert count_lines({"checks": []}) == ()
    assert table_cells({}) == ("", "")
    assert counts_document({"reruns": 0}) == {}


def test_a_side_without_a_known_toolchain_is_named_plainly() -> None:
    side = {k: v for k, v in GO_SIDE.items() if k not in ("toolchain", "output_truncated")}
    assert count_lines({"patched": side}) == ("patched: 12 run, 1 failed, 0 errors, 0 skipped",)
    assert counts_document({"patched": side})["patched"] == {
        "tests_run": 12,
        "tests_failed": 1,
        "tests_errors": 0,
        "tests_skipped": 0,
    }
