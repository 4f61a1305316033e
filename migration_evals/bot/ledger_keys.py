"""The ledger's keys, from the settings: what every command that opens the store passes.

The key files are read here (the composition root), once per store; a missing or
malformed file is a configuration error naming it. The default checkpoint key (in the
user's configuration folder, never in the database) is made here on first use, and its
public half printed, so checkpoints are signed without any setting.
"""

from __future__ import annotations

import sys
from typing import TextIO

from migration_evals.core.chain import ChainKey
from migration_evals.core.checkpoints import CheckpointSigner, CheckpointVerifier
from migration_evals.core.integrity import LedgerKeys
from migration_evals.core.settings import Settings
from migration_evals.core.store import Store

__all__ = ["UNKEYED_WARNING", "checkpoint_signer", "ledger_keys", "open_store", "warn_if_unkeyed"]

UNKEYED_WARNING = (
    "migration-evals: warning: MIGRATION_EVALS_LEDGER_KEY is not set, so the ledger is "
    "unkeyed (a plain SHA-256 chain): anyone who can write the database can rewrite it "
    "undetected. Set it (e.g. `openssl rand -hex 32`) before a ledger's first run."
)


def checkpoint_signer(settings: Settings, stream: TextIO | None = None) -> CheckpointSigner | None:
    """The checkpoint key ``settings`` name; the default one is made when missing, and its
    public half printed on ``stream`` (stderr) for the user to keep elsewhere."""
    config = settings.ledger
    path = config.checkpoint_key
    if path is None:
        return None
    if not config.make_checkpoint_key or path.exists():
        return CheckpointSigner.from_pem(path)
    signer = CheckpointSigner.make(path)
    verifier = signer.verifier()
    print(
        f"migration-evals: made a checkpoint signing key at {path} (key id {verifier.key_id}); "
        "keep it, and a copy of this public key, away from the database "
        "(`ledger checkpoint --public-key` prints it again):\n" + verifier.public_pem(),
        end="",
        file=stream or sys.stderr,
    )
    return signer


def ledger_keys(settings: Settings) -> LedgerKeys:
    """The chain key and checkpoint keys ``settings`` name."""
    config = settings.ledger
    secret = config.key.encode() if config.key else None
    signer = checkpoint_signer(settings)
    verifier = (
        CheckpointVerifier.from_pem(config.checkpoint_public_key)
        if config.checkpoint_public_key
        else None
    )
    return LedgerKeys(chain=ChainKey(secret), signer=signer, verifier=verifier)


def open_store(
    settings: Settings,
    *,
    url: str | None = None,
    pool_size: int | None = None,
    keys: LedgerKeys | None = None,
    warn: bool = False,
) -> Store:
    """``Store.open`` with the settings' database (or ``url``) and keys (or ``keys``).

    ``warn``: the unkeyed warning, for commands that write or verify the ledger; given
    once the store is open, so that an error opening it stays the one line on stderr.
    """
    keys = keys or ledger_keys(settings)
    store = Store.open(url or settings.db_url, pool_size=pool_size, keys=keys)
    if warn:
        warn_if_unkeyed(settings)
    return store


def warn_if_unkeyed(settings: Settings, stream: TextIO | None = None) -> None:
    """The warning every command that writes or verifies the ledger gives without a key."""
    if not settings.ledger.key:
        print(UNKEYED_WARNING, file=stream or sys.stderr)
