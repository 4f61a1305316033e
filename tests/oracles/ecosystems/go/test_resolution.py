"""Go's resolution runs: the build list after the marker, the module versions the proxy
lacks by their real names, its version, and the one shared module cache."""

from __future__ import annotations

import pytest

from migration_evals.oracles.deps import ResolutionStatus, classify
from migration_evals.oracles.ecosystems.go.resolution import RESOLUTION as GO
from migration_evals.oracles.ecosystems.go.resolution import go_module_of
from tests.oracles.resolution_runs import (
    GO_PROJECT,
    GO_RESOLVED,
)
from tests.oracles.resolution_runs import fetch as _fetch
from tests.oracles.resolution_runs import result as _result


@pytest.mark.parametrize(
    ("path", "module"),
    [
        ("golang.org/x/text/@v/v0.21.0.zip", "golang.org/x/text@v0.21.0"),
        ("github.com/!some!user/x/@v/v9.9.9.info", "github.com/SomeUser/x@v9.9.9"),
        ("github.com/!burnt!sushi/toml/@v/v1.3.2.mod", "github.com/BurntSushi/toml@v1.3.2"),
        ("golang.org/x/text/@v/list", None),
        ("golang.org/x/text/@latest", None),
        ("sumdb/sum.golang.org/lookup/golang.org/x/text@v0.21.0", None),
    ],
)
def test_go_module_of_a_proxy_path_undoes_the_case_encoding(path: str, module: str | None) -> None:
    assert go_module_of(path) == module


def test_a_successful_go_run_lists_the_modules_after_the_marker() -> None:
    fetch = _fetch("golang.org/x/text/@v/v0.21.0.zip", route="go")
    resolution = classify(GO_PROJECT, _result(0, GO_RESOLVED, fetch), "go", GO)
    assert resolution.status is ResolutionStatus.RESOLVED
    assert resolution.resolved == (
        "example.com/go-modern",
        "golang.org/x/sync v0.10.0",
        "golang.org/x/text v0.21.0",
    )
    assert resolution.toolchain == {"go": "go1.23.4"}


def test_a_go_run_that_stopped_before_the_marker_resolved_nothing() -> None:
    output = "go version go1.22.12 linux/amd64\ngo: updates to go.mod needed\n"
    assert classify(GO_PROJECT, _result(1, output), "go", GO).resolved == ()


def test_a_go_module_version_the_proxy_lacks_is_missing_by_its_real_name() -> None:
    output = (
        "go version go1.22.12 linux/amd64\n"
        "go: github.com/SomeUser/x@v9.9.9: reading "
        "http://127.0.0.1:3128/go/github.com/!some!user/x/@v/v9.9.9.info: 404 Not Found\n"
    )
    fetches = (
        _fetch("golang.org/x/text/@v/v0.21.0.mod", route="go"),
        _fetch("github.com/!some!user/x/@v/v9.9.9.info", 404, route="go"),
    )
    resolution = classify(GO_PROJECT, _result(1, output, *fetches), "go", GO)
    assert resolution.status is ResolutionStatus.MISSING
    assert resolution.missing == ("github.com/SomeUser/x@v9.9.9",)


def test_a_go_404_the_output_does_not_name_is_not_missing() -> None:
    output = "go version go1.22.12 linux/amd64\n./a.go:3:2: undefined: x\n"
    fetch = _fetch("example.com/probe/@v/v1.0.0.info", 404, route="go")
    resolution = classify(GO_PROJECT, _result(1, output, fetch), "go", GO)
    assert resolution.status is ResolutionStatus.INCOMPLETE


def test_every_go_project_and_tree_shares_one_module_cache() -> None:
    assert GO.cache(GO_PROJECT, "tree-a") == GO.cache(GO_PROJECT, "tree-b") == "go"
