"""The ledger's chain: which columns a row's link covers, how it is computed and checked.

Each row's link is computed over its hashed columns and the previous row's link: an
HMAC-SHA256 under the ledger key when one is configured (``ChainKey``), so that a writer
without the key cannot recompute the chain after editing or removing rows; a plain
SHA-256 otherwise (an *unkeyed* ledger, which anyone with write access can rebuild).

Apart from the store so that readers which never touch SQLAlchemy (the gate's scan
workers) walk the chain with exactly the same code: ``ChainWalk`` checks a contiguous
range of rows, ``join_walks`` stitches ranges walked separately, and ``end_problems``
compares the chain's end with the head row. ``migration_evals.core.integrity`` adds the checks
beside the chain (the key's identity, the record chain, the signed checkpoints).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from json.encoder import encode_basestring
from typing import Any

from migration_evals.core.stamps import canonical_json

__all__ = [
    "CHAIN_COLUMNS",
    "GENESIS_HASH",
    "HASHED_COLUMNS",
    "UNKEYED",
    "ChainKey",
    "ChainWalk",
    "content_hash",
    "end_problems",
    "join_walks",
    "row_hash",
]

GENESIS_HASH = "0" * 64

HASHED_COLUMNS = (
    "seq",
    "recorded_at",
    "run_id",
    "trial_id",
    "changeset_id",
    "model",
    "recipe",
    "tier",
    "verdict",
    "fabricated",
    "cache_key",
    "payload",
)

# What a chain walk reads, by position: the hashed columns, then the two links.
CHAIN_COLUMNS = (*HASHED_COLUMNS, "prev_hash", "row_hash")

_KEY_ID_MESSAGE = b"migration-evals ledger key id"


class ChainKey:
    """How links are computed: HMAC-SHA256 under ``secret``, or SHA-256 without one.

    The HMAC object is keyed once and copied per row: keying costs two compressions,
    a copy none. Pickles as its secret, so scan workers rebuild the same key.
    """

    __slots__ = ("_base", "_secret", "key_id")

    def __init__(self, secret: bytes | None = None) -> None:
        if secret is not None and not secret:
            raise ValueError("a ledger key must not be empty")
        self._secret = secret
        self._base = hmac.new(secret, digestmod=hashlib.sha256) if secret else None
        # Names the key without revealing it, so a verifier tells "wrong key" from "edited".
        self.key_id = (
            hmac.new(secret, _KEY_ID_MESSAGE, hashlib.sha256).hexdigest()[:16]
            if secret
            else "unkeyed"
        )

    @property
    def keyed(self) -> bool:
        return self._base is not None

    def link(self, text: str) -> str:
        """The link over ``text`` (the previous link, then the row's canonical content)."""
        if self._base is None:
            return hashlib.sha256(text.encode()).hexdigest()
        mac = self._base.copy()
        mac.update(text.encode())
        return mac.hexdigest()

    def __reduce__(self) -> tuple[Any, ...]:
        return (ChainKey, (self._secret,))

    def __repr__(self) -> str:
        return f"ChainKey({self.key_id})"  # never the secret


UNKEYED = ChainKey()


def row_hash(prev_hash: str, row: Mapping[str, Any], key: ChainKey = UNKEYED) -> str:
    """The link chaining one ledger row to the one before it.

    The payload (already canonical JSON) is covered as it is stored, after the other
    columns, rather than escaped into them a second time.
    """
    content = {name: row[name] for name in HASHED_COLUMNS if name != "payload"}
    content["fabricated"] = bool(content["fabricated"])
    return key.link(f"{prev_hash}\n{canonical_json(content)}\n{row['payload']}")


# ``row_hash`` covers ``canonical_json`` of the columns (keys sorted). Building that JSON
# through a dict and the generic encoder dominates a full scan, so the same text is
# formatted directly; ``content_hash`` falls back to the generic path for any value of an
# unexpected type, and a test holds the two equal.
_quote = encode_basestring


def content_hash(values: Sequence[Any], key: ChainKey = UNKEYED) -> str:
    """The link of a row given as ``CHAIN_COLUMNS`` values (its stored link is ignored)."""
    seq, fab = values[0], values[9]
    try:
        if type(seq) is not int:
            raise TypeError(seq)
        content = (
            f'{{"cache_key":{_quote(values[10])},"changeset_id":{_quote(values[4])},'
            f'"fabricated":{"true" if fab else "false"},"model":{_quote(values[5])},'
            f'"recipe":{_quote(values[6])},"recorded_at":{_quote(values[1])},'
            f'"run_id":{_quote(values[2])},"seq":{seq},"tier":{_quote(values[7])},'
            f'"trial_id":{_quote(values[3])},"verdict":{_quote(values[8])}}}'
        )
    except TypeError:  # not the types the store writes: let the generic path judge it
        return row_hash(values[12], dict(zip(CHAIN_COLUMNS, values, strict=False)), key)
    return key.link(f"{values[12]}\n{content}\n{values[11]}")


def _link_problems(
    seq: int, prev_hash: str, last_seq: int, last_hash: str, label: str = "row"
) -> list[str]:
    problems = []
    if seq != last_seq + 1:
        problems.append(f"{label} {last_seq + 1} is missing (next {label} is {seq})")
    if prev_hash != last_hash:
        problems.append(f"{label} {seq}: does not chain to the {label} before it")
    return problems


@dataclass(slots=True)
class ChainWalk:
    """One contiguous range of rows walked in sequence order.

    The first row's links (its sequence number follows the previous row's, its
    ``prev_hash`` is the previous row's link) are checked by ``join_walks``, so ranges can
    be walked apart (the gate's scan workers) and stitched afterwards.
    """

    key: ChainKey = UNKEYED
    rows: int = 0
    first_seq: int = 0
    first_prev: str = ""
    last_seq: int = 0
    last_hash: str = ""
    problems: list[str] = field(default_factory=list)

    label: str = "row"  # how problems name a row: ledger rows, or "record" for records

    def add(self, row: Sequence[Any]) -> None:
        """Check one ledger row given as ``CHAIN_COLUMNS`` values (the hot loop of a scan)."""
        self.check(row[0], row[12], row[13], content_hash(row, self.key))

    def check(self, seq: int, prev_hash: str, stored: str, computed: str) -> None:
        """Check one row's links: ``computed`` is its link recomputed from its content."""
        if not self.rows:
            self.first_seq, self.first_prev = seq, prev_hash
        elif seq != self.last_seq + 1 or prev_hash != self.last_hash:
            self.problems.extend(
                _link_problems(seq, prev_hash, self.last_seq, self.last_hash, self.label)
            )
        if computed != stored:
            self.problems.append(f"{self.label} {seq}: content does not match its {self._what}")
        self.rows += 1
        self.last_seq, self.last_hash = seq, stored

    @property
    def _what(self) -> str:
        return "MAC (edited, or chained under another key)" if self.key.keyed else "hash (edited)"


def join_walks(walks: Iterable[ChainWalk]) -> tuple[list[str], int, str]:
    """Join ranges walked in order, checking the links at the seams: the problems, and the
    chain's last sequence number and link."""
    problems: list[str] = []
    last_seq, last_hash = 0, GENESIS_HASH
    for walk in walks:
        if not walk.rows:
            continue
        problems.extend(
            _link_problems(walk.first_seq, walk.first_prev, last_seq, last_hash, walk.label)
        )
        problems.extend(walk.problems)
        last_seq, last_hash = walk.last_seq, walk.last_hash
    return problems, last_seq, last_hash


def end_problems(
    head: tuple[int, str], end: tuple[int, str], highest_seq: int, current_head_seq: int
) -> list[str]:
    """The head row (as read before the walk) against the chain's end, and rows stored
    past the head (as read after it) without moving it."""
    if head != end:
        return [
            f"ledger head says row {head[0]} is last, but the chain ends at row {end[0]} "
            "(rows removed from the end?)"
        ]
    if highest_seq > current_head_seq:
        return [
            f"ledger head says row {current_head_seq} is last, but the chain ends at row "
            f"{highest_seq} (rows removed from the end?)"
        ]
    return []
