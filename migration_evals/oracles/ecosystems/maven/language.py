"""Java, as tree-sitter parses it: the ``.java`` files of a tree, and the node types of
its type declarations and of the bodies that hold their members."""

from __future__ import annotations

import tree_sitter_java
from tree_sitter import Language

from migration_evals.oracles.syntax import SourceLanguage

__all__ = ["JAVA_LANGUAGE", "JAVA_TYPE_BODIES", "JAVA_TYPE_DECLARATIONS"]


def _is_java(path: str) -> bool:
    return path.rsplit("/", 1)[-1].endswith(".java")


JAVA_LANGUAGE = SourceLanguage("java", _is_java, lambda: Language(tree_sitter_java.language()))

# tree-sitter-java's node types of a type declaration and of the bodies that hold members.
JAVA_TYPE_DECLARATIONS = frozenset(
    {
        "class_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
        "annotation_type_declaration",
    }
)
JAVA_TYPE_BODIES = frozenset(
    {"class_body", "interface_body", "enum_body", "enum_body_declarations", "annotation_type_body"}
)
