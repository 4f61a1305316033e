"""Output is drained whole but kept only up to its cap."""

from __future__ import annotations

from oracles.sandbox.capture import OutputCap


def test_output_under_the_cap_is_kept_whole() -> None:
    cap = OutputCap(10)
    cap.feed(b"hello ")
    cap.feed(b"you")
    assert cap.text() == "hello you"
    assert not cap.truncated


def test_output_over_the_cap_is_cut_and_says_so() -> None:
    cap = OutputCap(4)
    for chunk in (b"abc", b"defgh", b"ij"):
        cap.feed(chunk)
    assert cap.truncated
    assert cap.total == 10
    assert cap.text().startswith("abcd\n[output truncated: 6 more bytes not kept]")


def test_a_cut_inside_a_character_still_decodes() -> None:
    cap = OutputCap(1)
    cap.feed("é".encode())
    assert cap.text().startswith("\ufffd")
