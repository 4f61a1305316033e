"""The Flask app factory: ``POST /webhook``, ``GET /healthz`` and ``GET /trials/<id>``.

The webhook answers fast and grades nothing: it checks the signature over the raw body
before parsing anything, routes the event, writes the delivery and its jobs in one
transaction and answers 202. Statuses: 401 bad or missing signature (nothing written),
400 malformed body or headers (logged, nothing written), 200 ping, 204 events it does
not handle, 202 accepted (also for a repeated delivery, which creates nothing new), 503
when the database cannot take the delivery (GitHub shows it failed; redeliver later).
``/healthz`` says whether the App can do its work (``migration_evals.bot.app.health``: ``ok``, or
``degraded`` / ``down`` with its reasons, then 503), the grading mode (live or replay) and
the adapters in use.
``/trials/<id>`` is a trial's page (``migration_evals.bot.app.trial_page``), the check runs' details
link; it opens only with the signature the App put in that link (``migration_evals.bot.app.links``),
else 403.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Mapping
from typing import Any

from flask import Flask, Response, jsonify, request

from migration_evals.bot.app.events import Routing, route
from migration_evals.bot.app.health import HealthReport, HealthStatus
from migration_evals.bot.app.links import SIGNATURE_PARAM, TrialLinks
from migration_evals.bot.app.registration import add_registered_notice
from migration_evals.bot.app.signature import signature_ok
from migration_evals.bot.app.trial_page import PAGE_HEADERS, TrialPage
from migration_evals.bot.jobs.intake import Intake
from migration_evals.core.errors import StoreError

__all__ = ["MAX_BODY_BYTES", "create_app", "parse_payload"]

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 25 * 1024 * 1024  # GitHub caps webhook payloads at 25 MB
# GitHub's payloads nest about ten levels; ids and counts fit in 64 bits.
MAX_PAYLOAD_DEPTH = 64
_INT_RANGE = range(-(2**63), 2**63)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is out of range")
    return value


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _check_shape(payload: Any) -> None:
    """Refuse nesting deeper than GitHub sends and integers no id or count can be; walked
    with a stack of its own, so depth costs no recursion."""
    stack = [(payload, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_PAYLOAD_DEPTH:
            raise ValueError(f"the payload nests deeper than {MAX_PAYLOAD_DEPTH} levels")
        if isinstance(value, dict):
            stack.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)
        elif isinstance(value, int) and not isinstance(value, bool) and value not in _INT_RANGE:
            raise ValueError("an integer in the payload is out of range")


def parse_payload(body: bytes) -> dict[str, Any]:
    """The webhook's JSON object; a ``ValueError`` says what makes it unusable."""
    try:
        payload = json.loads(body, parse_float=_finite, parse_constant=_refuse_constant)
    except RecursionError:
        raise ValueError(f"the payload nests deeper than {MAX_PAYLOAD_DEPTH} levels") from None
    if not isinstance(payload, dict):
        raise TypeError("the payload is not a JSON object")
    _check_shape(payload)
    return payload


_UNSIGNED = (
    "this link is not signed by the App: open the trial from its check run's Details link "
    "(or run `migration-evals show TRIAL_ID` where the ledger is)\n"
)


def _reply(code: int, /, **fields: object) -> tuple[Response, int]:
    return jsonify(fields), code


def create_app(
    *,
    secret: str,
    intake: Intake,
    app_slug: str,
    app_id: int | None = None,
    health: Callable[[], HealthReport] | None = None,
    about: Mapping[str, Any] | None = None,
    trial_page: TrialPage | None = None,
    links: TrialLinks | None = None,
    announce: bool = True,
) -> Flask:
    """The WSGI app; everything it needs is passed in (nothing is read from the environment)."""
    app = Flask("migration_evals")
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY_BYTES

    @app.post("/webhook")
    def webhook() -> tuple[Response, int]:
        body = request.get_data(cache=False)
        if not signature_ok(secret, body, request.headers.get("X-Hub-Signature-256")):
            log.warning("webhook refused: missing or wrong X-Hub-Signature-256")
            return _reply(401, error="missing or invalid X-Hub-Signature-256")
        event = request.headers.get("X-GitHub-Event", "")
        delivery = request.headers.get("X-GitHub-Delivery", "")
        if not event or not delivery:
            return _reply(400, error="X-GitHub-Event and X-GitHub-Delivery are required")
        try:
            payload = parse_payload(body)
            routed = route(
                event,
                payload,
                delivery=delivery,
                app_slug=app_slug,
                app_id=app_id,
                announce=announce,
            )
        except (ValueError, KeyError, TypeError, OverflowError) as exc:
            log.warning("webhook %s (%s) refused: malformed payload: %s", delivery, event, exc)
            return _reply(400, error=f"malformed payload: {type(exc).__name__}: {exc}")
        if routed.routing is Routing.PING:
            return _reply(200, pong=True)
        if routed.routing is Routing.NOT_HANDLED:
            return Response(status=204), 204
        try:
            accepted = intake.accept(delivery, event, routed.jobs)
        except StoreError as exc:
            log.error("webhook %s not stored: %s", delivery, exc)
            return _reply(503, error="the database is unavailable; redeliver later")
        return _reply(202, duplicate=accepted.duplicate, jobs=list(accepted.job_ids))

    @app.get("/healthz")
    def healthz() -> tuple[Response, int]:
        report = health() if health is not None else HealthReport(HealthStatus.OK, {})
        return _reply(200 if report.ok else 503, **report.to_dict(), **(about or {}))

    @app.get("/trials/<trial_id>")
    def trial(trial_id: str) -> Response:
        signature = request.args.get(SIGNATURE_PARAM)
        if links is None or not links.valid(trial_id, signature):
            return Response(_UNSIGNED, 403, mimetype="text/plain", headers=PAGE_HEADERS)
        page = trial_page(trial_id) if trial_page is not None and len(trial_id) <= 128 else None
        if page is None:
            return Response("no such trial\n", 404, mimetype="text/plain", headers=PAGE_HEADERS)
        return Response(page, 200, mimetype="text/html", headers=PAGE_HEADERS)

    add_registered_notice(app, app_id)  # the manifest flow's redirect lands somewhere
    return app
