"""An answer is given again only to a tree that holds the same bytes at every path its
working-out read, including the paths it found empty."""

from __future__ import annotations

from collections.abc import Callable

from migration_evals.oracles.reads import Read, ReadsMemo


def _tree(files: dict[str, bytes]) -> Read:
    return files.get


def test_the_same_bytes_are_answered_from_the_memo() -> None:
    made: list[str] = []
    memo: ReadsMemo[str] = ReadsMemo()

    def make(read: Read) -> str:
        made.append("x")
        return (read("a") or b"").decode()

    tree = _tree({"a": b"1", "b": b"2"})
    assert memo.answer("k", tree, make) == "1"
    assert memo.answer("k", _tree({"a": b"1", "b": b"other"}), make) == "1"
    assert made == ["x"]  # "b" was never read: its bytes do not matter


def test_a_path_that_holds_other_bytes_is_worked_out_again() -> None:
    memo: ReadsMemo[str] = ReadsMemo()

    def make(read: Read) -> str:
        return "+".join((read(p) or b"-").decode() for p in ("a", "b"))

    assert memo.answer("k", _tree({"a": b"1", "b": b"2"}), make) == "1+2"
    assert memo.answer("k", _tree({"a": b"1", "b": b"3"}), make) == "1+3"
    assert memo.answer("k", _tree({"a": b"1", "b": b"2"}), make) == "1+2"


def test_a_path_found_empty_that_now_holds_a_file_is_worked_out_again() -> None:
    memo: ReadsMemo[str] = ReadsMemo()

    def make(read: Read) -> str:
        return "+".join((read(p) or b"-").decode() for p in ("a", "b"))

    assert memo.answer("k", _tree({"a": b"1"}), make) == "1+-"
    assert memo.answer("k", _tree({"a": b"1", "b": b"2"}), make) == "1+2"
    assert memo.answer("k", _tree({"a": b"1"}), make) == "1+-"


def test_keys_are_kept_apart_and_old_ones_dropped() -> None:
    made: list[str] = []
    memo: ReadsMemo[str] = ReadsMemo(size=2, variants=1)

    def make_for(key: str) -> Callable[[Read], str]:
        def make(read: Read) -> str:
            made.append(key)
            return key + (read("a") or b"").decode()

        return make

    tree = _tree({"a": b"1"})
    for key in ("k1", "k2", "k1", "k3", "k1", "k2"):
        assert memo.answer(key, tree, make_for(key)) == key + "1"
    # k1 kept (used again before k3 came), k2 dropped for k3, then made again.
    assert made == ["k1", "k2", "k3", "k2"]
