"""A Dockerfile read with tree-sitter: its stages, the images they start FROM, and what
each stage needs from the others.

``FROM`` sees only the build arguments declared before the first ``FROM`` (the global
``ARG`` lines); their defaults are substituted into each FROM's image, as the engine does
(``$NAME``, ``${NAME}``, ``${NAME:-word}``, ``${NAME:+word}``). An image that still names
an argument without a default cannot be known before the build and stays as written.

A stage needs another when it starts FROM its alias (or index), copies ``--from`` it, or
mounts ``from`` it in a ``RUN``. Building a target builds the stages it needs, transitively.

What the file reads from its build context (``context_reads``): the sources of each
``COPY`` and ``ADD`` without ``--from`` (URLs and here-documents aside) and of each ``RUN``
bind mount without ``from``, in every stage. A source that names a build argument or
variable, or a JSON form that does not parse, cannot be known before the build and is
read as the whole context (``.``). ``ONBUILD`` instructions read a later build's context,
not this one's.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from tree_sitter import Node

from migration_evals.oracles.ecosystems.dockerfile.language import DOCKERFILE_LANGUAGE
from migration_evals.oracles.syntax import parse

__all__ = [
    "ContextRead",
    "Dockerfile",
    "FromLine",
    "Item",
    "base_images",
    "instruction_lines",
    "read_dockerfile",
]

COMMENT_KINDS = {"comment": "comment", "ERROR": "unparsable text"}
_EXPANSION = re.compile(r"\$(?:\{(\w+)(?::([-+])([^}]*))?\}|(\w+))")
_FROM_PARAM = re.compile(r"^--from=(.+)$")
_MOUNT_FROM = re.compile(r"(?:^|,)from=([^,]+)")
_REMOTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|git@)", re.IGNORECASE)
_WHOLE_CONTEXT = "."
_CONTINUATION = re.compile(r"\\\r?\n")


@dataclass(frozen=True, slots=True)
class FromLine:
    """One FROM: the image as written and with the global arguments' defaults put in."""

    written: str
    image: str
    flags: tuple[str, ...]
    alias: str | None
    line: int
    arguments: frozenset[str]  # the build arguments its image and flags refer to
    start_byte: int = 0


@dataclass(frozen=True, slots=True)
class Item:
    """One instruction or comment; ``key`` is its source text, trailing blanks ignored."""

    kind: str
    key: str
    line: int
    argument: str | None = None  # the name an ARG declares


@dataclass(frozen=True, slots=True)
class ContextRead:
    """A source an instruction reads from the build context: a path or ``filepath.Match``
    pattern relative to the context, cleaned (``.`` is all of it)."""

    source: str
    line: int
    instruction: str  # COPY, ADD or RUN


@dataclass(frozen=True, slots=True)
class Dockerfile:
    froms: tuple[FromLine, ...]
    items: tuple[Item, ...]
    global_args: Mapping[str, str | None]  # declared before the first FROM: name -> default
    needs: tuple[frozenset[str], ...]  # per stage, the stage references it depends on
    context_reads: tuple[ContextRead, ...] = ()

    def stage_index(self, reference: str) -> int | None:
        """The stage a ``--from``/FROM reference names (alias or index), if any."""
        for index, line in enumerate(self.froms):
            if line.alias is not None and line.alias.lower() == reference.lower():
                return index
        if reference.isdigit() and int(reference) < len(self.froms):
            return int(reference)
        return None

    def target_index(self, target: str | None) -> int:
        """The stage a build of ``target`` ends at (the last stage without one)."""
        if target is None:
            return len(self.froms) - 1
        found = self.stage_index(target)
        if found is None:
            raise ValueError(f"no stage named {target!r}")
        return found

    def stages_for(self, target: str | None) -> list[int]:
        """The stages a build of ``target`` needs, in file order."""
        if not self.froms:
            return []
        wanted: set[int] = set()
        todo = [self.target_index(target)]
        while todo:
            stage = todo.pop()
            if stage in wanted:
                continue
            wanted.add(stage)
            for reference in self.needs[stage]:
                found = self.stage_index(reference)
                if found is not None and found < stage:
                    todo.append(found)
        return sorted(wanted)

    def stage_of_line(self, line: int) -> int | None:
        """The stage an instruction on ``line`` belongs to (None before the first FROM)."""
        stage = None
        for index, start in enumerate(self.froms):
            if start.line <= line:
                stage = index
        return stage

    def build_lines(self, target: str | None) -> list[int]:
        """The line of each instruction a build of ``target`` runs, in order (step N of
        the build is element N - 1), as the build sees the file ``trimmed`` makes."""
        stages = set(self.stages_for(target)) if self.trims(target) else None
        return [
            item.line
            for item in self.items
            if item.kind not in COMMENT_KINDS.values()
            and (stages is None or self.stage_of_line(item.line) in stages | {None})
        ]

    def trims(self, target: str | None) -> bool:
        """Whether a build of ``target`` leaves stages out. Not when a kept stage names
        another by number: dropping stages would renumber them."""
        kept = self.stages_for(target)
        if len(kept) == len(self.froms) or not kept:
            return False
        numbered = any(ref.isdigit() for stage in kept for ref in self.needs[stage])
        return not numbered

    def trimmed(self, source: bytes, target: str | None) -> bytes | None:
        """The file with only the stages ``target`` needs (global ARGs and parser
        directives kept), or None when nothing would be left out.

        The classic builder runs every stage before its target, needed or not; a stage
        the target does not need must not decide whether it builds.
        """
        if not self.trims(target):
            return None
        starts = [line.start_byte for line in self.froms] + [len(source)]
        parts = [source[: starts[0]]]
        for stage in self.stages_for(target):
            parts.append(source[starts[stage] : starts[stage + 1]])
        return b"".join(p if p.endswith(b"\n") else p + b"\n" for p in parts if p)

    def images_for(self, target: str | None) -> list[str]:
        """The outside images the stages of ``target`` start FROM, in order, once each:
        earlier stages, ``scratch`` and images left to build arguments excluded."""
        return self.images_of(self.stages_for(target))

    def images_of(self, stages: Iterable[int]) -> list[str]:
        images: list[str] = []
        for stage in stages:
            line = self.froms[stage]
            own = self.stage_index(line.image)
            if (own is not None and own < stage) or line.image == "scratch":
                continue
            if "$" not in line.image and line.image not in images:
                images.append(line.image)
        return images


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else ""


def substitute(text: str, defaults: Mapping[str, str | None]) -> str:
    """``text`` with the arguments' defaults put in; unknown ones are left as written."""

    def replace(match: re.Match[str]) -> str:
        name = match[1] or match[4]
        if name not in defaults or defaults[name] is None:
            return match[3] if match[2] == "-" else match[0]
        value = defaults[name] or ""
        if match[2] == "-":
            return value or match[3]
        if match[2] == "+":
            return match[3] if value else ""
        return value

    return _EXPANSION.sub(replace, text)


def _arguments_in(text: str) -> set[str]:
    return {m[1] or m[4] for m in _EXPANSION.finditer(text)}


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


def _arg_of(node: Node) -> tuple[str, str | None]:
    parts = node.named_children
    name = _text(parts[0]) if parts else ""
    default = _unquote(_text(parts[1])) if len(parts) > 1 else None
    return name, default


def _from_of(node: Node, defaults: Mapping[str, str | None]) -> FromLine:
    children = node.named_children
    flags = tuple(_text(c) for c in children if c.type == "param")
    written = next((_text(c) for c in children if c.type == "image_spec"), "")
    alias = next((_text(c) for c in children if c.type == "image_alias"), None)
    refers = _arguments_in(written).union(*(_arguments_in(f) for f in flags))
    return FromLine(
        written=written,
        image=substitute(written, defaults),
        flags=flags,
        alias=alias,
        line=node.start_point.row + 1,
        arguments=frozenset(refers),
        start_byte=node.start_byte,
    )


def _item_of(node: Node) -> Item:
    line = node.start_point.row + 1
    if node.type == "from_instruction":
        # Only the position of a FROM is compared as an item; its content is checked apart.
        return Item("FROM", "FROM", line)
    key = "\n".join(part.rstrip() for part in _text(node).splitlines())
    kind = COMMENT_KINDS.get(node.type) or node.type.removesuffix("_instruction").upper()
    argument = _arg_of(node)[0] if node.type == "arg_instruction" else None
    return Item(kind, key, line, argument)


def _stage_needs(node: Node) -> set[str]:
    """The stage references one instruction depends on (``--from``, RUN mounts)."""
    needs: set[str] = set()
    for child in node.named_children:
        text = _text(child)
        if child.type == "param" and (found := _FROM_PARAM.match(text)):
            needs.add(found[1])
        elif child.type == "mount_param":
            needs.update(_MOUNT_FROM.findall(text.removeprefix("--mount=")))
    return needs


def _context_path(source: str) -> str:
    """A source as the builder resolves it: relative to the context, never above it."""
    if "$" in source:
        return _WHOLE_CONTEXT  # a variable: which files it names is known only in the build
    return posixpath.normpath("/" + source).lstrip("/") or _WHOLE_CONTEXT


def _copy_sources(node: Node) -> list[str] | None:
    """The sources of a COPY or ADD as the builder reads its words, None if it copies from
    another stage or image; words that do not parse are read as the whole context."""
    children = node.named_children
    if any(c.type == "param" and _FROM_PARAM.match(_text(c)) for c in children):
        return None
    paths = [c for c in children if c.type == "path"]
    if not paths:
        return []
    start, end = paths[0].start_byte - node.start_byte, paths[-1].end_byte - node.start_byte
    raw = _CONTINUATION.sub("", (node.text or b"")[start:end].decode("utf-8", "replace"))
    try:
        words = json.loads(raw) if raw.startswith("[") else shlex.split(raw)
    except ValueError:
        return [_WHOLE_CONTEXT]
    if not isinstance(words, list):
        return [_WHOLE_CONTEXT]
    return [str(w) for w in words[:-1] if not str(w).startswith("<<")]


def _mount_sources(node: Node) -> Iterator[str]:
    """The context paths a RUN's bind mounts read (``source``, default the whole context)."""
    for child in node.named_children:
        if child.type != "mount_param":
            continue
        fields = dict(
            part.partition("=")[::2] for part in _text(child).removeprefix("--mount=").split(",")
        )
        if fields.get("type", "bind") == "bind" and "from" not in fields:
            yield fields.get("source") or fields.get("src") or _WHOLE_CONTEXT


def _reads_of(node: Node) -> list[ContextRead]:
    line = node.start_point.row + 1
    if node.type == "run_instruction":
        return [ContextRead(_context_path(s), line, "RUN") for s in _mount_sources(node)]
    if node.type not in ("copy_instruction", "add_instruction"):
        return []
    kind = "COPY" if node.type == "copy_instruction" else "ADD"
    sources = _copy_sources(node) or []
    return [
        ContextRead(_context_path(s), line, kind)
        for s in sources
        if not (kind == "ADD" and _REMOTE.match(s))
    ]


def read_dockerfile(source: bytes) -> Dockerfile:
    """Parse a Dockerfile. Named top-level nodes are instructions, comments, and ERROR
    nodes for text that does not parse (still compared verbatim); newlines are skipped."""
    nodes = parse(DOCKERFILE_LANGUAGE, source).root_node.named_children
    defaults: dict[str, str | None] = {}
    froms: list[FromLine] = []
    needs: list[set[str]] = []
    reads: list[ContextRead] = []
    for node in nodes:
        reads += _reads_of(node)
        if node.type == "from_instruction":
            froms.append(_from_of(node, defaults))
            needs.append({froms[-1].image})
        elif not froms and node.type == "arg_instruction":
            name, default = _arg_of(node)
            defaults[name] = default
        elif froms:
            needs[-1].update(_stage_needs(node))
    return Dockerfile(
        froms=tuple(froms),
        items=tuple(_item_of(n) for n in nodes),
        global_args=defaults,
        needs=tuple(frozenset(n) for n in needs),
        context_reads=tuple(reads),
    )


def base_images(source: bytes) -> list[str]:
    """The outside images any stage starts FROM: what the classic builder needs for a
    build of the whole file (earlier stages, ``scratch`` and unresolved ones excluded)."""
    dockerfile = read_dockerfile(source)
    return dockerfile.images_of(range(len(dockerfile.froms)))


def instruction_lines(source: bytes, target: str | None = None) -> list[int]:
    """The line of each instruction a build of ``target`` runs: step N is element N - 1."""
    return read_dockerfile(source).build_lines(target)
