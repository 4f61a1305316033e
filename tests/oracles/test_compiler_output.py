"""What build output reads as whatever the tool: the last lines stand for a tool that
names nothing, and no reader, no diagnostics."""

from __future__ import annotations

from migration_evals.oracles.compiler_output import (
    build_error_lines,
    describe_build_stop,
    parse_compiler_output,
)
from migration_evals.oracles.ecosystems.go.build_output import GO_OUTPUT
from migration_evals.oracles.ecosystems.maven.build_output import MAVEN_OUTPUT


def test_output_without_any_error_line_gives_its_last_lines() -> None:
    for reader in (None, MAVEN_OUTPUT, GO_OUTPUT):
        assert build_error_lines("panic: runtime error\nKilled\n", reader) == [
            "panic: runtime error",
            "Killed",
        ]


def test_a_tool_without_a_reader_says_no_diagnostic_and_no_stop() -> None:
    output = "[ERROR] /workspace/src/main/java/A.java:[40,25] cannot find symbol\n"
    assert parse_compiler_output(output, None) == []
    assert describe_build_stop(output, None) is None
