"""The registry gate: forwarding, the artifact store, offline mode, refusals, credentials.

A real gate on its Unix socket, in front of a loopback registry; the client speaks raw
HTTP over the socket as the resolution container's forwarder does.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import logging
import socket
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from migration_evals.core.ports import RegistryFetch
from migration_evals.oracles.ecosystems.go.registry_route import ROUTE as GO_ROUTE
from migration_evals.oracles.ecosystems.maven.registry_route import ROUTE as MAVEN_ROUTE
from migration_evals.oracles.sandbox.registry import GateSession, RegistryGate, Upstream, redact_url
from tests.conftest import free_port
from tests.fakes import FakeRegistry, armored_signature, signature_packet

JAR = "org/example/lib/1.0/lib-1.0.jar"
METADATA = "org/example/lib/maven-metadata.xml"
GO_MOD = "golang.org/x/text/@v/v0.21.0.mod"


class _UnixConnection(http.client.HTTPConnection):
    """HTTP over the gate's Unix socket."""

    def __init__(self, path: Path) -> None:
        super().__init__("registry-gate", timeout=10)
        self.socket_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(10)
        sock.connect(str(self.socket_path))
        self.sock = sock


def _ask(session: GateSession, path: str, method: str = "GET") -> tuple[int, bytes]:
    connection = _UnixConnection(session.socket_path)
    try:
        connection.request(method, path)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def _gate(tmp_path: Path, maven: str, *, offline: bool = False, go: str = "") -> RegistryGate:
    return RegistryGate(
        {"maven": Upstream(maven), "go": Upstream(go or maven)},
        routes=(MAVEN_ROUTE, GO_ROUTE),
        store=tmp_path / "store",
        caches=tmp_path / "caches",
        offline=offline,
    )


@pytest.fixture
def central(upstream_registry: FakeRegistry) -> FakeRegistry:
    """A Maven repository below ``/maven2`` holding one jar and its metadata."""
    upstream_registry.files.update(
        {f"maven2/{JAR}": b"jar-bytes", f"maven2/{METADATA}": b"<metadata/>"}
    )
    return upstream_registry


@pytest.fixture
def session(tmp_path: Path, central: FakeRegistry) -> Iterator[GateSession]:
    with _gate(tmp_path, f"{central.url}/maven2").session_for_run() as running:
        yield running


def test_a_request_is_forwarded_below_the_upstream_path_and_logged(
    session: GateSession, central: FakeRegistry
) -> None:
    assert _ask(session, f"/maven/{JAR}") == (200, b"jar-bytes")
    assert central.paths == [f"/maven2/{JAR}"]
    assert session.fetches == (RegistryFetch("maven", JAR, 200, "upstream"),)


def test_the_log_holds_every_answer_the_client_already_has(session: GateSession) -> None:
    # A resolver reads the log as soon as its container exits: right after the tool's
    # last answer (typically the 404 it gives up on), which must be there.
    for count in range(1, 31):
        assert _ask(session, f"/maven/org/example/lib/9.{count}/lib-9.{count}.pom")[0] == 404
        assert len(session.fetches) == count


def test_an_artifact_is_kept_and_served_from_the_store_the_second_time(
    tmp_path: Path, session: GateSession, central: FakeRegistry
) -> None:
    _ask(session, f"/maven/{JAR}")
    assert _ask(session, f"/maven/{JAR}") == (200, b"jar-bytes")
    assert central.paths == [f"/maven2/{JAR}"]
    assert [fetch.source for fetch in session.fetches] == ["upstream", "store"]
    assert (tmp_path / "store" / JAR).read_bytes() == b"jar-bytes"


def test_metadata_and_snapshots_are_asked_upstream_every_time(
    tmp_path: Path, session: GateSession, central: FakeRegistry
) -> None:
    snapshot = "org/example/lib/2.0-SNAPSHOT/lib-2.0-20240101.120000-1.jar"
    central.files[f"maven2/{snapshot}"] = b"snapshot"
    for _ in range(2):
        assert _ask(session, f"/maven/{METADATA}") == (200, b"<metadata/>")
        assert _ask(session, f"/maven/{snapshot}") == (200, b"snapshot")
    assert central.paths.count(f"/maven2/{METADATA}") == 2
    assert central.paths.count(f"/maven2/{snapshot}") == 2
    assert not (tmp_path / "store" / METADATA).exists()


def test_a_query_string_is_not_part_of_the_path(session: GateSession) -> None:
    assert _ask(session, f"/maven/{JAR}?x=1") == (200, b"jar-bytes")
    assert session.fetches[0].path == JAR


def test_a_404_upstream_is_a_404_logged_as_the_registrys_answer(
    tmp_path: Path, session: GateSession
) -> None:
    missing = "org/example/lib/9.9/lib-9.9.pom"
    assert _ask(session, f"/maven/{missing}") == (404, b"")
    assert session.fetches == (RegistryFetch("maven", missing, 404, "upstream"),)
    assert not (tmp_path / "store" / missing).exists()


def test_a_failing_upstream_is_a_502_upstream_error(
    session: GateSession, central: FakeRegistry
) -> None:
    central.status = 500
    assert _ask(session, f"/maven/{JAR}")[0] == 502
    assert session.fetches == (RegistryFetch("maven", JAR, 500, "upstream-error"),)


def test_an_unreachable_upstream_is_a_502_upstream_error(tmp_path: Path) -> None:
    closed = f"http://127.0.0.1:{free_port()}/maven2"
    with _gate(tmp_path, closed).session_for_run() as session:
        assert _ask(session, f"/maven/{JAR}")[0] == 502
        assert session.fetches == (RegistryFetch("maven", JAR, 502, "upstream-error"),)


def test_offline_the_store_answers_and_a_miss_is_503_without_asking_upstream(
    tmp_path: Path, central: FakeRegistry
) -> None:
    (tmp_path / "store" / JAR).parent.mkdir(parents=True)
    (tmp_path / "store" / JAR).write_bytes(b"stored")
    gate = _gate(tmp_path, f"{central.url}/maven2", offline=True)
    with gate.session_for_run() as session:
        assert _ask(session, f"/maven/{JAR}") == (200, b"stored")
        assert _ask(session, f"/maven/{METADATA}") == (503, b"")
        assert _ask(session, f"/go/{GO_MOD}") == (503, b"")
        # The log is in the order answers finished, which need not be the order asked.
        assert sorted((f.status, f.source) for f in session.fetches) == [
            (200, "store"),
            (503, "offline"),
            (503, "offline"),
        ]
    assert central.seen == []


def test_offline_go_is_served_from_the_module_cache_download_folder(
    tmp_path: Path, central: FakeRegistry
) -> None:
    cached = tmp_path / "caches" / GO_ROUTE.offline_cache / GO_MOD
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"module golang.org/x/text\n")
    gate = _gate(tmp_path, f"{central.url}/maven2", offline=True)
    with gate.session_for_run() as session:
        assert _ask(session, f"/go/{GO_MOD}") == (200, b"module golang.org/x/text\n")
        assert session.fetches == (RegistryFetch("go", GO_MOD, 200, "store"),)
    assert central.seen == []


def test_online_go_is_always_asked_upstream(tmp_path: Path, central: FakeRegistry) -> None:
    # The download folder is what earlier runs wrote; online, the proxy stays the authority.
    cached = tmp_path / "caches" / GO_ROUTE.offline_cache / GO_MOD
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"stale")
    central.files[f"go/{GO_MOD}"] = b"fresh"
    gate = _gate(tmp_path, f"{central.url}/maven2", go=f"{central.url}/go")
    with gate.session_for_run() as session:
        assert _ask(session, f"/go/{GO_MOD}") == (200, b"fresh")
    assert central.paths == [f"/go/{GO_MOD}"]


@pytest.mark.parametrize(
    "path",
    [
        "/maven/../secret",
        "/maven/org/../../secret",
        "/maven//secret",
        "/maven/org/./lib",
        "/maven/org/%2e%2e/%2e%2e/secret",
        "/maven/org/lib\\..\\..\\secret",
        "/maven/",
        "/npm/left-pad/-/left-pad-1.0.0.tgz",
        "http://evil.example/maven/org/x",
    ],
)
def test_unsafe_paths_and_unknown_routes_are_refused_and_never_forwarded(
    tmp_path: Path, session: GateSession, central: FakeRegistry, path: str
) -> None:
    (tmp_path / "secret").write_bytes(b"host secret")
    assert _ask(session, path) == (404, b"")
    assert [fetch.source for fetch in session.fetches] == ["refused"]
    assert central.seen == []


def test_a_symlink_in_the_store_is_not_followed(tmp_path: Path, central: FakeRegistry) -> None:
    (tmp_path / "secret").write_bytes(b"host secret")
    (tmp_path / "store" / "org").mkdir(parents=True)
    (tmp_path / "store" / "org" / "link.jar").symlink_to(tmp_path / "secret")
    gate = _gate(tmp_path, f"{central.url}/maven2", offline=True)
    with gate.session_for_run() as session:
        assert _ask(session, "/maven/org/link.jar") == (503, b"")


def test_a_symlinked_folder_in_the_go_download_folder_is_not_followed(
    tmp_path: Path, central: FakeRegistry
) -> None:
    # The module cache is writable by resolution runs: what they leave there must not
    # lead the gate to files outside it.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_bytes(b"host secret")
    (tmp_path / "caches" / GO_ROUTE.offline_cache).mkdir(parents=True)
    (tmp_path / "caches" / GO_ROUTE.offline_cache / "evil").symlink_to(outside)
    gate = _gate(tmp_path, f"{central.url}/maven2", offline=True)
    with gate.session_for_run() as session:
        assert _ask(session, "/go/evil/secret") == (503, b"")


SECRET = "s3cr3t-t0ken"


def test_credentials_go_upstream_as_basic_auth_and_nowhere_else(
    tmp_path: Path, central: FakeRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    host = central.url.removeprefix("http://")
    gate = _gate(tmp_path, f"http://deploy:{SECRET}@{host}/maven2")
    caplog.set_level(logging.DEBUG, logger="migration_evals.oracles.sandbox.registry")
    with gate.session_for_run() as session:
        assert _ask(session, f"/maven/{JAR}") == (200, b"jar-bytes")
        central.status = 503
        assert _ask(session, f"/maven/{METADATA}")[0] == 502
        fetches = session.fetches
    expected = "Basic " + base64.b64encode(f"deploy:{SECRET}".encode()).decode()
    assert [request.authorization for request in central.seen] == [expected, expected]
    assert f"maven=http://{host}/maven2" in gate.identity
    shown = [gate.identity, repr(gate.upstreams), caplog.text, *map(repr, fetches)]
    assert not [text for text in shown if SECRET in text or "deploy" in text]


def test_an_unreachable_upstream_with_credentials_logs_no_credentials(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    closed = f"http://deploy:{SECRET}@127.0.0.1:{free_port()}/maven2"
    caplog.set_level(logging.DEBUG, logger="migration_evals.oracles.sandbox.registry")
    with _gate(tmp_path, closed).session_for_run() as session:
        assert _ask(session, f"/maven/{JAR}")[0] == 502
    assert "unreachable" in caplog.text
    assert SECRET not in caplog.text


def test_redact_url_drops_user_and_password_and_keeps_the_rest() -> None:
    assert redact_url("https://u:p@repo.example:8443/m2?x=1") == "https://repo.example:8443/m2?x=1"
    assert redact_url("https://repo.example/m2") == "https://repo.example/m2"
    assert redact_url("http://u:p@[fd00::1]:8081/m2") == "http://[fd00::1]:8081/m2"


def test_an_upstream_url_keeps_an_ipv6_host_and_decodes_its_credentials() -> None:
    # A password holding "@" or ":" can only be written percent-encoded in a URL.
    upstream = Upstream("http://deploy:p%40ss%3Aword@[fd00::1]:8081/m2")
    assert upstream.target("org/x/a.pom") == (
        "http://[fd00::1]:8081/m2/org/x/a.pom",
        ("deploy", "p@ss:word"),
    )


def test_head_answers_without_a_body_and_keeps_nothing(
    tmp_path: Path, session: GateSession, central: FakeRegistry
) -> None:
    assert _ask(session, f"/maven/{JAR}", method="HEAD") == (200, b"")
    assert not (tmp_path / "store" / JAR).exists()
    assert _ask(session, f"/maven/{JAR}") == (200, b"jar-bytes")
    assert _ask(session, f"/maven/{JAR}", method="HEAD") == (200, b"")
    assert [fetch.source for fetch in session.fetches] == ["upstream", "upstream", "store"]
    assert len(central.seen) == 2


def test_a_stored_file_answers_head_with_its_length(tmp_path: Path, central: FakeRegistry) -> None:
    (tmp_path / "store" / JAR).parent.mkdir(parents=True)
    (tmp_path / "store" / JAR).write_bytes(b"12345")
    with _gate(tmp_path, central.url, offline=True).session_for_run() as session:
        connection = _UnixConnection(session.socket_path)
        connection.request("HEAD", f"/maven/{JAR}")
        response = connection.getresponse()
        assert (response.status, response.getheader("Content-Length")) == (200, "5")
        connection.close()


def test_the_session_removes_its_socket_folder_on_exit(
    tmp_path: Path, central: FakeRegistry
) -> None:
    with _gate(tmp_path, central.url).session_for_run() as session:
        assert session.socket_path.is_socket()
    assert not session.folder.exists()


def test_a_session_on_a_tcp_port_answers_and_logs_the_same(
    tmp_path: Path, central: FakeRegistry
) -> None:
    # For engines that cannot mount the gate's socket: runs reach it over a network.
    with _gate(tmp_path, f"{central.url}/maven2").session_for_run("127.0.0.1") as running:
        host, port = running.address
        assert host == "127.0.0.1" and port > 0
        connection = http.client.HTTPConnection(host, port, timeout=10)
        try:
            connection.request("GET", f"/maven/{JAR}")
            response = connection.getresponse()
            assert (response.status, response.read()) == (200, b"jar-bytes")
        finally:
            connection.close()
        assert [(f.path, f.source) for f in running.fetches] == [(JAR, "upstream")]


def test_answers_on_a_tcp_port_wait_for_no_acknowledgement(tmp_path: Path) -> None:
    # The gate writes an answer's headers and its body apart. With Nagle's algorithm on,
    # the body waits for the client's delayed acknowledgement of the headers: about 40 ms
    # an answer here, 2 s for these 50. Without it they take a few milliseconds in all.
    (tmp_path / "store" / JAR).parent.mkdir(parents=True)
    (tmp_path / "store" / JAR).write_bytes(b"x" * 5000)
    gate = _gate(tmp_path, "http://127.0.0.1:9", offline=True)
    with gate.session_for_run("127.0.0.1") as running:
        connection = http.client.HTTPConnection(*running.address, timeout=10)
        started = time.monotonic()
        try:
            for _ in range(50):  # one connection, kept alive, as a resolver keeps it
                connection.request("GET", f"/maven/{JAR}")
                response = connection.getresponse()
                assert (response.status, len(response.read())) == (200, 5000)
        finally:
            connection.close()
        assert time.monotonic() - started < 0.5


def test_a_percent_encoded_path_is_served_as_what_it_means(
    tmp_path: Path, central: FakeRegistry
) -> None:
    # The go command asks for github.com/!burnt!sushi/... with the "!" percent-encoded.
    module = "github.com/!burnt!sushi/toml/@v/v0.3.1.mod"
    central.files[f"go/{module}"] = b"module github.com/BurntSushi/toml\n"
    gate = _gate(tmp_path, f"{central.url}/maven2", go=f"{central.url}/go")
    with gate.session_for_run() as running:
        status, body = _ask(running, "/go/" + module.replace("!", "%21"))
        assert (status, body) == (200, b"module github.com/BurntSushi/toml\n")
        assert [f.path for f in running.fetches] == [module]
        refused, _ = _ask(running, "/go/github.com/x/%2e%2e/%2e%2e/etc/passwd")
        assert refused == 404  # decoded first, then judged: still no way out


def test_the_gates_own_files_in_the_store_are_never_served(
    tmp_path: Path, central: FakeRegistry
) -> None:
    dates = tmp_path / "store" / ".published" / "org" / "example" / "lib" / "published.json"
    dates.parent.mkdir(parents=True)
    dates.write_text("{}")
    with _gate(tmp_path, f"{central.url}/maven2").session_for_run() as session:
        path = "/maven/.published/org/example/lib/published.json"
        assert _ask(session, path) == (404, b"")
        assert [fetch.source for fetch in session.fetches] == ["refused"]
    assert central.seen == []


_VERSIONED = b"""<metadata>
  <groupId>org.example</groupId>
  <artifactId>lib</artifactId>
  <versioning>
    <latest>2.0</latest>
    <release>2.0</release>
    <versions>
      <version>1.0</version>
      <version>2.0</version>
    </versions>
    <lastUpdated>20260101000000</lastUpdated>
  </versioning>
</metadata>
"""


@pytest.fixture
def dated(central: FakeRegistry) -> FakeRegistry:
    """``lib`` 1.0 published in 2014 (the registry's Last-Modified says so), 2.0 in 2026
    (no header: its signature says so)."""
    central.files[f"maven2/{METADATA}"] = _VERSIONED
    for version in ("1.0", "2.0"):
        central.files[f"maven2/org/example/lib/{version}/lib-{version}.pom"] = b"<project/>"
    central.modified["maven2/org/example/lib/1.0/lib-1.0.pom"] = "Wed, 05 Mar 2014 10:00:00 GMT"
    signed = int(datetime(2026, 1, 1, tzinfo=UTC).timestamp())
    signature = armored_signature(signature_packet(signed))
    central.files["maven2/org/example/lib/2.0/lib-2.0.pom.asc"] = signature
    return central


def test_a_session_as_of_a_date_lists_only_the_versions_published_by_then(
    tmp_path: Path, dated: FakeRegistry
) -> None:
    gate = _gate(tmp_path, f"{dated.url}/maven2")
    with gate.session_for_run(as_of=datetime(2015, 6, 1, tzinfo=UTC)) as session:
        status, body = _ask(session, f"/maven/{METADATA}")
        assert status == 200
        assert b"<version>2.0</version>" not in body
        assert b"<release>1.0</release>" in body
        status, sha1 = _ask(session, f"/maven/{METADATA}.sha1")
        assert (status, sha1) == (200, hashlib.sha1(body).hexdigest().encode())  # noqa: S324
        assert _ask(session, f"/maven/{JAR}") == (200, b"jar-bytes")  # artifacts as always
    asked = sorted(f"{r.method} {r.path}" for r in dated.seen if "lib-" in r.path)
    assert asked == [
        "GET /maven2/org/example/lib/1.0/lib-1.0.jar",
        "GET /maven2/org/example/lib/2.0/lib-2.0.pom.asc",
        "HEAD /maven2/org/example/lib/1.0/lib-1.0.pom",
        "HEAD /maven2/org/example/lib/2.0/lib-2.0.pom",
    ]
    # Today's registry, for a session without a date, and the dates are not asked again.
    with gate.session_for_run() as session:
        assert _ask(session, f"/maven/{METADATA}") == (200, _VERSIONED)
    with gate.session_for_run(as_of=datetime(2027, 1, 1, tzinfo=UTC)) as session:
        assert _ask(session, f"/maven/{METADATA}") == (200, _VERSIONED)
    assert len([r for r in dated.seen if "lib-" in r.path]) == 4  # dates are not asked again


def test_as_of_a_date_a_registry_failure_is_an_upstream_error(
    tmp_path: Path, dated: FakeRegistry
) -> None:
    gate = _gate(tmp_path, f"{dated.url}/maven2")
    gate.dates.ask = lambda _method, _path: (503, None, b"")  # metadata comes, dates do not
    with gate.session_for_run(as_of=datetime(2015, 6, 1, tzinfo=UTC)) as session:
        assert _ask(session, f"/maven/{METADATA}")[0] == 502
        assert session.fetches == (RegistryFetch("maven", METADATA, 502, "upstream-error"),)
    dated.status = 500
    with gate.session_for_run(as_of=datetime(2015, 6, 1, tzinfo=UTC)) as session:
        assert _ask(session, f"/maven/{METADATA}")[0] == 502
        assert session.fetches == (RegistryFetch("maven", METADATA, 500, "upstream-error"),)


def test_as_of_a_date_offline_metadata_is_503(tmp_path: Path, dated: FakeRegistry) -> None:
    gate = _gate(tmp_path, f"{dated.url}/maven2", offline=True)
    with gate.session_for_run(as_of=datetime(2015, 6, 1, tzinfo=UTC)) as session:
        assert _ask(session, f"/maven/{METADATA}")[0] == 503
    assert dated.seen == []
