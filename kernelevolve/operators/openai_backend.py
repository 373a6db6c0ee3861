"""An OpenAI-compatible chat-completions endpoint (vLLM, SGLang, TGI, llama.cpp, or OpenAI itself).

Spoken over plain HTTP with ``httpx`` (already a dependency of the anthropic SDK) so that self-hosted
servers need no extra SDK. Tools are sent in the function-calling format; a server that ignores them still
works through the fenced-block reply. Transient failures (connection, 408/409/429, 5xx) are retried with
exponential backoff here, then reported as :class:`TransientOperatorError`.
"""

from __future__ import annotations

import json
import os
import random
import time
from typing import Any

from kernelevolve.operators.base import OperatorError
from kernelevolve.operators.llm import ChatReply, ToolCall, TransientOperatorError

RETRYABLE = {408, 409, 429}


class OpenAIBackend:
    name = "openai"

    def __init__(self, model: str | None = None, max_tokens: int = 8192, max_retries: int = 4,
                 timeout_s: float = 600.0) -> None:
        import httpx

        self.base_url = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1").rstrip("/")
        self.model = model or os.environ.get("OPENAI_MODEL", "default")
        self.max_tokens, self.max_retries = max_tokens, max_retries
        headers = {"Authorization": f"Bearer {os.environ.get('OPENAI_API_KEY', 'none')}"}
        self.http = httpx.Client(timeout=timeout_s, headers=headers)

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
        import httpx

        last = ""
        for attempt in range(self.max_retries + 1):
            try:
                response = self.http.post(f"{self.base_url}/chat/completions", json=body)
            except httpx.HTTPError as exc:
                last = f"{type(exc).__name__}: {exc}"
            else:
                if response.status_code < 300:
                    return response.json()
                last = f"HTTP {response.status_code}: {response.text[:200]}"
                if response.status_code not in RETRYABLE and response.status_code < 500:
                    raise OperatorError(f"openai: {last}")
            if attempt < self.max_retries:
                time.sleep(min(30.0, 0.5 * 2**attempt) * random.uniform(0.75, 1.25))
        raise TransientOperatorError(f"openai: {last}")
