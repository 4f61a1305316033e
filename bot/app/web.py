"""The Flask app factory: ``POST /webhook`` and ``GET /healthz``.

The webhook answers fast and grades nothing: it checks the signature over the raw body
before parsing anything, routes the event, writes the delivery and its jobs in one
transaction and answers 202. Statuses: 401 bad or missing signature (nothing written),
400 malformed body or headers (logged, nothing written), 200 ping, 204 events it does
not handle, 202 accepted (also for a repeated delivery, which creates nothing new), 503
when the database cannot take the delivery (GitHub shows it failed; redeliver later).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

from flask import Flask, Response, jsonify, request

from bot.app.events import Routing, route
from bot.app.jobs import JobQueue
from bot.app.signature import signature_ok
from core.errors import StoreError

__all__ = ["MAX_BODY_BYTES", "create_app"]

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 25 * 1024 * 1024  # GitHub caps webhook payloads at 25 MB


def _reply(status: int, **fields: object) -> tuple[Response, int]:
    return jsonify(fields), status


def create_app(
    *,
    secret: str,
    queue: JobQueue,
    app_slug: str,
    app_id: int | None = None,
    healthy: Callable[[], bool] | None = None,
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
            payload = json.loads(body)
            if not isinstance(payload, dict):
                raise TypeError("the payload is not a JSON object")
            routed = route(event, payload, delivery=delivery, app_slug=app_slug, app_id=app_id)
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("webhook %s (%s) refused: malformed payload: %s", delivery, event, exc)
            return _reply(400, error=f"malformed payload: {type(exc).__name__}: {exc}")
        if routed.routing is Routing.PING:
            return _reply(200, pong=True)
        if routed.routing is Routing.NOT_HANDLED:
            return Response(status=204), 204
        try:
            accepted = queue.accept(delivery, event, routed.jobs)
        except StoreError as exc:
            log.error("webhook %s not stored: %s", delivery, exc)
            return _reply(503, error="the database is unavailable; redeliver later")
        return _reply(202, duplicate=accepted.duplicate, jobs=list(accepted.job_ids))

    @app.get("/healthz")
    def healthz() -> tuple[Response, int]:
        ok = healthy() if healthy is not None else True
        return _reply(200 if ok else 503, ok=ok)

    return app
