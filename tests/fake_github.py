"""A fake GitHub REST API: a small Flask app serving the endpoints the bot calls.

It runs on a loopback port in a thread, so the bot's real client (its live transport over HTTP)
talks to it. Every request body is validated against GitHub's own schema for that
operation (``fixtures/github/rest-api-subset.json``, from GitHub's OpenAPI description;
see its SOURCE file for provenance and licence); a body that does not validate gets a 422
and is recorded in ``schema_errors``, which tests assert stays empty. Every call is
recorded. Tokens are checked (App JWT signed with the App's key; installation tokens that
expire), and tests can inject failures (rate limits, 5xx, a write that is done but
answered with an error), take the whole API down (``down``/``up``), refuse connections
(``refuse``/``come_back``) or hold a request until released.

Endpoints outside the subset (compare, contents, commit → pulls, pull list, installation
repositories, app installations, the App itself, manifest conversions) have no request body
to validate; their responses follow GitHub's documented shapes for the fields the bot reads.
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from flask import Flask, Response, request
from werkzeug.serving import WSGIRequestHandler, make_server

from migration_evals.core.serving import ServingThread

__all__ = ["Call", "FakeGitHub", "FakePull"]

SUBSET = Path(__file__).parent / "fixtures" / "github" / "rest-api-subset.json"

# Routes the bot may call: (method, template). Templates in the subset are validated.
_EXTRA_ROUTES = [
    ("GET", "/app"),
    ("GET", "/app/installations"),
    ("POST", "/app-manifests/{code}/conversions"),
    ("GET", "/installation/repositories"),
    ("GET", "/repos/{owner}/{repo}/compare/{basehead}"),
    ("GET", "/repos/{owner}/{repo}/contents/{path}"),
    ("GET", "/repos/{owner}/{repo}/commits/{sha}/pulls"),
    ("GET", "/repos/{owner}/{repo}/pulls"),
]


def write_app_key(folder: Path) -> tuple[Path, str]:
    """A new RSA key pair for an App: its private key written to ``folder/app.pem`` (as
    GitHub hands it out), and the public half as PEM, for the fake to check JWTs with."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    path = folder / "app.pem"
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return path, public.decode()


def _regex(template: str) -> re.Pattern[str]:
    pattern = re.sub(
        r"\{(\w+)\}", lambda m: f"(?P<{m[1]}>{'.+' if m[1] == 'path' else '[^/]+'})", template
    )
    return re.compile(f"^{pattern}$")


class _NoDelayHandler(WSGIRequestHandler):
    # Werkzeug writes a response's headers and its body apart: with Nagle's algorithm on,
    # the body waits for the client's delayed acknowledgement of the headers.
    disable_nagle_algorithm = True


@dataclass
class Call:
    method: str
    path: str
    route: str
    body: Any
    status: int
    accept: str = ""
    at: float = 0.0  # when it was answered (the fake's clock)


@dataclass
class FakePull:
    """One pull request as the API returns it, with its diff and merge base."""

    data: dict[str, Any]
    diff: str
    merge_base: str

    @property
    def head_sha(self) -> str:
        return str(self.data["head"]["sha"])


@dataclass
class _Failure:
    method: str
    pattern: re.Pattern[str]
    status: int
    headers: dict[str, str]
    message: str
    times: int
    after: bool = False  # the request is carried out, then answered with the failure


@dataclass
class FakeGitHub:
    """State of the fake: repositories, PRs, check runs, comments; and the call log."""

    app_id: int
    public_key: str
    token_ttl_s: float = 3600.0
    pulls: dict[tuple[str, int], FakePull] = field(default_factory=dict)
    files: dict[tuple[str, str], str] = field(default_factory=dict)
    permissions: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    installations: dict[int, list[str]] = field(default_factory=dict)
    check_runs: list[dict[str, Any]] = field(default_factory=list)
    comments: list[dict[str, Any]] = field(default_factory=list)
    reactions: list[dict[str, Any]] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    schema_errors: list[str] = field(default_factory=list)
    tokens: dict[str, tuple[int, float]] = field(default_factory=dict)
    # Manifest-flow codes and the App each converts to (each code works once).
    conversions: dict[str, dict[str, Any]] = field(default_factory=dict)
    clock: Callable[[], float] = time.time
    _failures: list[_Failure] = field(default_factory=list)
    _outage: _Failure | None = None
    _port: int = 0
    _holds: dict[str, threading.Event] = field(default_factory=dict)
    _arrived: dict[str, threading.Event] = field(default_factory=dict)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1000))
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _serving: ServingThread | None = None
    # GitHub's documented secondary limits on content-creating requests, enforced per
    # installation when set: a write past 80 in a minute or 500 in an hour is refused
    # with 403 "secondary rate limit" (and Retry-After), as GitHub answers it.
    secondary_limits: bool = False
    refused_writes: list[Call] = field(default_factory=list)
    writes_by_installation: dict[int, list[float]] = field(default_factory=dict)
    most_in_flight: int = 0
    _in_flight: int = 0

    # -- test controls ----------------------------------------------------------------------

    def add_pull(self, pull: FakePull, *, installation: int) -> None:
        repo = str(pull.data["base"]["repo"]["full_name"])
        self.pulls[(repo, int(pull.data["number"]))] = pull
        repos = self.installations.setdefault(installation, [])
        if repo not in repos:
            repos.append(repo)

    def fail_next(
        self,
        method: str,
        path_regex: str,
        status: int,
        *,
        headers: Mapping[str, str] | None = None,
        message: str = "API rate limit exceeded",
        times: int = 1,
        after: bool = False,
    ) -> None:
        """The next ``times`` matching requests fail; ``after``: once carried out (a
        response lost on the way back, as a proxy's 502 after GitHub did the write)."""
        failure = _Failure(
            method, re.compile(path_regex), status, dict(headers or {}), message, times, after
        )
        self._failures.append(failure)

    def down(
        self,
        status: int = 502,
        *,
        headers: Mapping[str, str] | None = None,
        message: str = "Server Error",
    ) -> None:
        """Every request fails with ``status`` until ``up()`` (tokens included)."""
        self._outage = _Failure("*", re.compile(""), status, dict(headers or {}), message, 0)

    def up(self) -> None:
        self._outage = None

    def refuse(self) -> None:
        """Stop listening: connections are refused until ``come_back()``."""
        if self._serving is not None:
            self._serving.stop()
            self._serving = None

    def come_back(self) -> None:
        """Listen again on the same port."""
        self._serve(self._port)

    def hold(self, path_regex: str) -> threading.Event:
        """Hold requests whose path matches until the returned event is set."""
        release = threading.Event()
        self._holds[path_regex] = release
        self._arrived[path_regex] = threading.Event()
        return release

    def wait_arrived(self, path_regex: str, timeout: float = 20.0) -> bool:
        return self._arrived[path_regex].wait(timeout)

    def expire_tokens(self) -> None:
        """Every installation token issued so far stops working (401 Bad credentials)."""
        with self._lock:
            self.tokens = {t: (i, 0.0) for t, (i, _) in self.tokens.items()}

    def runs_for(self, sha: str) -> list[dict[str, Any]]:
        return [run for run in self.check_runs if run["head_sha"] == sha]

    def writes(self, method: str, route_suffix: str = "") -> list[Call]:
        return [
            c
            for c in self.calls
            if c.method == method and c.route.endswith(route_suffix) and c.status < 300
        ]

    # -- serving ------------------------------------------------------------------------------

    def start(self) -> str:
        self._serve(0)
        return f"http://127.0.0.1:{self._port}"

    def _serve(self, port: int) -> None:
        server = make_server(
            "127.0.0.1", port, _build_app(self), threaded=True, request_handler=_NoDelayHandler
        )
        self._port = server.server_port
        self._serving = ServingThread(server)
        self._serving.start()

    def stop(self) -> None:
        for release in self._holds.values():
            release.set()
        self.refuse()


class _Api:
    """Request handling for one FakeGitHub."""

    def __init__(self, gh: FakeGitHub) -> None:
        self.gh = gh
        subset = json.loads(SUBSET.read_text())
        self.routes: list[tuple[str, str, re.Pattern[str], Any]] = []
        for name, operation in subset["operations"].items():
            method, template = name.split(" ", 1)
            schema = (
                operation.get("requestBody", {})
                .get("content", {})
                .get("application/json", {})
                .get("schema")
            )
            validator = (
                jsonschema.Draft7Validator(
                    schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER
                )
                if schema
                else None
            )
            self.routes.append((method, template, _regex(template), validator))
        for method, template in _EXTRA_ROUTES:
            self.routes.append((method, template, _regex(template), None))

    def match(self, method: str, path: str) -> tuple[str, dict[str, str], Any] | None:
        for verb, template, pattern, validator in self.routes:
            found = pattern.match(path)
            if verb == method and found:
                return template, found.groupdict(), validator
        return None

    # -- auth -------------------------------------------------------------------------------

    def check_auth(self, route: str) -> tuple[int | None, str]:
        header = request.headers.get("Authorization", "")
        scheme, _, credential = header.partition(" ")
        if route.startswith("/app-manifests/"):
            return 0, ""  # the code in the path is the credential
        if route == "/app" or route.startswith("/app/"):
            try:
                claims = jwt.decode(credential, self.gh.public_key, algorithms=["RS256"])
            except jwt.PyJWTError as exc:
                return None, f"bad JWT: {exc}"
            if str(claims.get("iss")) != str(self.gh.app_id):
                return None, "JWT issuer is not the App"
            return 0, ""
        with self.gh._lock:
            entry = self.gh.tokens.get(credential)
        if (
            scheme.lower() not in ("token", "bearer")
            or entry is None
            or entry[1] <= self.gh.clock()
        ):
            return None, "Bad credentials"
        return entry[0], ""

    def issue_token(self, installation: int) -> dict[str, Any]:
        token = f"ghs_fake{next(self.gh._ids)}"
        expires = self.gh.clock() + self.gh.token_ttl_s
        with self.gh._lock:
            self.gh.tokens[token] = (installation, expires)
        when = datetime.fromtimestamp(expires, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return {
            "token": token,
            "expires_at": when,
            "permissions": {},
            "repository_selection": "all",
        }


def _json(data: Any, status: int = 200) -> Response:
    return Response(json.dumps(data), status=status, mimetype="application/json")


def _not_found() -> Response:
    return _json({"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}, 404)


def _build_app(gh: FakeGitHub) -> Flask:
    api = _Api(gh)
    app = Flask("fake_github")

    @app.route("/<path:path>", methods=["GET", "POST", "PATCH", "PUT", "DELETE"])
    def any_route(path: str) -> Response:
        return _handle(gh, api, "/" + path)

    return app


def _handle(gh: FakeGitHub, api: _Api, path: str) -> Response:
    method = request.method
    matched = api.match(method, path)
    body = request.get_json(silent=True) if request.data else None
    accept = request.headers.get("Accept", "")
    if matched is None:
        gh.schema_errors.append(f"unexpected call {method} {path}")
        response = _not_found()
        gh.calls.append(Call(method, path, "?", body, 404, accept))
        return response
    route, params, validator = matched
    for pattern, release in list(gh._holds.items()):
        if re.search(pattern, path):
            gh._arrived[pattern].set()
            release.wait(60)
    with gh._lock:
        gh._in_flight += 1
        gh.most_in_flight = max(gh.most_in_flight, gh._in_flight)
    try:
        response = _respond(gh, api, method, path, route, params, validator, body)
    finally:
        with gh._lock:
            gh._in_flight -= 1
    with gh._lock:
        call = Call(method, path, route, body, response.status_code, accept, gh.clock())
        gh.calls.append(call)
        if _SECONDARY_MESSAGE in response.get_data(as_text=True):
            gh.refused_writes.append(call)
    return response


def _failing(failure: _Failure) -> Response:
    response = _json({"message": failure.message}, failure.status)
    for key, value in failure.headers.items():
        response.headers[key] = value
    return response


def _injected(gh: FakeGitHub, method: str, path: str, *, after: bool) -> Response | None:
    with gh._lock:
        for failure in gh._failures:
            if (
                failure.method == method
                and failure.after == after
                and failure.pattern.search(path)
                and failure.times > 0
            ):
                failure.times -= 1
                return _failing(failure)
    return None


def _respond(
    gh: FakeGitHub,
    api: _Api,
    method: str,
    path: str,
    route: str,
    params: dict[str, str],
    validator: Any,
    body: Any,
) -> Response:
    outage = gh._outage
    if outage is not None:
        return _failing(outage)
    installation, problem = api.check_auth(route)
    if installation is None:
        return _json({"message": problem}, 401)
    injected = _injected(gh, method, path, after=False)
    if injected is not None:
        return injected
    if method != "GET" and installation and not _write_allowed(gh, installation):
        refusal = _json({"message": _SECONDARY_MESSAGE}, 403)
        refusal.headers["retry-after"] = "60"
        return refusal
    if validator is not None:
        errors = sorted(validator.iter_errors(body), key=lambda e: list(e.path))
        if errors:
            text = f"{method} {route}: " + "; ".join(f"{list(e.path)}: {e.message}" for e in errors)
            gh.schema_errors.append(text)
            return _json({"message": "Validation Failed", "errors": text}, 422)
    handler = _HANDLERS[(method, route)]
    response = handler(gh, api, params, body, installation)
    return _injected(gh, method, path, after=True) or response


_SECONDARY_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
)
_LIMITS = ((60.0, 80), (3600.0, 500))  # GitHub's: content-creating requests per window


def _write_allowed(gh: FakeGitHub, installation: int) -> bool:
    """Count a write of ``installation`` and say whether GitHub's limits allow it."""
    now = gh.clock()
    with gh._lock:
        times = gh.writes_by_installation.setdefault(installation, [])
        if gh.secondary_limits:
            for window_s, limit in _LIMITS:
                if sum(1 for at in times[-limit:] if at > now - window_s) >= limit:
                    return False
        times.append(now)
    return True


# -- handlers, one per route -----------------------------------------------------------------


def _repo(params: Mapping[str, str]) -> str:
    return f"{params['owner']}/{params['repo']}"


def _access_token(
    gh: FakeGitHub, api: _Api, params: dict[str, str], body: Any, _i: int
) -> Response:
    return _json(api.issue_token(int(params["installation_id"])), 201)


def _app(gh: FakeGitHub, api: _Api, params: dict[str, str], body: Any, _i: int) -> Response:
    return _json({"id": gh.app_id, "slug": "migration-evals", "name": "migration-evals"})


def _conversion(gh: FakeGitHub, api: _Api, params: dict[str, str], body: Any, _i: int) -> Response:
    with gh._lock:
        made = gh.conversions.pop(params["code"], None)
    return _not_found() if made is None else _json(made, 201)


def _installations(
    gh: FakeGitHub, api: _Api, params: dict[str, str], body: Any, _i: int
) -> Response:
    return _json([{"id": i, "account": {"login": "example"}} for i in sorted(gh.installations)])


def _installation_repos(
    gh: FakeGitHub, api: _Api, params: dict[str, str], body: Any, inst: int
) -> Response:
    repos = [{"full_name": name} for name in gh.installations.get(inst, [])]
    return _json({"total_count": len(repos), "repositories": repos})


def _get_pull(gh: FakeGitHub, api: _Api, params: dict[str, str], body: Any, _i: int) -> Response:
    pull = gh.pulls.get((_repo(params), int(params["pull_number"])))
    if pull is None:
        return _not_found()
    if "diff" in request.headers.get("Accept", ""):
        return Response(pull.diff, mimetype="text/plain")
    return _json(pull.data)


def _list_pulls(gh: FakeGitHub, api: _Api, params: dict[str, str], body: Any, _i: int) -> Response:
    repo = _repo(params)
    found = [
        p.data for (r, _), p in sorted(gh.pulls.items()) if r == repo and p.data["state"] == "open"
    ]
    return _json(found if request.args.get("page", "1") == "1" else [])


def _commit_pulls(
    gh: FakeGitHub, api: _Api, params: dict[str, str], body: Any, _i: int
) -> Response:
    repo = _repo(params)
    found = [
        p.data
        for (r, _), p in sorted(gh.pulls.items())
        if r == repo and p.head_sha == params["sha"]
    ]
    return _json(found)


def _compare(gh: FakeGitHub, api: _Api, params: dict[str, str], body: Any, _i: int) -> Response:
    _, _, head = params["basehead"].partition("...")
    for (repo, _), pull in gh.pulls.items():
        if repo == _repo(params) and pull.head_sha == head:
            return _json({"merge_base_commit": {"sha": pull.merge_base}, "status": "ahead"})
    return _not_found()


def _contents(gh: FakeGitHub, api: _Api, params: dict[str, str], body: Any, _i: int) -> Response:
    text = gh.files.get((_repo(params), params["path"]))
    if text is None:
        return _not_found()
    content = base64.b64encode(text.encode()).decode()
    return _json({"type": "file", "encoding": "base64", "content": content, "path": params["path"]})


def _list_runs(gh: FakeGitHub, api: _Api, params: dict[str, str], body: Any, _i: int) -> Response:
    name = request.args.get("check_name")
    runs = [
        r
        for r in gh.check_runs
        if r["repo"] == _repo(params)
        and r["head_sha"] == params["ref"]
        and (not name or r["name"] == name)
    ]
    return _json({"total_count": len(runs), "check_runs": [_public(r) for r in runs]})


def _public(run: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in run.items() if k not in ("repo", "annotations")}


def _create_run(gh: FakeGitHub, api: _Api, params: dict[str, str], body: Any, _i: int) -> Response:
    with gh._lock:
        run = {
            "id": next(gh._ids),
            "repo": _repo(params),
            "name": body["name"],
            "head_sha": body["head_sha"],
            "external_id": body.get("external_id", ""),
            "status": body.get("status", "queued"),
            "conclusion": body.get("conclusion"),
            "output": body.get("output", {}),
            "annotations": list(body.get("output", {}).get("annotations", [])),
            "actions": body.get("actions", []),
        }
        gh.check_runs.append(run)
    return _json(_public(run), 201)


def _update_run(gh: FakeGitHub, api: _Api, params: dict[str, str], body: Any, _i: int) -> Response:
    with gh._lock:
        run = next((r for r in gh.check_runs if r["id"] == int(params["check_run_id"])), None)
        if run is None:
            return _not_found()
        for key in ("status", "conclusion", "actions", "external_id", "name", "details_url"):
            if key in body:
                run[key] = body[key]
        if "conclusion" in body:
            run["status"] = "completed"
        if "output" in body:
            output = dict(body["output"])
            run["annotations"].extend(output.pop("annotations", []))
            run["output"] = {**run.get("output", {}), **output}
    return _json(_public(run))


def _comment(gh: FakeGitHub, api: _Api, params: dict[str, str], body: Any, _i: int) -> Response:
    comment = {
        "id": next(gh._ids),
        "repo": _repo(params),
        "number": int(params["issue_number"]),
        **body,
    }
    gh.comments.append(comment)
    return _json(comment, 201)


def _reaction(gh: FakeGitHub, api: _Api, params: dict[str, str], body: Any, _i: int) -> Response:
    reaction = {"id": next(gh._ids), "comment_id": int(params["comment_id"]), **body}
    gh.reactions.append(reaction)
    return _json(reaction, 201)


def _permission(gh: FakeGitHub, api: _Api, params: dict[str, str], body: Any, _i: int) -> Response:
    found = gh.permissions.get((_repo(params), params["username"]))
    if found is None:
        return _not_found()
    permission, role = found
    return _json(
        {"permission": permission, "role_name": role, "user": {"login": params["username"]}}
    )


_HANDLERS: dict[
    tuple[str, str], Callable[[FakeGitHub, _Api, dict[str, str], Any, int], Response]
] = {
    ("POST", "/app/installations/{installation_id}/access_tokens"): _access_token,
    ("GET", "/app"): _app,
    ("POST", "/app-manifests/{code}/conversions"): _conversion,
    ("GET", "/app/installations"): _installations,
    ("GET", "/installation/repositories"): _installation_repos,
    ("GET", "/repos/{owner}/{repo}/pulls/{pull_number}"): _get_pull,
    ("GET", "/repos/{owner}/{repo}/pulls"): _list_pulls,
    ("GET", "/repos/{owner}/{repo}/commits/{sha}/pulls"): _commit_pulls,
    ("GET", "/repos/{owner}/{repo}/compare/{basehead}"): _compare,
    ("GET", "/repos/{owner}/{repo}/contents/{path}"): _contents,
    ("GET", "/repos/{owner}/{repo}/commits/{ref}/check-runs"): _list_runs,
    ("POST", "/repos/{owner}/{repo}/check-runs"): _create_run,
    ("PATCH", "/repos/{owner}/{repo}/check-runs/{check_run_id}"): _update_run,
    ("POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments"): _comment,
    ("POST", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"): _reaction,
    ("GET", "/repos/{owner}/{repo}/collaborators/{username}/permission"): _permission,
}
