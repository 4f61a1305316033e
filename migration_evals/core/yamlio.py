"""Strict YAML reading: duplicate keys are errors and values come out JSON-shaped.

``load_yaml_file`` reads the project's and the operator's own files (the specs) with
libyaml's parser, and parses each distinct text once per process: a command that reads
the specs twice, and a process running many commands, pay for one parse. A file that is
not YAML is read again by the pure-Python parser for its message, which quotes the line.

``load_untrusted_yaml`` reads YAML that someone else wrote (a repository's configuration):
it checks the size, then walks the parser's event stream, which holds no objects and does
not recurse, refusing anchors and aliases (the "billion laughs" expansion) and counting
depth and nodes against their caps before a single object is built.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from migration_evals.core.errors import SpecError
from migration_evals.core.stamps import canonical_json

__all__ = ["UntrustedYamlLimits", "load_untrusted_yaml", "load_yaml_file", "load_yaml_text"]


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate mapping keys (PyYAML silently keeps the last)."""


# The same on libyaml's parser, where PyYAML was built with it: ten times faster on the
# specs every command reads. Only for the project's and the operator's own files; YAML
# from outside keeps the pure-Python parser its screening walks.
try:
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # a PyYAML built without libyaml
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]


class _OwnFileLoader(_SafeLoader):
    """``_StrictLoader`` for files of the project's or the operator's own."""


def _construct_mapping(
    loader: _StrictLoader | _OwnFileLoader, node: yaml.MappingNode
) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    mapping: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in mapping:
            line = key_node.start_mark.line + 1
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (line {line})", key_node.start_mark
            )
        mapping[key] = loader.construct_object(value_node, deep=True)
    return mapping


for _loader in (_StrictLoader, _OwnFileLoader):
    _loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_yaml_text(text: str, *, name: str) -> Any:
    """Parse YAML text; dates become ISO strings so the result is plain JSON data."""
    try:
        data = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise SpecError(name, "", f"is not valid YAML: {exc}") from exc
    return json.loads(canonical_json(data))


def load_yaml_file(path: Path, *, name: str | None = None) -> Any:
    label = name or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise SpecError(label, "", "file not found") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(label, "", f"cannot be read: {exc}") from exc
    try:
        return json.loads(_own_file_json(text))
    except yaml.YAMLError as exc:
        raise SpecError(label, "", f"is not valid YAML: {_problem(text, exc)}") from exc


@functools.lru_cache(maxsize=256)
def _own_file_json(text: str) -> str:
    """The canonical JSON of an own file's ``text``; kept as JSON, not as the data, so that
    every caller gets objects of its own to change. A refusal is raised, not kept."""
    return canonical_json(yaml.load(text, Loader=_OwnFileLoader))  # noqa: S506 - a SafeLoader


def _problem(text: str, exc: yaml.YAMLError) -> yaml.YAMLError:
    """What is wrong with ``text`` as the pure-Python parser says it (the line quoted under
    the marks), the same problem libyaml found at the same marks; ``exc`` should it pass."""
    try:
        yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as plain:
        return plain
    return exc


@dataclass(frozen=True, slots=True)
class UntrustedYamlLimits:
    """Caps on YAML from outside: far above any real configuration file."""

    max_bytes: int = 64 * 1024
    max_depth: int = 32
    max_nodes: int = 10_000


_OPENING = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSING = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


def _screen_events(text: str, limits: UntrustedYamlLimits) -> str | None:
    """The first reason to refuse ``text``, read from its events, or None."""
    depth = nodes = 0
    for event in yaml.parse(text, Loader=_StrictLoader):
        line = event.start_mark.line + 1 if event.start_mark else 0
        if isinstance(event, yaml.AliasEvent):
            return f"uses an alias (*{event.anchor}) at line {line}; aliases are not allowed"
        if isinstance(event, yaml.NodeEvent) and event.anchor is not None:
            return f"defines an anchor (&{event.anchor}) at line {line}; anchors are not allowed"
        if isinstance(event, yaml.NodeEvent):
            nodes += 1
            if nodes > limits.max_nodes:
                return f"has more than {limits.max_nodes} nodes"
        if isinstance(event, _OPENING):
            depth += 1
            if depth > limits.max_depth:
                return f"nests deeper than {limits.max_depth} levels (line {line})"
        elif isinstance(event, _CLOSING):
            depth -= 1
    return None


def load_untrusted_yaml(text: str, *, name: str, limits: UntrustedYamlLimits | None = None) -> Any:
    """``load_yaml_text`` for YAML from outside, within ``limits``; a ``SpecError`` says
    which limit the text broke."""
    limits = limits or UntrustedYamlLimits()
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limits.max_bytes:
        raise SpecError(name, "", f"is {size} bytes; at most {limits.max_bytes} are read")
    try:
        refused = _screen_events(text, limits)
    except yaml.YAMLError as exc:
        raise SpecError(name, "", f"is not valid YAML: {exc}") from exc
    if refused is not None:
        raise SpecError(name, "", refused)
    return load_yaml_text(text, name=name)
