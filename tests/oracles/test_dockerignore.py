"""Docker's build context: the ignore file read, matched and walked as Docker does.

The expectations are Docker's own: the classic CLI with engine 20.10 sends, for the tree
of ``test_a_context_matches_what_docker_sends``, exactly the files listed there.
"""

from __future__ import annotations

import pytest

from migration_evals.oracles.dockerignore import (
    IgnoreFileError,
    IgnoreRules,
    build_context,
    read_patterns,
    source_covers,
)
from migration_evals.oracles.workspace import tree_hash

TREE = [
    ".dockerignore",
    "Dockerfile",
    "Keep/k.txt",
    "README.md",
    "a/b.txt",
    "a/node_modules/j.js",
    "docs/a.md",
    "docs/deep/b.md",
    "nginx.conf",
    "node_modules/pkg/i.js",
    "readme.md",
    "site/index.html",
    "site/keep.html",
    "site/sub/x.html",
    "we[ird].txt",
    "x.log",
    "y.LOG",
]

IGNORE = b"""# comment
 # indented is a pattern
site
!site/keep.html
**/*.md
!docs/deep/b.md
/node_modules/
**/node_modules
*.log
README.MD
Dockerfile
a/*
!a/b.txt
[K]eep
we\\[ird\\].txt
"""


def _sent(ignore: bytes, tree: list[str] = TREE, dockerfile: str = "Dockerfile") -> list[str]:
    context = build_context(dockerfile, ".", {".dockerignore": ignore}.get)
    return [path for path in tree if context.sends(path)]


def test_a_context_matches_what_docker_sends() -> None:
    # The Dockerfile and .dockerignore always go (the engine drops an excluded Dockerfile
    # from what COPY sees); an exception takes back one file of an excluded folder.
    assert _sent(IGNORE) == [
        ".dockerignore",
        "Dockerfile",
        "a/b.txt",
        "docs/deep/b.md",
        "nginx.conf",
        "site/keep.html",
        "y.LOG",
    ]


def test_matching_is_case_sensitive_and_one_level_unless_doubled() -> None:
    # The docker SDK lowercases both sides; Docker does not.
    assert _sent(b"INDEX.HTML\n*.html\n", ["index.html", "INDEX.HTML", "site/index.html"]) == [
        "site/index.html"
    ]
    assert _sent(b"**/*.html\n", ["index.html", "site/a/b.html", "site/a/b.css"]) == [
        "site/a/b.css"
    ]


@pytest.mark.parametrize(
    ("ignore", "expected"),
    [
        (b"/site/\n", ["docs/site/page"]),  # leading and trailing slashes do not matter
        (b"site/**\n", ["site", "docs/site/page"]),  # everything below, not the name itself
        (b"**\n", []),
        (b".\n", ["site", "site/page", "docs/site/page"]),  # "." is ignored
        (b"s?te\n", ["docs/site/page"]),
        (b"[^s]*\n", ["site", "site/page"]),  # a negated class, as RE2 reads it
        (b"docs/../site\n", ["docs/site/page"]),  # cleaned as Go's filepath.Clean
        (b"\xef\xbb\xbfsite\n", ["docs/site/page"]),  # a BOM opening the file is dropped
    ],
)
def test_pattern_forms(ignore: bytes, expected: list[str]) -> None:
    assert _sent(ignore, ["site", "site/page", "docs/site/page"], dockerfile="x") == expected


def test_an_excluded_folder_is_left_whole_unless_an_exception_reaches_into_it() -> None:
    tree = ["site/index.html", "site/deep/index.html", "site/a.css"]
    # A plain exception names one file: the folder is walked for it alone.
    assert _sent(b"site\n!site/deep/index.html\n", tree) == ["site/deep/index.html"]
    # An exception with a wildcard may take back a file at any depth: every folder is
    # walked (BuildKit's rule).
    assert _sent(b"site\n!**/index.html\n", tree) == ["site/index.html", "site/deep/index.html"]
    # The last pattern that matches decides.
    assert _sent(b"!site/a.css\nsite\n", tree) == []


def test_comments_blank_lines_and_exceptions_are_read_as_moby_reads_them() -> None:
    text = b"# c\n\n  /a/b/  \n! /c\n #d\n"
    assert read_patterns(text) == ["a/b", "!c", "#d"]


@pytest.mark.parametrize("ignore", [b"!\n", b"a\\\n", b"[a\n"])
def test_an_ignore_file_docker_refuses_is_an_error(ignore: bytes) -> None:
    with pytest.raises(IgnoreFileError):
        IgnoreRules.parse(ignore)


def test_a_dockerfiles_own_ignore_file_wins_over_the_contexts() -> None:
    files = {
        "web/.dockerignore": b"*.conf\n",
        "web/app.Dockerfile.dockerignore": b"site\n",
        ".dockerignore": b"*\n",  # above the context: not Docker's concern
    }
    context = build_context("web/app.Dockerfile", "web", files.get)
    assert context.ignore_file == "web/app.Dockerfile.dockerignore"
    assert [p for p in ("site/a", "x.conf") if context.sends(p)] == ["x.conf"]
    shared = build_context("web/Dockerfile", "web", files.get)
    assert shared.ignore_file == "web/.dockerignore"
    assert [p for p in ("site/a", "x.conf") if shared.sends(p)] == ["site/a"]


def test_the_key_is_the_trees_without_an_ignore_file_and_follows_the_file_with_one() -> None:
    hashed = tree_hash("abc", None)
    assert build_context("Dockerfile", ".", {}.get).tree_hash(hashed) == hashed
    keys = {
        build_context("Dockerfile", ".", {".dockerignore": text}.get).tree_hash(hashed)
        for text in (b"site\n", b"site/index.html\n")
    }
    assert len(keys) == 2 and hashed not in keys


@pytest.mark.parametrize(
    ("source", "path", "covered"),
    [
        (".", "any/file", True),
        ("nginx.conf", "nginx.conf", True),
        ("nginx.conf", "conf/nginx.conf", False),
        ("site", "site/deep/index.html", True),
        ("*.conf", "nginx.conf", True),
        ("*.conf", "conf.d/nginx.conf", False),
        ("conf*", "conf.d/nginx.conf", True),
        ("site/index.html", "site/other.html", False),
    ],
)
def test_a_copy_source_covers_its_files_and_folders(source: str, path: str, covered: bool) -> None:
    assert source_covers(source, path) is covered
