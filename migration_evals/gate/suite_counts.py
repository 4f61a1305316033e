"""Tier 3's test counts as people read them: for the base and the patched side, the totals
the build tool printed and the toolchain the side ran on.

Tier 3 keeps them in its details' ``baseline`` and ``patched`` objects (``tests_run``,
``tests_failed``, ``tests_errors``, ``tests_skipped``, ``toolchain`` and, for Java,
``jdk``: ``migration_evals.oracles.tiers.tests``). ``show``, the trial page and the trials table
word them alike, from here. Envelopes recorded before the counts were kept say so rather than show
zeros. The values came from a build the candidate's code ran in: whoever renders them
escapes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "NOT_RECORDED",
    "SIDES",
    "count_lines",
    "counts_document",
    "describe_counts",
    "side_counts",
    "table_cells",
]

SIDES = (("baseline", "base"), ("patched", "patched"))  # details key, as a line names it
COUNT_KEYS = ("tests_run", "tests_failed", "tests_errors", "tests_skipped")
NOT_RECORDED = "counts not recorded"
_LABEL_WIDTH = max(len(label) for _, label in SIDES) + 1


def side_counts(side: Mapping[str, Any]) -> dict[str, Any] | None:
    """The counts and toolchain of one side's object, as stored; None before they were."""
    if not all(type(side.get(key)) is int for key in COUNT_KEYS):
        return None
    kept = (*COUNT_KEYS, "toolchain", "jdk")
    return {key: side[key] for key in kept if key in side}


def describe_counts(side: Mapping[str, Any]) -> str:
    """The side's totals ("89 run, 3 failed, 0 errors, 2 skipped"), or that the envelope
    has none."""
    if side_counts(side) is None:
        return NOT_RECORDED
    run, failed, errors, skipped = (side[key] for key in COUNT_KEYS)
    text = f"{run} run, {failed} failed, {errors} errors, {skipped} skipped"
    # The summaries are read from the kept output; a cut one may have lost some of them.
    return f"{text} (output cut: some may be missing)" if side.get("output_truncated") else text


def _toolchain(side: Mapping[str, Any]) -> str:
    if side.get("jdk"):
        return f"JDK {side['jdk']}"
    tools = side.get("toolchain")
    if not isinstance(tools, Mapping) or not tools:
        return ""
    if "go" in tools:
        return f"Go {str(tools['go']).removeprefix('go')}"
    return ", ".join(f"{name} {version}" for name, version in sorted(tools.items()))


def count_lines(details: Mapping[str, Any]) -> tuple[str, ...]:
    """A line per side tier 3 ran (``base    (JDK 1.8.0_504): 89 run, ...``); none for
    details without sides (a tier that decided before any run, a Dockerfile recipe's)."""
    lines = []
    for key, label in SIDES:
        side = details.get(key)
        if not isinstance(side, Mapping):
            continue
        tool = _toolchain(side)
        named = f"{label:<{_LABEL_WIDTH}}({tool})" if tool else label
        lines.append(f"{named}: {describe_counts(side)}")
    return tuple(lines)


def table_cells(details: Mapping[str, Any]) -> tuple[str, str]:
    """The trials table's base and patched cells ("" for a side tier 3 did not record)."""
    base, patched = (
        describe_counts(side) if isinstance(side := details.get(key), Mapping) else ""
        for key, _ in SIDES
    )
    return base, patched


def counts_document(details: Mapping[str, Any]) -> dict[str, Any]:
    """For ``show --json`` and the trial page: each side's counts and toolchain as stored
    (None: not recorded) and its line; empty when tier 3 recorded no side."""
    sides: dict[str, Any] = {
        key: side_counts(side) for key, _ in SIDES if isinstance(side := details.get(key), Mapping)
    }
    return {**sides, "lines": list(count_lines(details))} if sides else {}
