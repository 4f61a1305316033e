"""The webhook endpoint: signatures before parsing, statuses, nothing half-written."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from migration_evals.bot.app.signature import sign, signature_ok
from migration_evals.bot.app.web import parse_payload
from tests.bot.app.conftest import SECRET, Harness, raw


def test_githubs_published_test_vector() -> None:
    expected = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert sign("It's a Secret to Everybody", b"Hello, World!") == expected
    assert signature_ok("It's a Secret to Everybody", b"Hello, World!", expected)
    assert not signature_ok("It's a Secret to Everybody", b"Hello, World!!", expected)


def test_missing_sha1_only_and_wrong_signatures_are_401_and_write_nothing(harness: Harness) -> None:
    body = raw("pull_request/opened.payload.json")
    sha1 = "sha1=" + hmac.new(SECRET.encode(), body, hashlib.sha1).hexdigest()
    wrong = sign("another secret", body)
    for signature in (None, sha1, wrong, sign(SECRET, body)[:-1], "sha256="):
        response = harness.deliver("pull_request", body, signature=signature)
        assert response.status_code == 401, signature
    assert harness.service.queue.admin.deliveries() == 0
    assert harness.service.queue.admin.jobs() == []


def test_a_body_changed_after_signing_is_refused(harness: Harness) -> None:
    body = raw("pull_request/opened.payload.json")
    signature = sign(SECRET, body)
    response = harness.deliver(
        "pull_request", body.replace(b"opened", b"closed"), signature=signature
    )
    assert response.status_code == 401


def test_malformed_json_with_a_valid_signature_is_400_and_writes_nothing(harness: Harness) -> None:
    for body in (
        b'{"action": "opened", ',
        b"[1, 2]",
        b'{"action": "opened", "installation": {"id": 1}}',
    ):
        assert harness.deliver("pull_request", body).status_code == 400
    assert harness.service.queue.admin.deliveries() == 0


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b'{"a": ' * 1500 + b"1" + b"}" * 1500, "nests deeper than 64 levels"),
        (b'{"a": ' * 100 + b"1" + b"}" * 100, "nests deeper than 64 levels"),
        (b'{"action": "opened", "installation": {"id": 1e999}}', "out of range"),
        (b'{"action": "opened", "installation": {"id": NaN}}', "NaN is not JSON"),
        (b'{"action": "opened", "installation": {"id": 99999999999999999999999}}', "out of range"),
    ],
    ids=["1500-deep", "100-deep", "1e999", "NaN", "huge-int"],
)
def test_signed_but_unusable_json_is_400_not_500(harness: Harness, body: bytes, why: str) -> None:
    response = harness.deliver("pull_request", body)
    assert response.status_code == 400
    assert why in response.get_json()["error"]
    assert harness.service.queue.admin.deliveries() == 0


def test_a_real_payload_is_within_the_shape_limits() -> None:
    for name in (
        "pull_request/opened.payload.json",
        "issue_comment/created.with-installation.payload.json",
    ):
        assert parse_payload(raw(name))


def test_ping_200_unhandled_204_healthz_200(harness: Harness) -> None:
    assert harness.deliver("ping", raw("ping/with-app_id.payload.json")).status_code == 200
    assert (
        harness.deliver("installation", raw("installation/created.payload.json")).status_code == 204
    )
    assert harness.client.get("/healthz").status_code == 200
    assert harness.service.queue.admin.deliveries() == 0


def test_missing_delivery_header_is_400(harness: Harness) -> None:
    body = raw("pull_request/opened.payload.json")
    response = harness.client.post(
        "/webhook",
        data=body,
        headers={"X-GitHub-Event": "pull_request", "X-Hub-Signature-256": sign(SECRET, body)},
    )
    assert response.status_code == 400


def test_a_repeated_delivery_is_acknowledged_and_creates_nothing(harness: Harness) -> None:
    body = raw("pull_request/opened.payload.json")
    first = harness.deliver("pull_request", body, delivery="d-1")
    again = harness.deliver("pull_request", body, delivery="d-1")
    assert (first.status_code, again.status_code) == (202, 202)
    assert first.json["duplicate"] is False and again.json == {"duplicate": True, "jobs": []}
    assert len(harness.service.queue.admin.jobs()) == 1
