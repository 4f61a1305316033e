"""Strict YAML reading: duplicate keys are errors and values come out JSON-shaped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from core.errors import SpecError
from core.stamps import canonical_json

__all__ = ["load_yaml_file", "load_yaml_text"]


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate mapping keys (PyYAML silently keeps the last)."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode) -> dict[Any, Any]:
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


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


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
    return load_yaml_text(text, name=label)
