"""Fabricated marks are found however deeply nested, and the text pre-check never misses one."""

from __future__ import annotations

import json

import pytest

from migration_evals.core.model import FabricatedMark
from migration_evals.core.stamps import canonical_json
from migration_evals.gate.fabrication import find_marks, may_hold_marks

MARK = FabricatedMark("sandbox", "key", "cassettes/sandbox/x.json", "cassette miss").to_dict()


@pytest.mark.parametrize(
    ("payload", "paths"),
    [
        ({"envelope": {"fabricated": []}}, []),
        ({"envelope": {"fabricated": [MARK]}}, ["envelope.fabricated (sandbox: cassette miss)"]),
        (
            {"a": {"b": {"c": {"fabricated": True, "port": "judge", "reason": "miss"}}}},
            ["a.b.c.fabricated (judge: miss)"],
        ),
        (
            {"details": {"judges": [{"fabricated": []}, {"fabricated": [MARK]}]}},
            ["details.judges[1].fabricated (sandbox: cassette miss)"],
        ),
        (
            {"evidence": [{"message": "x", "extra": {"fabricated": "yes"}}]},
            ["evidence[0].extra.fabricated"],
        ),
        ({"fabricated": False, "x": {"fabricated": None, "y": {"fabricated": {}}}}, []),
    ],
)
def test_marks_are_found_anywhere(payload: dict[str, object], paths: list[str]) -> None:
    assert find_marks(payload) == paths
    text = canonical_json(payload)
    if paths:
        assert may_hold_marks(text)
    else:
        assert not may_hold_marks(text)


def test_the_pre_check_suspects_any_other_spelling() -> None:
    assert may_hold_marks(json.dumps({"fabricated": []}))  # a space: parse and look
    assert not find_marks(json.loads(json.dumps({"fabricated": []})))
    assert not may_hold_marks(canonical_json({"reason": 'said "fabricated":true'}))
    assert not may_hold_marks(canonical_json({"notfabricated": True}))
