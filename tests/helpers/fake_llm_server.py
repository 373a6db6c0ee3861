"""A loopback HTTP server that speaks Anthropic's Messages API (tool use included), for driving the real
``anthropic`` SDK end to end. It is scripted, not a model: never present its output as a model's result.

Modes:
- ``agent``: per conversation, turn 1 calls ``kb_search``, turn 2 ``write_file`` with a candidate from
  ``make_candidate(n)``, turn 3 ``lint``, turn 4 ends with a short analysis.
- ``plain``: every reply is text holding exactly one fenced python block (no tools used).
- ``fail``: every request gets HTTP 500 (the SDK retries, then the operator reports a transient failure).
``/v1/chat/completions`` (the OpenAI-compatible dialect) always answers with one fenced python block.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeMessagesServer:
    def __init__(self, mode: str, make_candidate: Callable[[int], str]) -> None:
        self.mode, self.make_candidate = mode, make_candidate
        self.requests: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._candidates = itertools.count(0)
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                status, reply = server.answer(self.path, body)
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> FakeMessagesServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append({"path": path, "body": body})
            n = next(self._ids)
        if self.mode == "fail":
            return 500, {"type": "error", "error": {"type": "api_error", "message": "scripted failure"}}
        if path.endswith("/chat/completions"):  # the OpenAI-compatible dialect: plain text replies only
            text = "```python\n" + self.make_candidate(next(self._candidates)) + "```"
            return 200, {"id": f"chatcmpl-{n}", "object": "chat.completion", "model": body.get("model", ""),
                         "choices": [{"index": 0, "finish_reason": "stop",
                                      "message": {"role": "assistant", "content": text}}],
                         "usage": {"prompt_tokens": 2000 + n, "completion_tokens": 200 + n}}
        if not path.endswith("/v1/messages"):
            return 404, {"type": "error", "error": {"type": "not_found_error", "message": path}}
        turn = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        if self.mode == "plain":
            return 200, self._message(n, [{"type": "text", "text": "Here is the kernel.\n```python\n"
                                           + self.make_candidate(next(self._candidates)) + "```\n"}], "end_turn")
        if turn < 4:
            name, args = [
                ("kb_search", lambda: {"query": "memory bound elementwise block size", "bottleneck": "memory"}),
                ("grep", lambda: {"pattern": "ke_code_root_marker"}),
                ("write_file", lambda: {"path": "candidate.py",
                                        "content": self.make_candidate(next(self._candidates))}),
                ("lint", lambda: {}),
            ][turn]
            args = args()
            return 200, self._message(n, [{"type": "text", "text": f"Step {turn + 1}."},
                                          {"type": "tool_use", "id": f"toolu_{n}", "name": name, "input": args}],
                                      "tool_use")
        return 200, self._message(n, [{"type": "text", "text": "Changed the block size to cut launch overhead."}],
                                  "end_turn")

    @staticmethod
    def _message(n: int, content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
        return {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": "scripted-test-double",
                "content": content, "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": 1000 + n, "output_tokens": 100 + n}}
