"""Go's shadowing rule: the routes to building a local copy in place of a module."""

from __future__ import annotations

from migration_evals.core.specs import SpecSet
from migration_evals.oracles.ecosystems.go.shadowing import check_go_shadowing, go_replaces
from migration_evals.oracles.ecosystems.registry import check_shadowing
from tests.fakes import memory_tree as tree
from tests.oracles.ecosystems.maven.test_shadowing import only

GO_MOD = "module example.com/kv\n\ngo 1.21\n\nrequire golang.org/x/text v0.21.0\n"
GO = {"go.mod": GO_MOD, "kv/store.go": "package kv\n"}


def test_go_replaces_reads_lines_and_blocks() -> None:
    source = (
        b"module m\nreplace a => ./a\nreplace (\n\tb v1.0.0 => ../b // why\n\tc => d v1.2.0\n)\n"
    )
    assert go_replaces(source) == {"a": ("./a", 2), "b": ("../b", 4), "c": ("d", 5)}


def test_a_local_replace_the_patch_adds_fails_and_a_versioned_one_passes(specs: SpecSet) -> None:
    go = specs.recipe("go-import-rewrite")
    local = GO_MOD + "replace golang.org/x/text => ./fork\n"
    evidence = only(check_shadowing(go, tree(GO, {"go.mod": local})))
    assert evidence.message.startswith("go.mod replaces golang.org/x/text with the folder ./fork")
    assert (evidence.path, evidence.line) == ("go.mod", 6)
    versioned = GO_MOD + "replace golang.org/x/text => golang.org/x/text v0.22.0\n"
    assert check_shadowing(go, tree(GO, {"go.mod": versioned})) == []


def test_a_replace_the_base_already_had_may_stay(specs: SpecSet) -> None:
    go = specs.recipe("go-import-rewrite")
    base = {**GO, "go.mod": GO_MOD + "replace github.com/pkg/errors => ./third_party/pkgerrors\n"}
    changed = base["go.mod"].replace("go 1.21", "go 1.22")
    assert check_shadowing(go, tree(base, {"go.mod": changed})) == []


def test_a_vendored_copy_the_patch_changes_fails(specs: SpecSet) -> None:
    go = specs.recipe("go-import-rewrite")
    path = "vendor/github.com/stretchr/testify/assert/assertions.go"
    base = {**GO, path: "package assert\n"}
    evidence = only(check_shadowing(go, tree(base, {path: "package assert\n\nfunc True() {}\n"})))
    assert (
        evidence.message
        == f"{path} is a vendored copy of github.com/stretchr/testify/assert: the patch may"
        " not change it"
    )


def test_a_module_renamed_to_a_standard_library_path_fails(specs: SpecSet) -> None:
    go = specs.recipe("go-import-rewrite")
    evidence = only(
        check_shadowing(go, tree(GO, {"go.mod": GO_MOD.replace("example.com/kv", "testing")}))
    )
    assert "renames its module to testing, a path of the standard library" in evidence.message


def test_a_file_under_a_dependency_modules_path_fails() -> None:
    files = {**GO, "x/go.mod": "module golang.org/x/text\n"}
    added = {"x/unicode/norm/norm.go": "package norm\n"}
    view = tree({**GO}, {**{p: c for p, c in files.items() if p not in GO}, **added})
    evidence = check_go_shadowing(view, ["golang.org/x/text"])
    assert [e.path for e in evidence] == ["x/unicode/norm/norm.go"]
    assert (
        "package golang.org/x/text/unicode/norm, under the dependency golang.org/x/text"
        in evidence[0].message
    )
    assert (
        check_go_shadowing(
            tree(GO, {"kv/store.go": "package kv\n\nvar X = 1\n"}), ["golang.org/x/text"]
        )
        == []
    )


def test_a_module_the_base_itself_declares_is_its_own() -> None:
    # go-pkgerrors: the base replaces the dependency with a local stand-in it owns.
    base = {
        **GO,
        "third_party/pkgerrors/go.mod": "module github.com/pkg/errors\n",
        "third_party/pkgerrors/errors.go": "package errors\n",
    }
    changed = {"third_party/pkgerrors/errors.go": "package errors\n\nvar X = 1\n"}
    assert check_go_shadowing(tree(base, changed), ["github.com/pkg/errors"]) == []
