"""The App's manifest (``.github/app-manifest.json``) and what the App asks GitHub for.

The manifest is what GitHub's manifest flow registers: name, URLs, the permissions and
the webhook events. ``ENDPOINT_PERMISSIONS`` names, for every REST endpoint the client
(``migration_evals.bot.app.github``) calls, the permission GitHub requires of an App for it (from
GitHub's "Permissions required for GitHub Apps"); the manifest asks for exactly the highest level
of each, no more, and a test holds the table, the client's calls, the events the App
routes and the manifest to one another.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from migration_evals.core.errors import ConfigError

__all__ = [
    "ENDPOINT_PERMISSIONS",
    "MANIFEST_PATH",
    "REGISTER_CALLBACK",
    "WEBHOOK_PATH",
    "load_manifest",
    "manifest_for",
    "required_permissions",
    "web_url",
]

# In a source checkout; an installed package has no ``.github``: pass the file's path.
MANIFEST_PATH = Path(__file__).resolve().parents[3] / ".github" / "app-manifest.json"
WEBHOOK_PATH = "/webhook"
REGISTER_CALLBACK = "/register/callback"

_LEVELS = ("read", "write")

# (method, path) -> (permission, level); None: the App authenticates as itself (a JWT),
# which needs no permission of an installation.
ENDPOINT_PERMISSIONS: Mapping[tuple[str, str], tuple[str, str] | None] = {
    ("GET", "/app"): None,
    ("GET", "/app/installations"): None,
    ("POST", "/app/installations/{installation_id}/access_tokens"): None,
    ("GET", "/installation/repositories"): ("metadata", "read"),
    ("GET", "/repos/{owner}/{repo}/pulls/{pull_number}"): ("pull_requests", "read"),
    ("GET", "/repos/{owner}/{repo}/pulls"): ("pull_requests", "read"),
    ("GET", "/repos/{owner}/{repo}/commits/{commit_sha}/pulls"): ("pull_requests", "read"),
    ("GET", "/repos/{owner}/{repo}/compare/{basehead}"): ("contents", "read"),
    ("GET", "/repos/{owner}/{repo}/contents/{path}"): ("contents", "read"),
    ("GET", "/repos/{owner}/{repo}/commits/{ref}/check-runs"): ("checks", "read"),
    ("POST", "/repos/{owner}/{repo}/check-runs"): ("checks", "write"),
    ("PATCH", "/repos/{owner}/{repo}/check-runs/{check_run_id}"): ("checks", "write"),
    ("POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments"): ("issues", "write"),
    ("POST", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"): ("issues", "write"),
    ("GET", "/repos/{owner}/{repo}/collaborators/{username}/permission"): ("metadata", "read"),
}


def required_permissions() -> dict[str, str]:
    """Each permission the App's calls need, at the highest level any of them needs."""
    needed: dict[str, str] = {}
    for grant in ENDPOINT_PERMISSIONS.values():
        if grant is None:
            continue
        name, level = grant
        if _LEVELS.index(level) >= _LEVELS.index(needed.get(name, "read")):
            needed[name] = level
    return dict(sorted(needed.items()))


def load_manifest(path: Path = MANIFEST_PATH) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the App manifest {path}: {exc}") from exc
    if not isinstance(document, dict) or "default_permissions" not in document:
        raise ConfigError(f"{path} is not a GitHub App manifest (no default_permissions)")
    return document


def manifest_for(
    manifest: Mapping[str, Any], public_url: str, name: str | None = None
) -> dict[str, Any]:
    """``manifest`` pointing at an App served from ``public_url``: its webhook, the
    registration callback and its home page; ``name`` replaces the App's name (GitHub
    wants App names unique across GitHub)."""
    base = public_url.rstrip("/")
    filled = dict(manifest)
    filled["url"] = base
    filled["hook_attributes"] = {**manifest.get("hook_attributes", {}), "url": base + WEBHOOK_PATH}
    filled["redirect_url"] = base + REGISTER_CALLBACK
    if name:
        filled["name"] = name
    return filled


def web_url(api_url: str) -> str:
    """GitHub's web address for an API root: github.com for api.github.com, the host
    itself for GitHub Enterprise Server (``https://HOST/api/v3``)."""
    parts = urlsplit(api_url)
    if parts.netloc == "api.github.com":
        return "https://github.com"
    return f"{parts.scheme}://{parts.netloc}"
