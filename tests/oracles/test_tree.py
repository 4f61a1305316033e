"""What is worked out from a trial's tree is kept with it; any other tree works it out
each time it is asked."""

from __future__ import annotations

from migration_evals.oracles.tree import MemoryTree, remembered


class _KeepingTree(MemoryTree):
    """A tree that keeps answers, as a trial's ``SnapshotTree`` does."""

    def __init__(self) -> None:
        super().__init__({}, {})
        self.answers: dict[str, object] = {}


def test_a_tree_that_keeps_answers_works_each_out_once() -> None:
    made: list[str] = []
    tree = _KeepingTree()
    for _ in range(3):
        assert remembered(tree, "a", lambda: made.append("a") or "A") == "A"
    assert remembered(tree, "b", lambda: made.append("b") or "B") == "B"
    assert made == ["a", "b"]


def test_any_other_tree_works_it_out_each_time() -> None:
    made: list[str] = []
    tree = MemoryTree({}, {})
    for _ in range(2):
        assert remembered(tree, "a", lambda: made.append("a") or "A") == "A"
    assert made == ["a", "a"]
