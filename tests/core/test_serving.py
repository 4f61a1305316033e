"""A served socket server answers while it runs and stops without waiting out a poll."""

from __future__ import annotations

import socket
import socketserver
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from migration_evals.core.serving import ServingThread


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("content-length", "5")
        self.end_headers()
        self.wfile.write(b"hello")

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_requests_are_answered_until_the_stop_which_is_at_once() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    port = server.server_address[1]
    serving = ServingThread(server)
    serving.start()
    for _ in range(3):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as reply:
            assert reply.read() == b"hello"
    time.sleep(0.05)  # the loop is asleep on its sockets
    started = time.monotonic()
    serving.stop()
    # serve_forever's default poll would take up to 0.5 s; a wake-up takes next to none.
    assert time.monotonic() - started < 0.25
    with (
        pytest.raises(ConnectionRefusedError),
        socket.create_connection(("127.0.0.1", port), timeout=1),
    ):
        pass  # closed: refused


def test_a_server_never_started_is_stopped_and_closed_all_the_same() -> None:
    server = socketserver.TCPServer(("127.0.0.1", 0), socketserver.BaseRequestHandler)
    ServingThread(server).stop()
    assert server.socket.fileno() == -1
