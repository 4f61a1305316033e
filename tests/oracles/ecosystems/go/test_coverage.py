"""Go's coverage profiles, read per file and scoped to the module's own files."""

from __future__ import annotations

from migration_evals.oracles.coverage import Coverage, FileCoverage, within_scope
from migration_evals.oracles.ecosystems.go.coverage import go_module_path, parse_go_profile

GO_PROFILE = """mode: set
example.com/kv/store.go:25.39,26.48 1 1
example.com/kv/store.go:26.48,28.3 1 0
example.com/kv/store.go:29.2,29.30 2 1
example.com/cmd/main.go:15.13,16.41 1 0
example.com/kv/store.go:26.48,28.3 1 1
example.com/cmd/main.go:15.13,16.41 1 0
"""


def _coverage(**files: tuple[int, int]) -> Coverage:
    return Coverage({name: FileCoverage(*counts) for name, counts in files.items()})


def test_a_go_block_reported_by_several_test_binaries_counts_once() -> None:
    coverage = parse_go_profile(GO_PROFILE)
    # store.go: 4 statements, all run by some binary; main.go: 1 statement, never run.
    assert coverage.files == {
        "example.com/kv/store.go": FileCoverage(4, 4),
        "example.com/cmd/main.go": FileCoverage(0, 1),
    }
    assert coverage.unit == "statements"


def test_a_go_profile_with_a_line_that_is_no_block_is_unmeasured() -> None:
    coverage = parse_go_profile("mode: set\nexample.com/a.go:1.1,2.2 1 1\nPASS coverage: 100%\n")
    assert not coverage.measured
    assert "line 3" in (coverage.problem or "")
    assert not parse_go_profile("").measured


def test_only_the_modules_own_files_count_for_go() -> None:
    module = go_module_path(b'module "example.com/kv"\n\ngo 1.19\n')
    assert module == "example.com/kv"
    profiled = _coverage(**{"example.com/kv/a.go": (1, 2), "github.com/pkg/errors/e.go": (9, 9)})
    assert within_scope(profiled, module).files == {"example.com/kv/a.go": FileCoverage(1, 2)}
    assert go_module_path(b"go 1.19\n") is None
