"""The ledger's hash chain: which columns a row's hash covers and how it is computed.

Apart from the store so that readers which never touch SQLAlchemy (the gate's ledger
scan workers) compute exactly the same hashes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.stamps import canonical_json, sha256_hex

__all__ = ["GENESIS_HASH", "HASHED_COLUMNS", "row_hash"]

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


def row_hash(prev_hash: str, row: Mapping[str, Any]) -> str:
    """The hash chaining one ledger row to the one before it.

    The payload (already canonical JSON) is hashed as it is stored, after the other
    columns, rather than escaped into them a second time.
    """
    content = {name: row[name] for name in HASHED_COLUMNS if name != "payload"}
    content["fabricated"] = bool(content["fabricated"])
    return sha256_hex(f"{prev_hash}\n{canonical_json(content)}\n{row['payload']}")
