"""Tier 1 syntax check: every touched Java, Go or Dockerfile source must parse.

A pure function over a ``TreeView``: each file the diff leaves behind is parsed with
tree-sitter and every ERROR and MISSING node becomes a piece of evidence pinned to its
1-based line and column. tree-sitter recovers from errors, so one parse reports every
broken spot, not just the first.

Parsers are not thread-safe, so each thread keeps its own, one per language; the
``Language`` objects are immutable and shared.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Iterator

import tree_sitter_dockerfile
import tree_sitter_go
import tree_sitter_java
from tree_sitter import Language, Node, Parser, Tree

from migration_evals.core.model import Evidence, Severity
from migration_evals.oracles.tree import TreeView

__all__ = [
    "JAVA_TYPE_BODIES",
    "JAVA_TYPE_DECLARATIONS",
    "check_syntax",
    "descendants",
    "language_of",
    "load_language",
    "parse",
]

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

_SNIPPET_CHARS = 40

_DOCKERFILE_NAMES = frozenset({"Dockerfile", "Containerfile"})


def language_of(path: str) -> str | None:
    """The tree-sitter language a repository path is written in, or None if not checked."""
    name = path.rsplit("/", 1)[-1]
    if name.endswith(".java"):
        return "java"
    if name.endswith(".go"):
        return "go"
    if name.endswith(".dockerignore"):
        return None  # a Dockerfile's own ignore file (Dockerfile.dockerignore) is no Dockerfile
    if (
        name in _DOCKERFILE_NAMES
        or name.startswith("Dockerfile.")
        or name.endswith((".Dockerfile", ".dockerfile"))
    ):
        return "dockerfile"
    return None


def _dockerfile_language() -> Language:
    # tree-sitter-dockerfile 0.2 still hands out a bare int pointer, which Language()
    # accepts with a DeprecationWarning; silence exactly that one, here only.
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="int argument support is deprecated", category=DeprecationWarning
        )
        return Language(tree_sitter_dockerfile.language())


_LANGUAGE_FACTORIES: dict[str, Callable[[], Language]] = {
    "java": lambda: Language(tree_sitter_java.language()),
    "go": lambda: Language(tree_sitter_go.language()),
    "dockerfile": _dockerfile_language,
}
_languages: dict[str, Language] = {}
# catch_warnings swaps process-wide state: build each language once, under a lock, so
# that window is tiny and never overlaps itself.
_languages_lock = threading.Lock()
_local = threading.local()


def load_language(name: str) -> Language:
    """The shared tree-sitter ``Language`` for a name ``language_of`` returns (for queries)."""
    found = _languages.get(name)
    if found is None:
        with _languages_lock:
            found = _languages.get(name)
            if found is None:
                found = _languages[name] = _LANGUAGE_FACTORIES[name]()
    return found


def _parser(name: str) -> Parser:
    parsers: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    parser = parsers.get(name)
    if parser is None:
        parser = parsers[name] = Parser(load_language(name))
    return parser


def parse(language: str, source: bytes) -> Tree:
    """Parse ``source`` (any bytes, UTF-8 or not) with this thread's parser for ``language``.

    Raises ``KeyError`` for a language other than those ``language_of`` returns.
    """
    if language == "dockerfile" and source and not source.endswith(b"\n"):
        # The Dockerfile grammar wants every instruction to end its line; the engine does
        # not, and a file whose last line has no newline builds. Byte offsets are unchanged.
        source += b"\n"
    return _parser(language).parse(source)


def _error_nodes(root: Node) -> Iterator[Node]:
    """ERROR and MISSING nodes in document order, visiting only subtrees that hold one."""
    stack = [root]
    while stack:
        node = stack.pop()
        if not node.has_error:
            continue
        if node.is_error or node.is_missing:
            yield node
            continue  # one report per broken spot; its insides add only noise
        stack.extend(reversed(node.children))


def _column(source: bytes, byte: int) -> int:
    """1-based column in characters (tree-sitter counts bytes), invalid UTF-8 tolerated."""
    line_start = source.rfind(b"\n", 0, byte) + 1
    return len(source[line_start:byte].decode("utf-8", "replace")) + 1


def _snippet(source: bytes, node: Node) -> str:
    # An ERROR node can span the rest of the file; only its start is worth decoding.
    end = min(node.end_byte, node.start_byte + 4 * _SNIPPET_CHARS)
    text = " ".join(source[node.start_byte : end].decode("utf-8", "replace").split())
    if len(text) > _SNIPPET_CHARS:
        text = text[: _SNIPPET_CHARS - 1] + "…"
    return text.replace("`", "'")


def _describe(source: bytes, node: Node) -> str:
    if node.is_missing:
        return f"missing `{node.type}`" if not node.is_named else f"missing {node.type}"
    snippet = _snippet(source, node)
    return f"syntax error near `{snippet}`" if snippet else "syntax error"


def _check_file(path: str, language: str, source: bytes, max_per_file: int) -> list[Evidence]:
    evidence: list[Evidence] = []
    for node in _error_nodes(parse(language, source).root_node):
        if len(evidence) == max_per_file:
            message = f"more syntax errors after the first {max_per_file} are not shown"
            evidence.append(Evidence(message, path, severity=Severity.FAILURE))
            break
        line = node.start_point.row + 1
        column = _column(source, node.start_byte)
        evidence.append(
            Evidence(_describe(source, node), path, line, column, severity=Severity.FAILURE)
        )
    return evidence


def check_syntax(tree: TreeView, *, max_per_file: int = 20) -> list[Evidence]:
    """Evidence for every syntax error in the files the patch adds or modifies.

    At most ``max_per_file`` errors per file are listed, plus one line saying more exist.
    """
    evidence: list[Evidence] = []
    seen: set[str] = set()
    for change in tree.changes:
        path = change.new_path
        if path is None or path in seen:
            continue
        seen.add(path)
        language = language_of(path)
        source = tree.read(path) if language else None
        if language is None or source is None:
            continue
        evidence.extend(_check_file(path, language, source, max_per_file))
    return evidence


def descendants(node: Node) -> Iterator[Node]:
    """``node`` and every node below it, in source order (depth first), without recursion:
    a hostile file's nesting cannot exhaust the stack."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))
