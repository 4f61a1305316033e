"""Checking ``X-Hub-Signature-256`` over the raw request body, before anything is parsed."""

from __future__ import annotations

import hashlib
import hmac

__all__ = ["sign", "signature_ok"]

_PREFIX = "sha256="


def sign(secret: str, body: bytes) -> str:
    """The header value GitHub sends for ``body``: ``sha256=`` and the HMAC-SHA256 hex."""
    digest = hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    return _PREFIX + digest


def signature_ok(secret: str, body: bytes, header: str | None) -> bool:
    """True only for a well-formed sha256 signature matching ``body``.

    A missing header, a sha1-only signature or any mismatch is refused; the comparison is
    constant-time.
    """
    if not header or not header.startswith(_PREFIX):
        return False
    return hmac.compare_digest(
        sign(secret, body).encode("ascii"), header.strip().encode("ascii", "replace")
    )
