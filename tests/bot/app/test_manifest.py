"""The App asks GitHub for exactly what it uses: the manifest's permissions are those its
REST calls need, and its events those the App routes.

"Used" is read from the code, not restated: the endpoints are found in the client's
source (``migration_evals.bot.app.github``: every ``request``/``_paged`` call), checked against the
endpoint → permission table (``migration_evals.bot.app.manifest``) and, where the App's flows reach
them in the fake GitHub, against the calls made; the table's endpoints that GitHub's OpenAPI
subset describes must be operations of it (``tests/fixtures/github``, see its SOURCE file).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from migration_evals.bot.app import github as app_github
from migration_evals.bot.app.events import route
from migration_evals.bot.app.manifest import (
    ENDPOINT_PERMISSIONS,
    MANIFEST_PATH,
    load_manifest,
    required_permissions,
)
from tests.bot.app.conftest import WEBHOOKS, Harness, payload, raw
from tests.fake_github import SUBSET

_CALLERS = {"request", "_paged", "_paged_app"}
_VERBS = {"GET", "POST", "PATCH", "PUT", "DELETE"}
# Events a GitHub App can subscribe to that the App could plausibly want; the manifest's
# must be exactly those ``route`` handles among them (``ping`` is always sent, never asked).
_CANDIDATE_EVENTS = (
    "check_run", "check_suite", "commit_comment", "create", "delete", "installation",
    "installation_repositories", "issue_comment", "issues", "label", "member",
    "pull_request", "pull_request_review", "pull_request_review_comment", "push",
    "release", "repository", "status", "workflow_run",
)  # fmt: skip


def _shape(path: str) -> str:
    """A path with every parameter as ``{}``."""
    return re.sub(r"\{[^}]*\}", "{}", path)


def _client_shape(path: str) -> str:
    """A path as the client writes it, shaped like GitHub's: its ``{repo}`` is
    ``owner/repo``, its ``{base}...{head}`` one ``{basehead}``."""
    return _shape(path).replace("/repos/{}/", "/repos/{}/{}/").replace("{}...{}", "{}")


def _path_of(node: ast.expr, names: dict[str, str] | None = None) -> str | None:
    if isinstance(node, ast.Name):  # ``path = f"..."`` earlier in the function
        return (names or {}).get(node.id)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            str(part.value) if isinstance(part, ast.Constant) else "{}" for part in node.values
        )
    return None


def _local_paths(function: ast.AST) -> dict[str, str]:
    found = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], _path_of(node.value)
            if isinstance(target, ast.Name) and value is not None:
                found[target.id] = value
    return found


def _called_endpoints() -> set[tuple[str, str]]:
    """Every (method, path shape) the client's source calls."""
    tree = ast.parse(Path(app_github.__file__).read_text())
    found = set()
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef):
            found |= _calls_in(function, _local_paths(function))
    return found


def _calls_in(function: ast.FunctionDef, names: dict[str, str]) -> set[tuple[str, str]]:
    found = set()
    for node in ast.walk(function):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if node.func.attr not in _CALLERS or not node.args:
            continue
        verb = _path_of(node.args[0], names)
        if verb in _VERBS and len(node.args) > 1:
            path = _path_of(node.args[1], names)
        else:
            verb, path = "GET", verb  # ``_paged(path)``: a listing
        if path is not None and path.startswith("/"):
            found.add((str(verb), _client_shape(path)))
    return found


def _table() -> dict[tuple[str, str], tuple[str, str] | None]:
    return {(verb, _shape(path)): grant for (verb, path), grant in ENDPOINT_PERMISSIONS.items()}


def test_every_endpoint_the_client_calls_has_its_permission_and_no_other_is_listed() -> None:
    called = _called_endpoints()
    assert len(called) >= 12, called  # the scan found the client's calls
    assert called == set(_table())


def test_the_table_agrees_with_githubs_openapi_subset() -> None:
    operations = json.loads(SUBSET.read_text())["operations"]
    described = {(name.split(" ", 1)[0], _shape(name.split(" ", 1)[1])) for name in operations}
    used = set(_table()) & described
    assert len(used) >= 8  # most of the App's calls are in the subset
    for name, operation in operations.items():
        verb, path = name.split(" ", 1)
        grant = _table().get((verb, _shape(path)))
        said = re.findall(r"`(\w+):(read|write)`", operation.get("description", ""))
        for permission, level in said:  # where GitHub's description names the permission
            assert grant == (permission, level), name


def test_the_manifest_asks_for_exactly_the_permissions_used() -> None:
    manifest = load_manifest(MANIFEST_PATH)
    assert manifest["default_permissions"] == required_permissions()
    assert required_permissions() == {
        "checks": "write",
        "contents": "read",
        "issues": "write",
        "metadata": "read",
        "pull_requests": "read",
    }


def _handled(event: str) -> bool:
    folder = WEBHOOKS / event
    body: dict[str, Any] = (
        payload(f"{event}/{sorted(p.name for p in folder.iterdir())[0]}")
        if folder.is_dir()
        else {"installation": {"id": 1}}
    )
    try:
        routed = route(event, body, delivery="d", app_slug="migration-evals")
    except (KeyError, TypeError, ValueError):
        return True  # it reached a handler of its own
    return routed.reason != f"event {event!r}"


def test_the_manifest_subscribes_to_exactly_the_events_routed() -> None:
    handled = {event for event in _CANDIDATE_EVENTS if _handled(event)}
    assert set(load_manifest(MANIFEST_PATH)["default_events"]) == handled
    assert handled == {"check_run", "check_suite", "issue_comment", "pull_request"}


@pytest.mark.parametrize("comment", ["/migration-evals explain", "/migration-evals rerun"])
def test_every_call_the_apps_flows_make_is_in_the_table(
    make_harness: Callable[..., Harness], comment: str
) -> None:
    harness = make_harness()
    harness.client.get("/healthz")
    harness.deliver("pull_request", raw("pull_request/opened.payload.json"))
    harness.drain()
    data = payload("issue_comment/created.on-pr.all-contributors.json")
    data["repository"]["full_name"] = "Codertocat/Hello-World"
    data["issue"]["number"] = 2
    data["comment"]["body"] = comment
    data["comment"]["user"]["login"] = "writer"
    harness.deliver("issue_comment", json.dumps(data).encode())
    harness.drain()
    harness.service.reconcile()
    routes = {(c.method, _shape(c.route)) for c in harness.github.calls}
    assert routes <= set(_table()), routes - set(_table())
    assert {("POST", _shape("/repos/{owner}/{repo}/issues/{issue_number}/comments"))} <= routes
