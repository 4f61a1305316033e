"""Output is drained whole but kept only up to its cap: its head and its tail; a request
naming another way to keep it gets the capture the sandbox was handed under that name."""

from __future__ import annotations

import pytest

from migration_evals.core.errors import SandboxError
from migration_evals.oracles.sandbox.capture import Capture, OutputCap, capture_for


def test_output_under_the_cap_is_kept_whole() -> None:
    cap = OutputCap(10)
    cap.feed(b"hello ")
    cap.feed(b"you")
    assert cap.text() == "hello you"
    assert not cap.truncated


def test_output_exactly_at_the_cap_is_kept_whole() -> None:
    cap = OutputCap(8)
    for chunk in (b"abc", b"defgh"):
        cap.feed(chunk)
    assert cap.text() == "abcdefgh"
    assert not cap.truncated


def test_output_over_the_cap_keeps_head_and_tail_and_says_what_was_cut() -> None:
    cap = OutputCap(8)  # six bytes of head, two of tail
    for chunk in (b"abc", b"defgh", b"ij", b"kl"):
        cap.feed(chunk)
    assert cap.truncated
    assert cap.total == 12
    assert cap.text() == "abcdef\n[output truncated: 4 bytes not kept here; the last 2 follow]\nkl"


def test_the_tail_starts_at_a_whole_line() -> None:
    cap = OutputCap(400)
    cap.feed(b"head\n" * 100)
    for index in range(1000):
        cap.feed(f"line {index:04d}\n".encode())
    text = cap.text()
    assert text.startswith("head\n")
    tail = text.split("follow]\n", 1)[1]
    assert tail.splitlines()[0].startswith("line ")
    assert len(tail.splitlines()[0]) == len("line 0000")
    assert tail.endswith("line 0999\n")


def test_a_summary_printed_last_survives_a_flood_fed_in_small_chunks() -> None:
    """What build tools print at the end (go test's package line, Maven's totals) is kept
    however much came before it, and memory stays bounded while it streams."""
    cap = OutputCap(1_000)
    for _ in range(50_000):
        cap.feed(b'{"Action":"output","Output":"=== RUN   TestX\\n"}\n')
        assert len(cap._tail) <= 2 * 250 + 60
    cap.feed(b"FAIL\tgithub.com/example/decimal\t8.2s\n")
    text = cap.text()
    assert text.endswith("FAIL\tgithub.com/example/decimal\t8.2s\n")
    assert len(text.encode()) < 1_000 + 100
    assert cap.truncated


def test_a_cut_inside_a_character_still_decodes() -> None:
    cap = OutputCap(1)
    cap.feed("é".encode())
    assert cap.text().startswith("\ufffd")


def test_plain_output_is_kept_by_head_and_tail_whatever_captures_are_handed() -> None:
    assert isinstance(capture_for("", 10, {}), OutputCap)
    assert isinstance(capture_for("", 10, {"lines": _Lines}), OutputCap)


class _Lines(OutputCap):
    """A capture handed to the sandbox under a name of its own."""


def test_a_named_capture_is_the_one_handed_under_that_name() -> None:
    made: Capture = capture_for("lines", 10, {"lines": _Lines})
    assert isinstance(made, _Lines)
    assert made.text() == ""


def test_a_name_the_sandbox_was_not_handed_is_an_infrastructure_error() -> None:
    with pytest.raises(SandboxError, match=r"no capture for output events 'tap' \(it has: lines\)"):
        capture_for("tap", 10, {"lines": _Lines})
    with pytest.raises(SandboxError, match=r"'go-test-json' \(it has: none\)"):
        capture_for("go-test-json", 10, {})
