"""The go-imports contract against the real go-import-rewrite recipe."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from migration_evals.core.model import Evidence, Severity
from migration_evals.core.specs import Recipe, SpecSet
from migration_evals.oracles.ecosystems.registry import check_contract
from migration_evals.oracles.tree import ChangeKind, FileChange, MemoryTree

BASE = """package store

import (
\t"fmt"
\t"io/ioutil"

\t"github.com/pkg/errors"
)

func Load(path string) ([]byte, error) {
\tdata, err := ioutil.ReadFile(path)
\tif err != nil {
\t\treturn nil, errors.Wrap(err, "load")
\t}
\tfmt.Println(len(data))
\treturn data, nil
}
"""

REWRITTEN = """package store

import (
\t"errors"
\t"fmt"
\t"os"
)

var ErrEmpty = errors.New("empty")

func Load(path string) ([]byte, error) {
\tdata, err := os.ReadFile(path)
\tif err != nil {
\t\treturn nil, fmt.Errorf("load: %w", err)
\t}
\tfmt.Println(len(data))
\treturn data, nil
}
"""


@pytest.fixture
def recipe(specs: SpecSet) -> Recipe:
    return specs.recipe("go-import-rewrite")


def _patched(base: Mapping[str, str], after: Mapping[str, str]) -> MemoryTree:
    """A tree whose diff modified every file in ``after`` (and deleted those only in base)."""
    changes = [
        FileChange(ChangeKind.MODIFY if p in base else ChangeKind.ADD, p if p in base else None, p)
        for p in after
    ]
    changes += [FileChange(ChangeKind.DELETE, p, None) for p in base if p not in after]
    return MemoryTree(
        base={p: c.encode() for p, c in base.items()},
        patched={p: c.encode() for p, c in after.items()},
        changes=changes,
    )


def _where(evidence: list[Evidence]) -> list[tuple[str | None, int | None, str]]:
    return [(e.path, e.line, e.message) for e in evidence]


def test_complete_rewrite_holds(recipe: Recipe) -> None:
    tree = _patched({"store/load.go": BASE}, {"store/load.go": REWRITTEN})
    assert check_contract(recipe, {}, tree) == []


def test_leftover_ioutil_import_fails_at_its_line(recipe: Recipe) -> None:
    # errors moved to the standard library, but io/ioutil stayed.
    half = BASE.replace('\t"github.com/pkg/errors"', '\t"errors"\n\t"fmt"').replace(
        'errors.Wrap(err, "load")', 'fmt.Errorf("load: %w", err)'
    )
    evidence = check_contract(recipe, {}, _patched({"load.go": BASE}, {"load.go": half}))

    assert evidence == [
        Evidence("still imports io/ioutil; use os or io", "load.go", 5, 2, Severity.FAILURE)
    ]


def test_aliased_dot_and_blank_imports_of_an_old_path_fail(recipe: Recipe) -> None:
    after = (
        "package store\n\n"
        "import (\n"
        '\tiu "io/ioutil"\n'
        '\t. "github.com/pkg/errors"\n'
        ")\n"
        'import _ "io/ioutil"\n'
    )
    evidence = check_contract(recipe, {}, _patched({"a.go": BASE}, {"a.go": after}))

    assert _where(evidence) == [
        ("a.go", 4, "still imports io/ioutil; use os or io"),
        ("a.go", 5, "still imports github.com/pkg/errors; use errors or fmt"),
        ("a.go", 7, "still imports io/ioutil; use os or io"),
    ]


def test_params_narrow_the_rules(recipe: Recipe) -> None:
    # Only io/ioutil was asked for; keeping github.com/pkg/errors is then fine.
    only_ioutil = BASE.replace('\t"io/ioutil"', '\t"os"').replace("ioutil.ReadFile", "os.ReadFile")
    tree = _patched({"load.go": BASE}, {"load.go": only_ioutil})

    assert check_contract(recipe, {"rewrites": ["io/ioutil"]}, tree) == []
    assert _where(check_contract(recipe, {}, tree)) == [
        ("load.go", 7, "still imports github.com/pkg/errors; use errors or fmt")
    ]


def test_patch_rewriting_nothing_fails(recipe: Recipe) -> None:
    # The touched file never imported an old path: the patch is off-recipe.
    tree = _patched({"store/load.go": REWRITTEN}, {"store/load.go": REWRITTEN + "\n// tidy\n"})
    evidence = check_contract(recipe, {}, tree)

    assert _where(evidence) == [
        (
            None,
            None,
            "the patch rewrites none of the listed imports (io/ioutil, github.com/pkg/errors)",
        )
    ]


def test_narrowed_patch_rewriting_nothing_names_only_the_asked_paths(recipe: Recipe) -> None:
    base = BASE.replace('\t"io/ioutil"\n', "").replace("ioutil.ReadFile", "readFile")
    tree = _patched({"load.go": base}, {"load.go": base + "\n"})
    evidence = check_contract(recipe, {"rewrites": ["io/ioutil"]}, tree)

    assert [e.message for e in evidence] == [
        "the patch rewrites none of the listed imports (io/ioutil)"
    ]


def test_dropped_import_with_remaining_uses_fails(recipe: Recipe) -> None:
    broken = REWRITTEN.replace("os.ReadFile", "ioutil.ReadFile")
    evidence = check_contract(recipe, {}, _patched({"load.go": BASE}, {"load.go": broken}))

    assert _where(evidence) == [
        ("load.go", 12, "uses ioutil.ReadFile but no longer imports io/ioutil")
    ]


def test_dropped_aliased_import_is_followed_by_its_alias(recipe: Recipe) -> None:
    base = BASE.replace('\t"io/ioutil"', '\tiu "io/ioutil"').replace("ioutil.", "iu.")
    broken = REWRITTEN.replace("os.ReadFile", "iu.ReadFile")
    evidence = check_contract(recipe, {}, _patched({"load.go": base}, {"load.go": broken}))

    assert [e.message for e in evidence] == ["uses iu.ReadFile but no longer imports io/ioutil"]


def test_mentions_in_comments_and_strings_are_not_imports(recipe: Recipe) -> None:
    after = REWRITTEN.replace(
        "var ErrEmpty", '// was: import "io/ioutil"\nconst old = "io/ioutil"\n\nvar ErrEmpty'
    )
    tree = _patched({"load.go": BASE}, {"load.go": after})
    assert check_contract(recipe, {}, tree) == []


def test_deleted_file_counts_as_rewritten_and_is_not_checked(recipe: Recipe) -> None:
    tree = _patched(
        {"legacy.go": BASE, "main.go": "package store\n"}, {"main.go": "package store\n\n"}
    )
    assert check_contract(recipe, {}, tree) == []


def test_untouched_files_are_not_checked(recipe: Recipe) -> None:
    tree = _patched({"load.go": BASE}, {"load.go": REWRITTEN})
    tree = MemoryTree(
        base={**tree.base, "other.go": BASE.encode()},
        patched={**tree.patched, "other.go": BASE.encode()},
        changes=tree.changes,
    )
    assert check_contract(recipe, {}, tree) == []
