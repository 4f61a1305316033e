"""Tier 1 syntax check over real tree-sitter grammars."""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor

import pytest

from migration_evals.core.model import Evidence, Severity
from migration_evals.oracles.ecosystems.registry import source_languages
from migration_evals.oracles.syntax import _KEPT_SOURCE_BYTES, check_syntax, language_of, parse
from migration_evals.oracles.tree import ChangeKind, FileChange, MemoryTree

VALID_JAVA = b"""package demo;

public class Greeter {
    private final String name;

    public Greeter(String name) {
        this.name = name;
    }

    public String greet() {
        return "Hello, " + name;
    }
}
"""

VALID_GO = b"""package main

import (
\t"fmt"
\t"os"
)

func main() {
\tfmt.Println(os.Args)
}
"""

VALID_DOCKERFILE = b"""# build stage
ARG VERSION=3.12
FROM --platform=$BUILDPLATFORM python:${VERSION}-slim AS build
RUN pip install --no-cache-dir build \\
    && python -m build
FROM gcr.io/distroless/python3:nonroot
COPY --from=build /dist /app
ENTRYPOINT ["python3", "/app/main.py"]
"""


def _modified(files: Mapping[str, bytes]) -> MemoryTree:
    """A tree in which the patch modified every given file into the given content."""
    changes = [FileChange(ChangeKind.MODIFY, path, path) for path in files]
    return MemoryTree(base=dict(files), patched=dict(files), changes=changes)


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("src/main/java/demo/App.java", "java"),
        ("cmd/tool/main.go", "go"),
        ("Dockerfile", "dockerfile"),
        ("deploy/Containerfile", "dockerfile"),
        ("images/api.Dockerfile", "dockerfile"),
        ("images/api.dockerfile", "dockerfile"),
        ("Dockerfile.dev", "dockerfile"),
        ("README.md", None),
        ("go.mod", None),
        ("pom.xml", None),
        ("docs/Dockerfile-notes.txt", None),
    ],
)
def test_language_of_maps_paths_to_grammars(path: str, language: str | None) -> None:
    found = language_of(path, source_languages())
    assert (found.name if found else None) == language


def test_valid_files_give_no_evidence() -> None:
    tree = MemoryTree(
        base={},
        patched={
            "src/Greeter.java": VALID_JAVA,
            "main.go": VALID_GO,
            "Dockerfile": VALID_DOCKERFILE,
        },
        changes=[
            FileChange(ChangeKind.ADD, None, "src/Greeter.java"),
            FileChange(ChangeKind.MODIFY, "main.go", "main.go"),
            FileChange(ChangeKind.MODIFY, "Dockerfile", "Dockerfile"),
        ],
    )
    assert check_syntax(tree, source_languages()) == []


def test_java_error_node_is_reported_at_its_one_based_position() -> None:
    source = VALID_JAVA.replace(b'return "Hello, " + name;', b'return "Hello, " + ) name;')
    tree = _modified({"Greeter.java": source})

    evidence = check_syntax(tree, source_languages())

    assert len(evidence) == 1
    found = evidence[0]
    assert (found.path, found.line, found.column) == ("Greeter.java", 11, 28)
    assert found.message == "syntax error near `)`"
    assert found.severity is Severity.FAILURE


def test_missing_semicolon_is_reported_as_a_missing_node() -> None:
    source = VALID_JAVA.replace(b"this.name = name;", b"this.name = name")
    evidence = check_syntax(_modified({"Greeter.java": source}), source_languages())

    # tree-sitter puts the zero-width MISSING node right after the last token.
    assert evidence == [Evidence("missing `;`", "Greeter.java", 7, 25, Severity.FAILURE)]


def test_go_and_dockerfile_errors_are_found() -> None:
    go = VALID_GO.replace(b"func main() {", b"func main( {")
    # An exec-form ENTRYPOINT whose JSON array is never closed.
    dockerfile = VALID_DOCKERFILE.replace(b'"/app/main.py"]', b'"/app/main.py"')

    evidence = check_syntax(
        _modified({"main.go": go, "Dockerfile": dockerfile}), source_languages()
    )

    assert [(e.path, e.line, e.message) for e in evidence] == [
        ("main.go", 8, "missing `)`"),
        ("Dockerfile", 8, 'syntax error near `ENTRYPOINT ["python3", "/app/main.py"`'),
    ]


def test_column_counts_characters_not_bytes() -> None:
    # "é" is two bytes in UTF-8; the column must still be the character position.
    source = 'class A {\n  String s = "é" + ) 1;\n}\n'.encode()
    evidence = check_syntax(_modified({"A.java": source}), source_languages())
    assert [(e.line, e.column) for e in evidence] == [(2, 20)]


def test_invalid_utf8_still_parses() -> None:
    # A Latin-1 "é" inside a string literal: not UTF-8, but the Java is well formed.
    # The undecodable byte counts as one character, so ")" sits at column 23.
    valid = b'class A {\n  String s = "caf\xe9";\n}\n'
    broken = b'class A {\n  String s = "caf\xe9" + ) 1;\n}\n'
    assert check_syntax(_modified({"A.java": valid}), source_languages()) == []
    assert [
        (e.line, e.column) for e in check_syntax(_modified({"A.java": broken}), source_languages())
    ] == [(2, 23)]


def test_deleted_and_unknown_files_are_not_parsed() -> None:
    tree = MemoryTree(
        base={"Old.java": b"class {", "notes.txt": b"class {"},
        patched={"notes.txt": b"class {", "New.java": b"class New {}\n"},
        changes=[
            FileChange(ChangeKind.DELETE, "Old.java", None),
            FileChange(ChangeKind.MODIFY, "notes.txt", "notes.txt"),
            FileChange(ChangeKind.RENAME, "Broken.java", "New.java"),
        ],
    )
    assert check_syntax(tree, source_languages()) == []


def test_renamed_file_is_checked_under_its_new_path() -> None:
    tree = MemoryTree(
        base={"Old.java": b"class Old {}\n"},
        patched={"New.java": b"class New {\n"},
        changes=[FileChange(ChangeKind.RENAME, "Old.java", "New.java")],
    )
    evidence = check_syntax(tree, source_languages())
    assert [e.path for e in evidence] == ["New.java"]
    assert evidence[0].message == "missing `}`"


def test_evidence_is_capped_per_file_with_a_summary_line() -> None:
    body = "".join(f"  int f{i}() {{ return ) {i}; }}\n" for i in range(10))
    source = f"class A {{\n{body}}}\n".encode()

    evidence = check_syntax(_modified({"A.java": source}), source_languages(), max_per_file=3)

    assert [e.line for e in evidence[:3]] == [2, 3, 4]
    assert len(evidence) == 4
    summary = evidence[3]
    assert summary.message == "more syntax errors after the first 3 are not shown"
    assert (summary.path, summary.line, summary.column) == ("A.java", None, None)


def test_parsers_are_safe_across_threads() -> None:
    broken = VALID_JAVA.replace(b"this.name = name;", b"this.name = name")
    tree = _modified({"A.java": broken, "B.java": VALID_JAVA, "main.go": VALID_GO})
    expected = check_syntax(tree, source_languages())

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda _: check_syntax(tree, source_languages()), range(64)))

    assert expected == [Evidence("missing `;`", "A.java", 7, 25, Severity.FAILURE)]
    assert all(result == expected for result in results)


def test_a_dockerfile_without_a_final_newline_parses() -> None:
    # Seen in a real repository: the engine builds it, so tier 1 must not call it broken.
    source = b'FROM node:22-alpine3.22 AS base\nCMD ["/start.sh"]'
    assert check_syntax(_modified({"apps/web/Dockerfile": source}), source_languages()) == []


def test_a_source_parsed_lately_on_a_thread_gets_its_tree_again() -> None:
    java = language_of("A.java", source_languages())
    assert java is not None
    tree = parse(java, VALID_JAVA)
    assert parse(java, VALID_JAVA) is tree
    assert parse(java, VALID_JAVA + b"\n") is not tree  # another content, another tree
    with ThreadPoolExecutor(max_workers=1) as pool:  # each thread parses for itself
        assert pool.submit(parse, java, VALID_JAVA).result() is not tree
    large = b"class A {}\n" * (_KEPT_SOURCE_BYTES // 40)
    assert parse(java, large) is not parse(java, large)  # too large to keep
    for n in range(2 * _KEPT_SOURCE_BYTES // (len(large) // 2)):  # newer ones push it out
        parse(java, large[: len(large) // 2] + b"// %d\n" % n)
    assert parse(java, VALID_JAVA) is not tree
