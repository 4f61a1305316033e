"""Tier 1 syntax check: every touched source in a language an ecosystem parses must parse.

A pure function over a ``TreeView``: each file the diff leaves behind whose path a
``SourceLanguage`` claims (each ecosystem names its own, ``Ecosystem.languages``: Java,
Go, Dockerfiles) is parsed with tree-sitter and every ERROR and MISSING node becomes a
piece of evidence pinned to its 1-based line and column. tree-sitter recovers from
errors, so one parse reports every broken spot, not just the first.

Parsers are not thread-safe, so each thread keeps its own, one per language; the
``Language`` objects are immutable and shared.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from tree_sitter import Language, Node, Parser, Tree

from migration_evals.core.model import Evidence, Severity
from migration_evals.oracles.tree import TreeView

__all__ = [
    "SourceLanguage",
    "check_syntax",
    "descendants",
    "language_of",
    "load_language",
    "parse",
]

_SNIPPET_CHARS = 40


def _as_written(source: bytes) -> bytes:
    return source


@dataclass(frozen=True, slots=True)
class SourceLanguage:
    """A language whose sources are parsed: its name, which repository paths are written in
    it, its tree-sitter grammar (built once, then shared) and what a source needs before
    the grammar reads it (byte offsets unchanged)."""

    name: str
    claims: Callable[[str], bool]
    grammar: Callable[[], Language]
    prepared: Callable[[bytes], bytes] = _as_written


def language_of(path: str, languages: Iterable[SourceLanguage]) -> SourceLanguage | None:
    """The language of ``languages`` a repository path is written in, or None."""
    return next((each for each in languages if each.claims(path)), None)


_languages: dict[str, Language] = {}
# A grammar may swap process-wide state while it is built (warnings): build each one
# once, under a lock, so that window is tiny and never overlaps itself.
_languages_lock = threading.Lock()
_local = threading.local()


def load_language(language: SourceLanguage) -> Language:
    """The shared tree-sitter ``Language`` of ``language`` (for queries)."""
    found = _languages.get(language.name)
    if found is None:
        with _languages_lock:
            found = _languages.get(language.name)
            if found is None:
                found = _languages[language.name] = language.grammar()
    return found


def _parser(language: SourceLanguage) -> Parser:
    parsers: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    parser = parsers.get(language.name)
    if parser is None:
        parser = parsers[language.name] = Parser(load_language(language))
    return parser


# The checks of a trial parse the same files more than once (tier 1 the patched ones,
# the tests tier both sides of them), and every trial on a base commit its files: a
# thread keeps the trees of the sources it parsed last, by content, up to this many bytes
# of source. A tree is only read, never edited, so callers on one thread can share it.
_KEPT_SOURCE_BYTES = 1024 * 1024


class _Trees:
    """One thread's parsed trees by (language, source), the least recently used dropped."""

    def __init__(self) -> None:
        self.trees: dict[tuple[str, bytes], Tree] = {}
        self.size = 0

    def get(self, key: tuple[str, bytes]) -> Tree | None:
        found = self.trees.pop(key, None)
        if found is not None:
            self.trees[key] = found  # the most recently used go last
        return found

    def put(self, key: tuple[str, bytes], tree: Tree) -> None:
        if len(key[1]) > _KEPT_SOURCE_BYTES // 4:
            return  # a large file would push out many small ones
        self.trees[key] = tree
        self.size += len(key[1])
        while self.size > _KEPT_SOURCE_BYTES:
            oldest = next(iter(self.trees))
            del self.trees[oldest]
            self.size -= len(oldest[1])


def parse(language: SourceLanguage, source: bytes) -> Tree:
    """Parse ``source`` (any bytes, UTF-8 or not) with this thread's parser for
    ``language``; a source this thread parsed lately gets the same tree again."""
    trees: _Trees | None = getattr(_local, "trees", None)
    if trees is None:
        trees = _local.trees = _Trees()
    key = (language.name, source)
    found = trees.get(key)
    if found is None:
        found = _parser(language).parse(language.prepared(source))
        trees.put(key, found)
    return found


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


def _check_file(
    path: str, language: SourceLanguage, source: bytes, max_per_file: int
) -> list[Evidence]:
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


def check_syntax(
    tree: TreeView, languages: Sequence[SourceLanguage], *, max_per_file: int = 20
) -> list[Evidence]:
    """Evidence for every syntax error in the files the patch adds or modifies, in the
    ``languages`` that claim them.

    At most ``max_per_file`` errors per file are listed, plus one line saying more exist.
    """
    evidence: list[Evidence] = []
    seen: set[str] = set()
    for change in tree.changes:
        path = change.new_path
        if path is None or path in seen:
            continue
        seen.add(path)
        language = language_of(path, languages)
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
