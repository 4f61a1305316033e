"""Finding fabricated marks anywhere in a stored result, however deeply nested.

A mark is any JSON object member named ``fabricated`` whose value is truthy: the
``FabricatedMark`` objects an envelope carries (``{"fabricated": true, ...}``), the
``fabricated`` lists of judge transcripts, or a mark some future adapter tucks into its
evidence. The walk reports each mark by its path and does not descend into a mark it
has already reported, so a list of marks is one finding, not one per element.

Walking every payload of a large ledger in Python is slow, so ``may_hold_marks`` first
looks at the raw canonical JSON text: when every occurrence of the key is followed by an
empty or false value there is nothing to find. Inside JSON strings a quote is always
escaped, so text in a string can never look like the key.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["find_marks", "may_hold_marks"]

# The key, unless directly followed by an empty value and the end of that member.
_SUSPECT = re.compile(r'"fabricated"(?!:(?:\[\]|false|null|\{\})[,}])')


def may_hold_marks(text: str) -> bool:
    """False only when the JSON ``text`` certainly holds no truthy ``fabricated`` member."""
    return _SUSPECT.search(text) is not None


def find_marks(value: Any, path: str = "") -> list[str]:
    """Paths of every truthy ``fabricated`` member inside ``value`` (JSON-like data)."""
    return list(_walk(value, path))


def _walk(value: Any, path: str) -> Iterator[str]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if key == "fabricated" and item:
                # A bare ``true`` says nothing; the object holding it names port and reason.
                yield f"{where}{_describe(value if isinstance(item, bool) else item)}"
            else:
                yield from _walk(item, where)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _walk(item, f"{path}[{index}]")


def _describe(mark: Any) -> str:
    """A short note on what the mark says (its port and reason), when it says anything."""
    first = mark[0] if isinstance(mark, list | tuple) and mark else mark
    if isinstance(first, Mapping):
        said = [str(first[k]) for k in ("port", "reason") if first.get(k)]
        if said:
            return f" ({': '.join(said)[:160]})"
    return ""
