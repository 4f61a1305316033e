"""Serving a socket server on a thread of its own that stops the moment it is told.

``socketserver``'s ``serve_forever`` notices ``shutdown()`` only when its poll interval
ends, so every stop waits up to that long: half a second by default, and a short interval
buys a quicker stop with a loop that wakes all the time. ``ServingThread`` waits on the
listening socket and on a wake-up socket together: it sleeps until a client connects, and
``stop()`` wakes it at once.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import socketserver
import threading

__all__ = ["ServingThread"]


class ServingThread:
    """Serves ``server`` on a daemon thread from ``start()`` until ``stop()``, which also
    closes it. Requests are handled as the server handles them (a ``ThreadingMixIn``
    server answers each on a thread of its own)."""

    def __init__(self, server: socketserver.TCPServer, *, name: str | None = None) -> None:
        self.server = server
        self._wake, self._waker = socket.socketpair()
        self._stopping = False
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop serving (requests already taken are finished as the server finishes
        them) and close the server."""
        self._stopping = True
        with contextlib.suppress(OSError):
            self._waker.send(b"\0")
        if self._thread.is_alive():
            self._thread.join(timeout)
        self.server.server_close()
        self._wake.close()
        self._waker.close()

    def _serve(self) -> None:
        # A client is waiting whenever the loop calls ``handle_request``: it must not wait.
        self.server.timeout = 0
        with selectors.DefaultSelector() as selector:
            selector.register(self.server, selectors.EVENT_READ)
            selector.register(self._wake, selectors.EVENT_READ)
            while not self._stopping:
                ready = selector.select()
                if self._stopping:
                    break
                if any(key.fileobj is self.server for key, _ in ready):
                    self.server.handle_request()
                self.server.service_actions()
