"""Signed links to the App's trial pages: ``/trials/<id>?sig=<hmac>``.

A trial page shows a candidate's evidence, its build output and the judges' answers, so it
opens only for a link the App made: the check run's **Details** link carries an
HMAC-SHA256 of the trial id. The key is derived from the webhook secret, which only the
App holds (no extra secret to provision); rotating that secret retires every link made
before it (a re-run makes a new one). Links do not expire: GitHub keeps the check run, and
its link should keep working as long as the secret does.
"""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import quote

__all__ = ["SIGNATURE_PARAM", "TrialLinks"]

SIGNATURE_PARAM = "sig"
_PURPOSE = b"migration-evals trial page links v1"  # separates this key from the webhook's


class TrialLinks:
    """Signs and checks links to trial pages with a key derived from ``secret``."""

    def __init__(self, secret: str) -> None:
        self._key = hmac.new(secret.encode(), _PURPOSE, hashlib.sha256).digest()

    def signature(self, trial_id: str) -> str:
        return hmac.new(self._key, trial_id.encode(), hashlib.sha256).hexdigest()

    def valid(self, trial_id: str, signature: str | None) -> bool:
        """Whether ``signature`` is this App's for ``trial_id`` (compared in constant time)."""
        return signature is not None and hmac.compare_digest(self.signature(trial_id), signature)

    def url(self, public_url: str, trial_id: str) -> str:
        """The page's signed address under the App's public URL."""
        path = f"{public_url.rstrip('/')}/trials/{quote(trial_id, safe='')}"
        return f"{path}?{SIGNATURE_PARAM}={self.signature(trial_id)}"
