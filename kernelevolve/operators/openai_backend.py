"""An OpenAI-compatible chat-completions endpoint (vLLM, SGLang, TGI, llama.cpp, or OpenAI itself).

Spoken over plain HTTP with the standard library so that self-hosted servers need no extra SDK. Tools
are sent in the function-calling format; a server that ignores them still
works through the fenced-block reply. Transient failures (connection, 408/409/429, 5xx) are retried with
exponential backoff here, then reported as :class:`TransientOperatorError`.
"""

from __future__ import annotations

import json
import os
import random
import time
import urllib.error
import urllib.request
from typing import Any

from kernelevolve.operators.base import OperatorError
from kernelevolve.operators.llm import ChatReply, ToolCall, TransientOperatorError

RETRYABLE = {408, 409, 429}


class OpenAIBackend:
    name = "openai"

    def __init__(self, model: str | None = None, max_tokens: int = 8192, max_retries: int | None = None,
                 timeout_s: float = 600.0) -> None:
        self.base_url = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1").rstrip("/")
        self.model = model or os.environ.get("OPENAI_MODEL", "default")
        self.max_tokens = max_tokens
        self.max_retries = int(os.environ.get("KE_LLM_MAX_RETRIES", "4")) if max_retries is None else max_retries
        self.timeout_s = timeout_s
        self.headers = {"Authorization": f"Bearer {os.environ.get('OPENAI_API_KEY', 'none')}",
                        "Content-Type": "application/json"}

    def chat(self, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ChatReply:
        body = {"model": self.model, "max_tokens": self.max_tokens,
                "messages": [{"role": "system", "content": system}, *messages],
                "tools": [{"type": "function", "function": {"name": t["name"], "description": t["description"],
                                                            "parameters": t["input_schema"]}} for t in tools]}
        data = self._post(body)
        try:
            message = data["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            raise OperatorError(f"openai: malformed reply: {str(data)[:200]}") from None
        calls = []
        for call in message.get("tool_calls") or []:
            try:
                args = json.loads(call["function"].get("arguments") or "{}")
            except json.JSONDecodeError:
                args = {}
            calls.append(ToolCall(call["id"], call["function"]["name"], args))
        usage = data.get("usage") or {}
        assistant = {"role": "assistant", "content": message.get("content") or ""}
        if message.get("tool_calls"):
            assistant["tool_calls"] = message["tool_calls"]
        return ChatReply(message.get("content") or "", calls, int(usage.get("prompt_tokens", 0)),
                         int(usage.get("completion_tokens", 0)), assistant,
                         data["choices"][0].get("finish_reason") or "")

    def tool_results(self, results: list[tuple[str, str]]) -> list[dict[str, Any]]:
        return [{"role": "tool", "tool_call_id": call_id, "content": text} for call_id, text in results]

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        last = ""
        data = json.dumps(body).encode()
        for attempt in range(self.max_retries + 1):
            request = urllib.request.Request(f"{self.base_url}/chat/completions", data=data, headers=self.headers)
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    return json.loads(response.read())
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code}: {exc.read()[:200].decode(errors='replace')}"
                if exc.code not in RETRYABLE and exc.code < 500:
                    raise OperatorError(f"openai: {last}") from None
            except (urllib.error.URLError, TimeoutError, ConnectionError, json.JSONDecodeError) as exc:
                last = f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}"
            if attempt < self.max_retries:
                time.sleep(min(30.0, 0.5 * 2**attempt) * random.uniform(0.75, 1.25))
        raise TransientOperatorError(f"openai: {last}")
