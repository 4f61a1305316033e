"""The ``go-imports`` contract: touched Go files no longer import the recipe's old paths.

Rules come from the recipe (``contract.rewrites``: ``{old, new: [...]}``), narrowed to the
old paths a changeset lists in ``params["rewrites"]``. For every Go file the patch touches
and leaves behind:

* an import of an old path (plain, aliased, dot or blank) is evidence at its line;
* a file that imported an old path at base, dropped it, and still selects members of that
  package's name (``ioutil.ReadFile``) with no import now providing the name is evidence:
  the rewrite stopped half-way and cannot compile.

A patch whose touched Go files imported none of the old paths at base rewrote nothing,
which is evidence too. Imports are read with tree-sitter, so comments and strings that
merely mention a path do not count. What the rewrite does not explain (a new ``init``, a
re-exec of the test binary, a check for running under test) is the recipe's
``contract.outside``, checked beside this one (``migration_evals.oracles.ecosystems.go.outside``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tree_sitter import Node, Query, QueryCursor

from migration_evals.core.model import Evidence, Severity
from migration_evals.core.specs import Recipe
from migration_evals.oracles.ecosystems.go.language import GO_LANGUAGE
from migration_evals.oracles.syntax import load_language, parse
from migration_evals.oracles.tree import FileChange, TreeView

__all__ = ["GoImport", "check_go_imports", "go_imports", "import_paths"]

# Package members used through a package name: calls, values and types.
_SELECTORS = """
(selector_expression operand: (identifier) @package field: (field_identifier) @member)
(qualified_type package: (package_identifier) @package name: (type_identifier) @member)
"""


@dataclass(frozen=True, slots=True)
class _Rule:
    old: str
    new: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class GoImport:
    """One import spec of a Go file, at its 1-based line and column."""

    path: str
    alias: str | None  # "x", "." or "_" as written; None when the spec has no name
    line: int
    column: int

    @property
    def name(self) -> str | None:
        """The identifier this import binds in the file; None for dot and blank imports."""
        if self.alias in (".", "_"):
            return None
        return self.alias or _default_name(self.path)


def _default_name(path: str) -> str:
    """The usual package name of an import path: its last element, minus a /vN suffix."""
    parts = path.split("/")
    last = parts[-2] if len(parts) > 1 and re.fullmatch(r"v\d+", parts[-1]) else parts[-1]
    return last.split(".")[0]  # gopkg.in/yaml.v3 -> yaml


def _rules(recipe: Recipe, params: Mapping[str, Any]) -> list[_Rule]:
    declared = recipe.contract.required_setting("rewrites", list)
    rules = [_Rule(r["old"], tuple(r["new"])) for r in declared]
    wanted = params.get("rewrites")
    if wanted:
        rules = [rule for rule in rules if rule.old in wanted]
    return rules


def _import_of(spec: Node) -> GoImport | None:
    path = spec.child_by_field_name("path")
    name = spec.child_by_field_name("name")
    if spec.type != "import_spec" or path is None or path.text is None:
        return None  # a comment inside a group, or a spec broken by a syntax error
    alias = name.text.decode("utf-8", "replace") if name and name.text else None
    literal = path.text[1:-1].decode("utf-8", "replace")  # "io/ioutil" or `io/ioutil`
    row, column = spec.start_point
    return GoImport(literal, alias, row + 1, column + 1)


def go_imports(root: Node) -> list[GoImport]:
    """The import specs of a parsed Go file, in order."""
    specs: list[Node] = []
    for declaration in root.children:
        if declaration.type != "import_declaration":
            continue
        for child in declaration.named_children:  # a single spec, or a parenthesised group
            specs += [child] if child.type == "import_spec" else child.named_children
    return [imp for imp in map(_import_of, specs) if imp is not None]


def import_paths(root: Node) -> list[str]:
    """The paths a parsed Go file's import declarations name, in order."""
    return [imp.path for imp in go_imports(root)]


@functools.cache  # a Query is immutable once built; each use gets its own QueryCursor
def _selector_query() -> Query:
    return Query(load_language(GO_LANGUAGE), _SELECTORS)


def _members_used(root: Node, package: str) -> dict[str, int]:
    """``package.Member`` texts used in the file, each with the line of its first use."""
    used: dict[str, int] = {}
    for _pattern, captures in QueryCursor(_selector_query()).matches(root):
        owner, member = captures["package"][0], captures["member"][0]
        if owner.text is None or member.text is None or owner.text != package.encode():
            continue
        text = f"{package}.{member.text.decode('utf-8', 'replace')}"
        line = owner.start_point.row + 1
        used[text] = min(used.get(text, line), line)
    return dict(sorted(used.items(), key=lambda item: item[1]))


def _leftover_imports(
    path: str, imports: Iterable[GoImport], rules: Sequence[_Rule]
) -> list[Evidence]:
    by_old = {rule.old: rule for rule in rules}
    return [
        Evidence(
            f"still imports {imp.path}; use {' or '.join(by_old[imp.path].new)}",
            path,
            imp.line,
            imp.column,
            Severity.FAILURE,
        )
        for imp in imports
        if imp.path in by_old
    ]


def _dangling_uses(
    path: str, root: Node, imports: Sequence[GoImport], dropped: Iterable[GoImport]
) -> list[Evidence]:
    """Members of a dropped package still used under its old name, which nothing binds."""
    bound = {imp.name for imp in imports}
    evidence: list[Evidence] = []
    for old in dropped:
        if old.name is None or old.name in bound:
            continue  # a dot import hides its uses; a rebound name (pkg/errors -> errors) is fine
        for text, line in _members_used(root, old.name).items():
            message = f"uses {text} but no longer imports {old.path}"
            evidence.append(Evidence(message, path, line, severity=Severity.FAILURE))
    return evidence


def _base_imports(tree: TreeView, change: FileChange, olds: set[str]) -> list[GoImport]:
    source = tree.read_base(change.old_path) if change.old_path else None
    if source is None:
        return []
    return [imp for imp in go_imports(parse(GO_LANGUAGE, source).root_node) if imp.path in olds]


def check_go_imports(recipe: Recipe, params: Mapping[str, Any], tree: TreeView) -> list[Evidence]:
    """Evidence against the touched Go files having moved off the old import paths."""
    rules = _rules(recipe, params)
    olds = {rule.old for rule in rules}
    evidence: list[Evidence] = []
    rewrote_any = False
    for change in tree.changes:
        if not GO_LANGUAGE.claims(change.path):
            continue
        at_base = _base_imports(tree, change, olds)
        rewrote_any = rewrote_any or bool(at_base)
        path = change.new_path
        source = tree.read(path) if path else None
        if path is None or source is None:
            continue  # deleted: nothing left to import anything
        root = parse(GO_LANGUAGE, source).root_node
        imports = go_imports(root)
        still = {imp.path for imp in imports}
        evidence += _leftover_imports(path, imports, rules)
        dropped = [imp for imp in at_base if imp.path not in still]
        evidence += _dangling_uses(path, root, imports, dropped)
    if not rewrote_any:
        listed = ", ".join(rule.old for rule in rules)
        message = f"the patch rewrites none of the listed imports ({listed})"
        evidence.append(Evidence(message, severity=Severity.FAILURE))
    return evidence
