"""Go, as tree-sitter parses it: the ``.go`` files of a tree."""

from __future__ import annotations

import tree_sitter_go
from tree_sitter import Language

from migration_evals.oracles.syntax import SourceLanguage

__all__ = ["GO_LANGUAGE"]


def _is_go(path: str) -> bool:
    return path.rsplit("/", 1)[-1].endswith(".go")


GO_LANGUAGE = SourceLanguage("go", _is_go, lambda: Language(tree_sitter_go.language()))
