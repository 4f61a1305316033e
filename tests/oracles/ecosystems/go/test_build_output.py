"""The go command's output as file:line evidence, its decisive line first, and where a
build stopped."""

from __future__ import annotations

import pytest

from migration_evals.oracles.compiler_output import (
    build_error_lines,
    describe_build_stop,
    parse_compiler_output,
)
from migration_evals.oracles.ecosystems.go.build_output import GO_OUTPUT
from migration_evals.oracles.sandbox.capture import OutputCap
from tests.oracles import build_outputs as b


def test_go_diagnostics_are_relative_to_the_tree() -> None:
    found = parse_compiler_output("vet: ./kv/store.go:7:2: imported and not used\n", GO_OUTPUT)
    assert [(e.path, e.line, e.column) for e in found] == [("kv/store.go", 7, 2)]


# -- the decisive line leads ------------------------------------------------------------------

DECISIVE = {
    "go-build": (b.GO_BUILD, "store/store.go:12:3: undefined: ioutil"),
    "go-test-events": (b.GO_TEST_EVENTS, "store/store_test.go:9:2: undefined: store.Open"),
}


@pytest.mark.parametrize("colours", [False, True], ids=["batch", "terminal"])
@pytest.mark.parametrize(("output", "decisive"), DECISIVE.values(), ids=DECISIVE.keys())
def test_the_decisive_line_comes_first_and_no_banner_is_among_the_lines(
    output: str, decisive: str, colours: bool
) -> None:
    lines = build_error_lines(b.coloured(output) if colours else output, GO_OUTPUT)
    assert lines[0] == decisive
    assert not [line for line in lines if any(banner in line for banner in b.BANNERS)]
    assert not [line for line in lines if line.startswith(("[ERROR]", "[INFO]", "\x1b"))]


def test_a_go_package_header_never_leads() -> None:
    assert build_error_lines(b.GO_BUILD, GO_OUTPUT) == [
        "store/store.go:12:3: undefined: ioutil",
        "store/store.go:14:9: undefined: ioutil",
        "# example.com/svc/store",
    ]


def test_the_line_the_cut_left_partial_is_not_read() -> None:
    cap = OutputCap(120)  # 90 bytes of head: the cut falls inside the first diagnostic
    cap.feed((b.GO_BUILD + "x" * 200 + "\nend\n").encode())
    output = cap.text()
    assert "\nstore/store.go:12:3: unde\n[output truncated:" in output
    assert parse_compiler_output(output, GO_OUTPUT) == []
    assert not [
        line for line in build_error_lines(output, GO_OUTPUT) if "unde" in line or "[output" in line
    ]


# -- where the build stopped --------------------------------------------------------------------

STOPS = {
    "go-1.22": (
        b.GO_TEST_TEXT,
        "the build stopped at package example.com/svc/store "
        "(store/store_test.go:9:2: undefined: store.Open)",
    ),
    "go-1.24": (
        b.GO_TEST_EVENTS,
        "the build stopped at package example.com/svc/store "
        "(store/store_test.go:9:2: undefined: store.Open)",
    ),
    "go-build": (
        b.GO_BUILD,
        "the build stopped at package example.com/svc/store "
        "(store/store.go:12:3: undefined: ioutil)",
    ),
}


@pytest.mark.parametrize(("output", "stop"), STOPS.values(), ids=STOPS.keys())
def test_the_phase_that_stopped_the_build_is_named_with_its_cause(output: str, stop: str) -> None:
    assert describe_build_stop(output, GO_OUTPUT) == stop


def test_a_build_that_did_not_stop_says_nothing() -> None:
    assert describe_build_stop("", GO_OUTPUT) is None
    passing = (
        '{"Action":"pass","Package":"m/kv","Test":"TestGet"}\n{"Action":"pass","Package":"m/kv"}'
    )
    assert describe_build_stop(passing, GO_OUTPUT) is None


def test_what_a_go_test_prints_is_not_taken_for_the_build() -> None:
    printed = (
        '{"Action":"output","Package":"m/kv","Test":"TestGet","Output":"# m/kv\\n"}\n'
        '{"Action":"output","Package":"m/kv","Test":"TestGet","Output":"kv.go:3:1: boom\\n"}\n'
    )
    assert describe_build_stop(printed, GO_OUTPUT) is None
    assert parse_compiler_output(printed, GO_OUTPUT) == []
