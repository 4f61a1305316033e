"""Java 17 syntax a recipe declares syntax-only, written the same way as its Java 8 form.

A test edit that spells a local declaration with ``var`` or a constructor call with the
diamond changes no assertion, yet token by token it differs from the base. The test-edit
classifier therefore reads Java through ``canonical``: the tokens of a parse tree with
each form the recipe declares (``test_policy.syntax``) and its Java 8 equivalent written
alike:

* ``var``: the declared type of a local variable with one declarator (also of an
  enhanced ``for`` and a try resource) is a *slot*, a marker token with the type beside
  it;
* ``diamond``: the type arguments of a ``new`` expression are a slot;
* ``text-block``: a string constant (a literal, a text block, a ``+`` of them) is one
  token holding its value, so a text block equals the concatenation it replaces;
* ``switch-expression``: a switch statement whose groups do not fall through and one of
  arrow rules are both written as rules with blocks (an unlabelled closing ``break``
  dropped); ``return switch`` as a switch whose rules return (``yield`` as ``return``);
* ``instanceof-pattern``: ``if (x instanceof T) { T v = (T) x; ... }`` as
  ``if (x instanceof T v) { ... }``;
* ``enhanced-for``: an iterator loop, or an index loop over an array or a list, whose
  body starts by taking the element (and uses neither the iterator nor the index again),
  as the enhanced ``for`` it spells out.

Each rewrite of the last four keeps behaviour, so both sides are written that way. The
slots are not symmetric: ``slot_forms`` pairs them and accepts a type dropped for
``var`` (unless the initializer is a literal of another type: ``long n = 1`` is not
``var n = 1``) and type arguments dropped for the diamond; any other difference, a
different initializer or a changed literal, is left in the tokens and fails the
comparison. A form the recipe does not declare is compared token by token.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from tree_sitter import Node

from migration_evals.oracles.sources import Canonical, Slot
from migration_evals.oracles.syntax import descendants

__all__ = [
    "SYNTAX_FORMS",
    "Canonical",
    "Slot",
    "canonical",
    "is_slot",
    "slot_forms",
    "string_value",
]

SYNTAX_FORMS = (
    "var",
    "diamond",
    "text-block",
    "switch-expression",
    "instanceof-pattern",
    "enhanced-for",
)
_TYPE = "\x00type"  # marker tokens: no source token holds a NUL
_ARGUMENTS = "\x00type-arguments"
_ATOMIC = frozenset({"string_literal", "character_literal", "text_block"})
_JUMPS = frozenset(
    {
        "break_statement",
        "continue_statement",
        "return_statement",
        "throw_statement",
        "yield_statement",
    }
)
_STATEMENT_PARENTS = frozenset(
    {
        "block",
        "switch_block_statement_group",
        "switch_rule",
        "labeled_statement",
        "if_statement",
        "while_statement",
        "do_statement",
        "for_statement",
        "enhanced_for_statement",
        "constructor_body",
    }
)
_INTEGER = re.compile(r"^(0[xX][0-9a-fA-F_]+|0[bB][01_]+|[0-9][0-9_]*)([lL]?)$")
_LITERAL_TYPES = {"character_literal": "char", "true": "boolean", "false": "boolean"}


@dataclass(frozen=True, slots=True)
class _Token:
    text: str
    line: int


@dataclass(frozen=True, slots=True)
class _SlotItem:
    slot: Slot
    line: int


_Item = Node | _Token | _SlotItem


def _text(node: Node | None) -> str:
    return (node.text or b"").decode("utf-8", "replace") if node is not None else ""


def _line(node: Node) -> int:
    return node.start_point.row + 1


def _is_comment(node: Node) -> bool:
    return node.type == "comment" or node.type.endswith("_comment")


def _leaves(node: Node) -> tuple[str, ...]:
    found: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if _is_comment(current):
            continue
        if current.type in _ATOMIC or current.child_count == 0:
            found.append(_text(current))
            continue
        stack.extend(reversed(current.children))
    return tuple(found)


def _statements(block: Node) -> list[Node]:
    return [child for child in block.named_children if not _is_comment(child)]


def _mentions(nodes: Iterable[Node], name: str) -> bool:
    for node in nodes:
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type == "identifier" and _text(current) == name:
                return True
            stack.extend(current.children)
    return False


# -- string constants ------------------------------------------------------------------

_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", "s": " "}
_ESCAPE = re.compile(r"\\(u+[0-9a-fA-F]{4}|[0-3][0-7]{0,2}|[4-7][0-7]?|\r\n|.|\n)", re.DOTALL)


def _unescape(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        code = match[1]
        if code[0] == "u":
            return chr(int(code.lstrip("u"), 16))
        if code[0] in "01234567":
            return chr(int(code, 8))
        if code in ("\n", "\r\n"):
            return ""  # a text block's line continuation
        return _ESCAPES.get(code, code)

    return _ESCAPE.sub(one, text)


def _strip_indent(content: str) -> str:
    """A text block's content with its incidental white space removed (JLS 3.10.6)."""
    lines = content.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    last_blank = not lines[-1].strip()
    measured = [line for line in lines if line.strip()] + ([lines[-1]] if last_blank else [])
    indent = min((len(line) - len(line.lstrip()) for line in measured), default=0)
    kept = [line[indent:].rstrip() if line.strip() else "" for line in lines]
    return "\n".join(kept)


def string_value(literal: str) -> str | None:
    """The value of a Java string literal or text block, as written in source."""
    if literal.startswith('"""') and literal.endswith('"""') and len(literal) >= 6:
        body = literal[3:-3]
        opening, newline, rest = body.partition("\n")
        if not newline or opening.strip():
            return None
        return _unescape(_strip_indent(rest))
    if len(literal) >= 2 and literal[0] == literal[-1] == '"':
        return _unescape(literal[1:-1])
    return None


def _constant(node: Node) -> str | None:
    """The value of a string literal, or of a ``+`` of string literals only."""
    parts: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "parenthesized_expression" and current.named_child_count == 1:
            stack.append(current.named_children[0])
        elif (
            current.type == "binary_expression"
            and _text(current.child_by_field_name("operator")) == "+"
        ):
            left, right = current.child_by_field_name("left"), current.child_by_field_name("right")
            if left is None or right is None:
                return None
            stack += [right, left]
        elif current.type == "string_literal":
            value = string_value(_text(current))
            if value is None:
                return None
            parts.append(value)
        else:
            return None
    return "".join(parts)


def _literal_type(value: Node | None) -> str | None:
    """The type of a literal initializer (``-1L``: long), or None if not a literal."""
    while value is not None and value.type == "unary_expression":
        if _text(value.child_by_field_name("operator")) not in ("-", "+"):
            return None
        value = value.child_by_field_name("operand")
    if value is None:
        return None
    text = _text(value)
    if value.type.endswith("_integer_literal"):
        found = _INTEGER.match(text)
        return "long" if found and found[2] else "int"
    if value.type.endswith("_floating_point_literal"):
        return "float" if text[-1] in "fF" else "double"
    if value.type == "string_literal":
        return "String"
    return _LITERAL_TYPES.get(value.type)


# -- the lowering ----------------------------------------------------------------------


class _Lowering:
    """Writes nodes as tokens, each declared form and its Java 8 equivalent alike."""

    def __init__(self, forms: frozenset[str], out: Canonical) -> None:
        self.forms = forms
        self.out = out
        self.returning: set[int] = set()  # yields that become returns (return switch)

    def run(self, nodes: Sequence[Node]) -> None:
        stack: list[_Item] = list(reversed(nodes))
        while stack:
            item = stack.pop()
            if isinstance(item, _Token):
                self.out.tokens.append(item.text)
                self.out.lines.append(item.line)
            elif isinstance(item, _SlotItem):
                self.out.tokens.append(item.slot.marker)
                self.out.lines.append(item.line)
                self.out.slots.append(item.slot)
            elif not _is_comment(item):
                lowered = self._lower(item)
                if lowered is not None:
                    stack.extend(reversed(lowered))
                elif item.type in _ATOMIC or item.child_count == 0:
                    self.out.tokens.append(_text(item))
                    self.out.lines.append(_line(item))
                else:
                    stack.extend(reversed(item.children))

    def _lower(self, node: Node) -> list[_Item] | None:
        self._count(node)
        handler = _HANDLERS.get(node.type)
        return handler(self, node) if handler is not None else None

    def _count(self, node: Node) -> None:
        kind = node.type
        if kind == "string_literal" and _text(node).startswith('"""'):
            self.out.forms["text-block"] += 1
        elif kind == "instanceof_expression" and node.child_by_field_name("name") is not None:
            self.out.forms["instanceof-pattern"] += 1
        elif kind == "enhanced_for_statement":
            self.out.forms["enhanced-for"] += 1
        elif kind == "switch_expression" and (
            any(c.type == "switch_rule" for c in _switch_entries(node))
            or node.parent is None
            or node.parent.type not in _STATEMENT_PARENTS
        ):
            self.out.forms["switch-expression"] += 1

    # var: the declared type of a local is a slot
    def typed(self, node: Node) -> list[_Item] | None:
        if "var" not in self.forms:
            return None
        kind = node.child_by_field_name("type")
        declarators = node.children_by_field_name("declarator")
        if kind is None or (node.type == "local_variable_declaration" and len(declarators) != 1):
            return None
        value = declarators[0].child_by_field_name("value") if declarators else None
        slot = Slot(_TYPE, _leaves(kind), _literal_type(value))
        return [_SlotItem(slot, _line(kind)) if c.id == kind.id else c for c in node.children]

    # diamond: the type arguments of a new expression are a slot
    def created(self, node: Node) -> list[_Item] | None:
        kind = node.child_by_field_name("type")
        if "diamond" not in self.forms or kind is None or kind.type != "generic_type":
            return None
        raw, arguments = kind.named_children[0], kind.named_children[-1]
        if arguments.type != "type_arguments":
            return None
        inner = _leaves(arguments)[1:-1]
        line = _line(arguments)
        generic: list[_Item] = [
            raw,
            _Token("<", line),
            _SlotItem(Slot(_ARGUMENTS, inner), line),
            _Token(">", line),
        ]
        return [item for c in node.children for item in (generic if c.id == kind.id else [c])]

    # text blocks: a string constant is its value
    def constant(self, node: Node) -> list[_Item] | None:
        if "text-block" not in self.forms:
            return None
        value = _constant(node)
        if value is None:
            return None
        if node.type == "binary_expression":
            for inner in descendants(node):
                if inner.type == "string_literal":
                    self._count(inner)
        return [_Token(json.dumps(value, ensure_ascii=False), _line(node))]

    # instanceof patterns: a cast that opens the branch is the pattern's variable
    def branch(self, node: Node) -> list[_Item] | None:
        if "instanceof-pattern" not in self.forms:
            return None
        found = _cast_branch(node)
        if found is None:
            return None
        subject, kind, name, rest = found
        line = _line(node)
        items: list[_Item] = [_Token("if", line), _Token("(", line), subject]
        items += [_Token("instanceof", line), kind, _Token(name, line), _Token(")", line)]
        items += [_Token("{", line), *rest, _Token("}", line)]
        consequence = node.child_by_field_name("consequence")
        after = False
        for child in node.children:
            if after:
                items.append(child)
            after = after or (consequence is not None and child.id == consequence.id)
        return items

    # switch: statements of groups and of rules, and return switch, as rules with blocks
    def switched(self, node: Node) -> list[_Item] | None:
        parent = node.parent
        if "switch-expression" not in self.forms or parent is None:
            return None
        if parent.type not in _STATEMENT_PARENTS:
            return None
        return _switch_items(node, returning=False)

    def returned(self, node: Node) -> list[_Item] | None:
        value = node.named_children[0] if node.named_child_count else None
        if "switch-expression" not in self.forms or value is None:
            return None
        if value.type != "switch_expression":
            return None
        items = _switch_items(value, returning=True)
        if items is not None:
            self._count(value)
            self.returning.update(yielded.id for yielded in _own_yields(value))
        return items

    def yielded(self, node: Node) -> list[_Item] | None:
        if node.id not in self.returning:
            return None
        return [_Token("return", _line(node)), *node.children[1:]]

    # enhanced for: the loops it spells out
    def looped(self, node: Node) -> list[_Item] | None:
        if "enhanced-for" not in self.forms:
            return None
        found = _element_loop(node)
        if found is None:
            return None
        element, iterable, rest = found
        kind = element.child_by_field_name("type")
        declarator = element.child_by_field_name("declarator")
        if kind is None or declarator is None:
            return None
        line = _line(node)
        typed: _Item = kind
        if "var" in self.forms:
            typed = _SlotItem(Slot(_TYPE, _leaves(kind)), _line(kind))
        name = _text(declarator.child_by_field_name("name"))
        items: list[_Item] = [_Token("for", line), _Token("(", line), typed, _Token(name, line)]
        items += [_Token(":", line), iterable, _Token(")", line), _Token("{", line), *rest]
        return [*items, _Token("}", line)]


_HANDLERS: dict[str, Callable[[_Lowering, Node], list[_Item] | None]] = {
    "local_variable_declaration": _Lowering.typed,
    "enhanced_for_statement": _Lowering.typed,
    "resource": _Lowering.typed,
    "object_creation_expression": _Lowering.created,
    "string_literal": _Lowering.constant,
    "binary_expression": _Lowering.constant,
    "if_statement": _Lowering.branch,
    "switch_expression": _Lowering.switched,
    "return_statement": _Lowering.returned,
    "yield_statement": _Lowering.yielded,
    "for_statement": _Lowering.looped,
}


def _single_declarator(node: Node | None) -> Node | None:
    """The declarator of a local declaration with one and no modifiers, else None."""
    if node is None or node.type != "local_variable_declaration":
        return None
    if any(child.type == "modifiers" for child in node.children):
        return None
    declarators = node.children_by_field_name("declarator")
    return declarators[0] if len(declarators) == 1 else None


def _cast_branch(node: Node) -> tuple[Node, Node, str, list[Node]] | None:
    """``if (x instanceof T) { T v = (T) x; rest }``: x, T, v and rest."""
    condition = node.child_by_field_name("condition")
    consequence = node.child_by_field_name("consequence")
    if condition is None or condition.named_child_count != 1 or consequence is None:
        return None
    test = condition.named_children[0]
    if test.type != "instanceof_expression" or test.child_by_field_name("name") is not None:
        return None
    subject, kind = test.child_by_field_name("left"), test.child_by_field_name("right")
    if subject is None or kind is None or subject.type != "identifier":
        return None
    if consequence.type != "block" or not _statements(consequence):
        return None
    first, *rest = _statements(consequence)
    declarator = _single_declarator(first)
    if declarator is None or _leaves(first.child_by_field_name("type") or first) != _leaves(kind):
        return None
    cast = declarator.child_by_field_name("value")
    if cast is None or cast.type != "cast_expression":
        return None
    cast_type, cast_value = cast.child_by_field_name("type"), cast.child_by_field_name("value")
    if cast_type is None or cast_value is None or _leaves(cast_type) != _leaves(kind):
        return None
    if cast_value.type != "identifier" or _text(cast_value) != _text(subject):
        return None
    return subject, kind, _text(declarator.child_by_field_name("name")), rest


def _switch_entries(node: Node) -> list[Node]:
    body = node.child_by_field_name("body")
    return [c for c in body.named_children if not _is_comment(c)] if body is not None else []


def _labels(labels: Sequence[Node], line: int) -> list[_Item] | None:
    """``case a, b`` or ``default`` for a rule's labels; None for a mix or a guard."""
    cases: list[Node] = []
    default = False
    for label in labels:
        if any(child.type == "guard" for child in label.children):
            return None
        if label.children and label.children[0].type == "default":
            default = True
        else:
            cases += [c for c in label.named_children if not _is_comment(c)]
    if default:
        return [_Token("default", line)] if not cases else None
    items: list[_Item] = [_Token("case", line)]
    for i, case in enumerate(cases):
        items += [_Token(",", line), case] if i else [case]
    return items


def _rule_body(rule: Node, returning: bool) -> list[_Item]:
    body = rule.named_children[-1]
    if body.type == "block":
        return list(_statements(body))
    if returning and body.type == "expression_statement" and body.named_child_count:
        line = _line(body)
        return [_Token("return", line), body.named_children[0], _Token(";", line)]
    return [body]


def _group_body(statements: list[Node], last: bool) -> list[Node] | None:
    """A group's statements as a rule's block (None: it falls through)."""
    if len(statements) == 1 and statements[0].type == "block":
        statements = _statements(statements[0])
    if not statements:
        return [] if last else None
    final = statements[-1]
    if final.type == "break_statement" and final.named_child_count == 0:
        return statements[:-1]
    if final.type not in _JUMPS and not last:
        return None
    return statements


def _rules(node: Node, returning: bool) -> list[tuple[list[Node], list[_Item]]] | None:
    entries = _switch_entries(node)
    if entries and all(entry.type == "switch_rule" for entry in entries):
        return [
            ([c for c in rule.children if c.type == "switch_label"], _rule_body(rule, returning))
            for rule in entries
        ]
    if not entries or not all(entry.type == "switch_block_statement_group" for entry in entries):
        return None
    rules: list[tuple[list[Node], list[_Item]]] = []
    labels: list[Node] = []
    for i, group in enumerate(entries):
        labels += [c for c in group.children if c.type == "switch_label"]
        statements = [
            c for c in group.named_children if c.type != "switch_label" and not _is_comment(c)
        ]
        if not statements and i + 1 < len(entries):
            continue  # case a: case b: ... is one rule
        body = _group_body(statements, last=i + 1 == len(entries))
        if body is None:
            return None
        rules.append((labels, list(body)))
        labels = []
    return rules


def _switch_items(node: Node, returning: bool) -> list[_Item] | None:
    rules = _rules(node, returning)
    condition = node.child_by_field_name("condition")
    if rules is None or condition is None:
        return None
    line = _line(node)
    items: list[_Item] = [_Token("switch", line), condition, _Token("{", line)]
    for labels, body in rules:
        written = _labels(labels, _line(labels[0]) if labels else line)
        if written is None:
            return None
        items += [*written, _Token("->", line), _Token("{", line), *body, _Token("}", line)]
    return [*items, _Token("}", line)]


def _own_yields(node: Node) -> list[Node]:
    """The yields of a switch expression that are its own (not a nested switch's)."""
    found = []
    stack = list(node.children)
    while stack:
        current = stack.pop()
        if current.type == "yield_statement":
            found.append(current)
        if current.type not in ("switch_expression", "lambda_expression", "class_body"):
            stack.extend(current.children)
    return found


def _element_loop(node: Node) -> tuple[Node, Node, list[Node]] | None:
    """A ``for`` loop that walks an iterable: its element declaration, the iterable and
    the rest of its body; None for any other loop."""
    body = node.child_by_field_name("body")
    if body is None or body.type != "block" or not _statements(body):
        return None
    first, *rest = _statements(body)
    declarator = _single_declarator(first)
    taken = declarator.child_by_field_name("value") if declarator is not None else None
    if taken is None:
        return None
    iterable = _iterated(node, taken, rest)
    return (first, iterable, rest) if iterable is not None else None


def _iterated(node: Node, taken: Node, rest: list[Node]) -> Node | None:
    init = _single_declarator(node.child_by_field_name("init"))
    condition = node.child_by_field_name("condition")
    if init is None or condition is None:
        return None
    counter = _text(init.child_by_field_name("name"))
    start = init.child_by_field_name("value")
    if start is None or _mentions(rest, counter):
        return None
    if start.type == "method_invocation":
        return _iterator_loop(node, counter, start, condition, taken)
    return _index_loop(node, counter, start, condition, taken, rest=rest)


def _call(node: Node | None, owner: str | None, name: str, arguments: int = 0) -> bool:
    """Whether ``node`` is ``owner.name(...)`` with that many arguments."""
    if node is None or node.type != "method_invocation":
        return False
    found = node.child_by_field_name("object")
    args = node.child_by_field_name("arguments")
    count = args.named_child_count if args is not None else 0
    if owner is not None and (found is None or found.type != "identifier"):
        return False
    return (
        _text(node.child_by_field_name("name")) == name
        and (owner is None or _text(found) == owner)
        and count == arguments
    )


def _iterator_loop(
    node: Node, iterator: str, start: Node, condition: Node, taken: Node
) -> Node | None:
    """``for (Iterator<T> it = c.iterator(); it.hasNext();) { T x = it.next(); ...}``."""
    iterable = start.child_by_field_name("object")
    if node.child_by_field_name("update") is not None or iterable is None:
        return None
    if not _call(start, None, "iterator") or not _call(condition, iterator, "hasNext"):
        return None
    return iterable if _call(taken, iterator, "next") else None


def _index_loop(
    node: Node, index: str, start: Node, condition: Node, taken: Node, *, rest: list[Node]
) -> Node | None:
    """``for (int i = 0; i < a.length; i++) { T x = a[i]; ... }``, or over a list with
    ``size()`` and ``get(i)``."""
    if _text(start) != "0" or not _steps(node.children_by_field_name("update"), index):
        return None
    left, right = condition.child_by_field_name("left"), condition.child_by_field_name("right")
    if condition.type != "binary_expression" or _text(left) != index or right is None:
        return None
    if _text(condition.child_by_field_name("operator")) != "<":
        return None
    if right.type == "field_access" and _text(right.child_by_field_name("field")) == "length":
        iterable = right.child_by_field_name("object")
        ok = (
            taken.type == "array_access"
            and _text(taken.child_by_field_name("index")) == index
            and _text(taken.child_by_field_name("array")) == _text(iterable)
        )
    elif _call(right, None, "size"):
        iterable = right.child_by_field_name("object")
        arguments = taken.child_by_field_name("arguments") if taken.type != "array_access" else None
        ok = (
            _call(taken, _text(iterable), "get", 1)
            and arguments is not None
            and _text(arguments.named_children[0]) == index
        )
    else:
        return None
    if iterable is None or iterable.type != "identifier" or not ok:
        return None
    return None if _assigned(rest, _text(iterable)) else iterable


def _steps(updates: Sequence[Node], index: str) -> bool:
    """Whether the loop's update is ``i++``, ``++i`` or ``i += 1``."""
    if len(updates) != 1:
        return False
    text = "".join(_leaves(updates[0]))
    return text in (f"{index}++", f"++{index}", f"{index}+=1", f"{index}={index}+1")


def _assigned(nodes: Iterable[Node], name: str) -> bool:
    for node in nodes:
        for inner in descendants(node):
            if inner.type == "assignment_expression" and (
                _text(inner.child_by_field_name("left")) == name
            ):
                return True
    return False


def is_slot(token: str) -> bool:
    """Whether a token of ``canonical`` is a slot's marker."""
    return token in (_TYPE, _ARGUMENTS)


def canonical(nodes: Sequence[Node], forms: frozenset[str]) -> Canonical:
    """The tokens of ``nodes`` (comments dropped) with the declared ``forms`` written as
    their Java 8 equivalents would be."""
    out = Canonical()
    _Lowering(forms, out).run(nodes)
    return out


def slot_forms(
    base: Sequence[Slot], patched: Sequence[Slot], rewrite: Callable[[Sequence[str]], list[str]]
) -> set[str] | None:
    """The forms that explain each pair of slots (the base's rewritten by ``rewrite``),
    or None if one pair differs in any other way."""
    if len(base) != len(patched):
        return None
    used: set[str] = set()
    for before, after in zip(base, patched, strict=True):
        was = tuple(rewrite(before.tokens))
        if before.marker != after.marker:
            return None
        if was == after.tokens:
            continue
        if before.marker == _ARGUMENTS and not after.tokens:
            used.add("diamond")
        elif before.marker == _TYPE and after.tokens == ("var",) and was != ("var",):
            literal = after.literal
            if literal is not None and was not in ((literal,), ("java", ".", "lang", ".", literal)):
                return None  # var n = 1 is an int, whatever n was declared
            used.add("var")
        else:
            return None
    return used
