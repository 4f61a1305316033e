"""Dockerfiles, as tree-sitter parses them: which files of a tree are Dockerfiles by
their names, and the grammar, which wants every instruction to end its line."""

from __future__ import annotations

import warnings

import tree_sitter_dockerfile
from tree_sitter import Language

from migration_evals.oracles.syntax import SourceLanguage

__all__ = ["DOCKERFILE_LANGUAGE"]

_NAMES = frozenset({"Dockerfile", "Containerfile"})


def _is_dockerfile(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    if name.endswith(".dockerignore"):
        return False  # a Dockerfile's own ignore file (Dockerfile.dockerignore) is no Dockerfile
    return (
        name in _NAMES
        or name.startswith("Dockerfile.")
        or name.endswith((".Dockerfile", ".dockerfile"))
    )


def _grammar() -> Language:
    # tree-sitter-dockerfile 0.2 still hands out a bare int pointer, which Language()
    # accepts with a DeprecationWarning; silence exactly that one, here only.
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="int argument support is deprecated", category=DeprecationWarning
        )
        return Language(tree_sitter_dockerfile.language())


def _ended(source: bytes) -> bytes:
    """The engine builds a file whose last line has no newline; the grammar wants one."""
    return source + b"\n" if source and not source.endswith(b"\n") else source


DOCKERFILE_LANGUAGE = SourceLanguage("dockerfile", _is_dockerfile, _grammar, _ended)
