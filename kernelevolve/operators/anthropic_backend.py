"""Anthropic's Messages API through the official ``anthropic`` SDK (tool use included).

The SDK retries connection errors, 408/409/429 and 5xx with exponential backoff (``max_retries``); what
still fails after that is turned into :class:`TransientOperatorError` (try the expansion again later) or,
for errors that retrying cannot fix (bad key, bad request), into :class:`OperatorError` (the run stops,
resumable). ``ANTHROPIC_BASE_URL`` points the SDK at another server, such as a gateway or a test double.
"""

from __future__ import annotations

from typing import Any

from kernelevolve.operators.base import OperatorError
from kernelevolve.operators.llm import ChatReply, ToolCall, TransientOperatorError

DEFAULT_MODEL = "claude-sonnet-4-5"


class AnthropicBackend:
    name = "anthropic"

    def __init__(self, model: str | None = None, max_tokens: int = 8192, max_retries: int | None = None,
                 timeout_s: float = 600.0) -> None:
        import os

        import anthropic

        if max_retries is None:
            max_retries = int(os.environ.get("KE_LLM_MAX_RETRIES", "4"))
        self.model = model or DEFAULT_MODEL
        self.max_tokens = max_tokens
        self._sdk = anthropic
        self.client = anthropic.Anthropic(max_retries=max_retries, timeout=timeout_s)

    def chat(self, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ChatReply:
        sdk = self._sdk
        try:
            response = self.client.messages.create(model=self.model, max_tokens=self.max_tokens, system=system,
                                                   messages=messages, tools=tools)
        except (sdk.APIConnectionError, sdk.RateLimitError, sdk.InternalServerError) as exc:
            raise TransientOperatorError(f"anthropic: {type(exc).__name__}: {_short(exc)}") from None
        except sdk.APIStatusError as exc:
            if exc.status_code in (408, 409, 429) or exc.status_code >= 500:
                raise TransientOperatorError(f"anthropic: HTTP {exc.status_code}: {_short(exc)}") from None
            raise OperatorError(f"anthropic: HTTP {exc.status_code}: {_short(exc)}") from None
        text = "".join(block.text for block in response.content if block.type == "text")
        calls = [ToolCall(block.id, block.name, dict(block.input or {})) for block in response.content
                 if block.type == "tool_use"]
        content = [block.model_dump(exclude_none=True, mode="json") for block in response.content]
        return ChatReply(text, calls, response.usage.input_tokens, response.usage.output_tokens,
                         {"role": "assistant", "content": content}, response.stop_reason or "")

    def tool_results(self, results: list[tuple[str, str]]) -> list[dict[str, Any]]:
        return [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": text}
                                             for call_id, text in results]}]


def _short(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]
