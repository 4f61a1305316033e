"""Go's build roots: the modules that own the Go files a patch touches."""

from __future__ import annotations

from migration_evals.oracles.ecosystems.go.projects import GO, find_projects
from migration_evals.oracles.projects import Project
from migration_evals.oracles.tree import ChangeKind, FileChange, MemoryTree
from tests.oracles.ecosystems.trees import touched_tree as _tree

GO_FILE = b"package x\n"


def _roots(tree: MemoryTree) -> list[str]:
    found = find_projects(tree)
    assert found.unsupported is None, found.unsupported
    return found.roots


def test_a_go_file_belongs_to_the_nearest_module() -> None:
    files = {
        "go.mod": b"module example.com/top\n",
        "a.go": GO_FILE,
        "tools/go.mod": b"module example.com/top/tools\n",
        "tools/cmd/gen/main.go": GO_FILE,
        "internal/x/x.go": GO_FILE,
    }
    tree = _tree(files, ["tools/cmd/gen/main.go", "internal/x/x.go", "README.md"])
    assert find_projects(tree).projects == (Project(GO, ""), Project(GO, "tools"))


def test_go_files_outside_any_module_make_a_root_project_that_needs_one() -> None:
    """GOPATH era: the harness makes the go.mod (migration_evals.oracles.ecosystems.go.gopath); a
    module beside it is built as before."""
    files = {"svc/go.mod": b"module svc\n", "svc/s.go": GO_FILE, "legacy/l.go": GO_FILE}
    found = find_projects(_tree(files, ["svc/s.go", "legacy/l.go"]))
    assert found.unsupported is None
    assert found.projects == (Project(GO, "", needs_module=True), Project(GO, "svc"))


def test_a_gopath_tree_whose_patch_adds_a_go_mod_is_that_module() -> None:
    changes = [
        FileChange(ChangeKind.MODIFY, "a.go", "a.go"),
        FileChange(ChangeKind.ADD, None, "go.mod"),
    ]
    tree = MemoryTree({"a.go": GO_FILE}, {"a.go": GO_FILE, "go.mod": b"module m\n"}, changes)
    assert find_projects(tree).projects == (Project(GO, ""),)


def test_a_go_module_the_patch_deletes_is_still_found_in_the_base_tree() -> None:
    files = {"go.mod": b"module m\n", "old/go.mod": b"module m/old\n", "old/o.go": GO_FILE}
    tree = _tree(files, [], deleted=["old/go.mod", "old/o.go"])
    assert _roots(tree) == ["old"]


def test_a_patch_touching_no_go_file_is_unsupported() -> None:
    found = find_projects(_tree({"go.mod": b"module m\n"}, ["README.md"]))
    assert found.unsupported is not None and "no Go file" in found.unsupported
