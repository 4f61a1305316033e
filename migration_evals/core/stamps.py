"""Canonical serialisation and SHA256 stamps.

A stamp is the SHA256 of a value's canonical JSON: keys sorted, no insignificant
whitespace, UTF-8, dates as ISO strings. Reformatting a YAML spec or reordering its keys
keeps its stamp; any semantic change moves it.
"""

from __future__ import annotations

import hashlib
import json
from datetime import date, datetime
from typing import Any

__all__ = ["canonical_json", "sha256_hex", "stamp"]


def _default(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, set | frozenset):
        return sorted(value)
    raise TypeError(f"cannot serialise {type(value).__name__} canonically")


# One encoder for every call (it keeps no state between them): ``json.dumps`` with these
# options builds a new one each time, a fair part of encoding the small values most
# stamps are over.
_CANONICAL = json.JSONEncoder(
    sort_keys=True,
    separators=(",", ":"),
    ensure_ascii=False,
    allow_nan=False,
    default=_default,
)


def canonical_json(value: Any) -> str:
    """The one serialisation every stamp and hash in the project is computed over."""
    return _CANONICAL.encode(value)


def sha256_hex(data: str | bytes) -> str:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()


def stamp(value: Any) -> str:
    """SHA256 hex of ``value``'s canonical JSON."""
    return sha256_hex(canonical_json(value))
