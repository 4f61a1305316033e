"""Tier 1's test-configuration guard on Go trees, against the real recipe: a build
constraint, directive or workspace the patch adds fails; an import rewrite passes."""

from __future__ import annotations

import pytest

from migration_evals.core.model import Evidence
from migration_evals.core.specs import Recipe, SpecSet
from migration_evals.oracles.ecosystems.registry import check_test_config
from migration_evals.oracles.tree import ChangeKind, FileChange, MemoryTree
from tests.fakes import memory_tree as tree


@pytest.fixture
def go(specs: SpecSet) -> Recipe:
    return specs.recipe("go-import-rewrite")


def where(evidence: list[Evidence]) -> list[tuple[str | None, int | None]]:
    return [(e.path, e.line) for e in evidence]


def only(evidence: list[Evidence]) -> Evidence:
    assert len(evidence) == 1, [str(e) for e in evidence]
    return evidence[0]


GO_BASE = {
    "go.mod": "module example.com/kv\n\ngo 1.19\n",
    "kv/store.go": 'package kv\n\nfunc Get() string { return "" }\n',
    "kv/store_test.go": 'package kv\n\nimport "testing"\n\nfunc TestGet(t *testing.T) {}\n',
}


@pytest.mark.parametrize(
    "header",
    [
        "//go:build ignore\n\n",
        "//go:build windows\n\n",
        "// +build never\n\n",
        "//go:build !linux\n\n",
    ],
)
def test_a_build_constraint_excluding_an_existing_file_fails(go: Recipe, header: str) -> None:
    patched = header + GO_BASE["kv/store_test.go"]
    evidence = only(check_test_config(go, tree(GO_BASE, {"kv/store_test.go": patched})))
    assert evidence.message.startswith(
        "build-constraints: kv/store_test.go is no longer built for linux/"
    )
    assert where([evidence]) == [("kv/store_test.go", 1)]


@pytest.mark.parametrize(
    "header",
    [
        "//go:build linux\n\n",
        "//go:build go1.16\n\n",
        "//go:build !windows && (amd64 || arm64)\n\n",
        "//go:build unix\n// +build unix\n\n",
    ],
)
def test_a_constraint_the_sandbox_still_builds_passes(go: Recipe, header: str) -> None:
    patched = header + GO_BASE["kv/store_test.go"]
    assert check_test_config(go, tree(GO_BASE, {"kv/store_test.go": patched})) == []


def test_gofmt_adding_go_build_to_a_plus_build_line_passes(go: Recipe) -> None:
    base = {**GO_BASE, "kv/unix.go": "// +build linux darwin\n\npackage kv\n"}
    patched = "//go:build linux || darwin\n// +build linux darwin\n\npackage kv\n"
    assert check_test_config(go, tree(base, {"kv/unix.go": patched})) == []


def test_a_rename_the_go_command_ignores_fails(go: Recipe) -> None:
    for name in ("kv/store_windows.go", "kv/_store.go", "kv/testdata/store.go", "kv/store_arm.go"):
        base = MemoryTree(
            {p: c.encode() for p, c in GO_BASE.items()},
            {
                p: c.encode()
                for p, c in {**GO_BASE, name: GO_BASE["kv/store.go"]}.items()
                if p != "kv/store.go"
            },
            [FileChange(ChangeKind.RENAME, "kv/store.go", name)],
        )
        evidence = only(check_test_config(go, base))
        assert "its name changed" in evidence.message, name


@pytest.mark.parametrize(
    "directive", ["//go:debug panicnil=1\n", "//go:linkname fail testing.(*common).Fail\n"]
)
def test_a_new_go_directive_fails(go: Recipe, directive: str) -> None:
    patched = directive + GO_BASE["kv/store.go"]
    evidence = only(check_test_config(go, tree(GO_BASE, {"kv/store.go": patched})))
    assert evidence.message.startswith("go-directives: kv/store.go adds //go:")
    assert where([evidence]) == [("kv/store.go", 1)]


def test_a_godebug_line_in_go_mod_fails(go: Recipe) -> None:
    for patched in (
        GO_BASE["go.mod"] + "godebug panicnil=1\n",
        GO_BASE["go.mod"] + "godebug (\n\tpanicnil=1\n)\n",
    ):
        evidence = only(check_test_config(go, tree(GO_BASE, {"go.mod": patched})))
        assert evidence.message == "go-directives: go.mod adds the setting godebug panicnil=1"


def test_a_go_work_file_fails(go: Recipe) -> None:
    evidence = only(check_test_config(go, tree(GO_BASE, {"go.work": "go 1.19\n\nuse ./fake\n"})))
    assert evidence.message.startswith("go-workspace: the patch adds go.work")


def test_an_ioutil_rewrite_passes(go: Recipe) -> None:
    base = {
        **GO_BASE,
        "kv/store.go": 'package kv\n\nimport "io/ioutil"\n\nvar _ = ioutil.ReadFile\n',
    }
    patched = 'package kv\n\nimport "os"\n\nvar _ = os.ReadFile\n'
    changes = {"kv/store.go": patched, "go.mod": GO_BASE["go.mod"].replace("1.19", "1.21")}
    assert check_test_config(go, tree(base, changes)) == []
