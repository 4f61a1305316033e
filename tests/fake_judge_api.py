"""A loopback HTTP server that speaks just enough of the Anthropic Messages and OpenAI Chat
Completions APIs for the real SDKs to talk to it (their ``base_url`` pointed here).

Tests script answers per path (status, headers, JSON body, a delay) and read back every
request the SDKs made. Nothing leaves the machine.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from migration_evals.core.serving import ServingThread

__all__ = [
    "ANTHROPIC_PATH",
    "OPENAI_PATH",
    "Canned",
    "FakeJudgeAPI",
    "Seen",
    "anthropic_message",
    "api_error",
    "openai_completion",
    "running_fake_api",
]

ANTHROPIC_PATH = "/v1/messages"
OPENAI_PATH = "/v1/chat/completions"


@dataclass(frozen=True)
class Seen:
    """One request as the server received it."""

    path: str
    headers: Mapping[str, str]
    body: Mapping[str, Any]


@dataclass(frozen=True)
class Canned:
    """One scripted answer; ``body`` may be a function of the request."""

    status: int = 200
    body: Mapping[str, Any] | Callable[[Seen], Mapping[str, Any]] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


def anthropic_message(
    text: str,
    *,
    stop_reason: str = "end_turn",
    input_tokens: int = 1200,
    output_tokens: int = 150,
    stop_details: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-5-5",
        "content": [{"type": "text", "text": text}] if text else [],
        "stop_reason": stop_reason,
        "stop_details": stop_details,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def openai_completion(
    content: str | None,
    *,
    finish_reason: str = "stop",
    refusal: str | None = None,
    prompt_tokens: int = 1100,
    completion_tokens: int = 400,
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_780_000_000,
        "model": "gpt-5",
        "choices": [
            {
                "index": 0,
                "finish_reason": finish_reason,
                "message": {"role": "assistant", "content": content, "refusal": refusal},
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def api_error(kind: str, message: str) -> dict[str, Any]:
    """An error body shaped like both providers' (``{"error": {"type", "message"}}``)."""
    return {"type": "error", "error": {"type": kind, "message": message}}


class FakeJudgeAPI:
    """Scripted answers per path; unscripted requests get a loud 599."""

    def __init__(self) -> None:
        self._script: dict[str, deque[Canned]] = defaultdict(deque)
        self._lock = threading.Lock()
        self.requests: list[Seen] = []
        self.url = ""

    def reset(self) -> None:
        """Forget the script and the requests (the server is shared between tests)."""
        with self._lock:
            self._script.clear()
            self.requests.clear()

    def script(self, path: str, *answers: Canned) -> None:
        with self._lock:
            self._script[path].extend(answers)

    def seen(self, path: str) -> list[Seen]:
        with self._lock:
            return [r for r in self.requests if r.path == path]

    def answer(self, seen: Seen) -> Canned:
        with self._lock:
            self.requests.append(seen)
            queue = self._script[seen.path]
            if not queue:
                return Canned(599, api_error("fake", f"nothing scripted for {seen.path}"))
            return queue.popleft()


def _handler(api: FakeJudgeAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out as two small writes

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            seen = Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            canned = api.answer(seen)
            if canned.delay_s:
                time.sleep(canned.delay_s)
            data = canned.body(seen) if callable(canned.body) else canned.body
            payload = json.dumps(data).encode()
            try:
                self.send_response(canned.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                for name, value in canned.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test): nothing to answer

        do_GET = do_POST  # a model list (health probes): scripted like any other path

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients that time out close their sockets; that is the point of those tests


@contextmanager
def running_fake_api() -> Iterator[FakeJudgeAPI]:
    api = FakeJudgeAPI()
    server = _Server(("127.0.0.1", 0), _handler(api))
    api.url = f"http://127.0.0.1:{server.server_address[1]}"
    serving = ServingThread(server)
    serving.start()
    try:
        yield api
    finally:
        serving.stop()
