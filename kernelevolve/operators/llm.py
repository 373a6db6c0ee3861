"""The universal operator with an LLM behind it: one agentic loop, any chat backend.

Per expansion: retrieve knowledge for the phase and the parent's state, build the prompt, then let the
model call tools (read, write, edit, lint, knowledge-base search) for at most ``max_steps`` turns. The
candidate is what the model wrote to ``candidate.py``, or the one fenced python block of its final reply.
A reply with neither still becomes a node (an empty candidate fails evaluation as a compile error), so a
confused model costs one node of budget, never the run. API failures that survive the SDK's own retries
raise :class:`TransientOperatorError`, which the orchestrator retries later.
"""

from __future__ import annotations

import json
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from kernelevolve.knowledge.documents import Document, load_documents
from kernelevolve.knowledge.search import rank, select
from kernelevolve.operators.base import Proposal, ProposalContext
from kernelevolve.operators.prompting import phase_of, system_prompt, task_prompt
from kernelevolve.operators.workspace import TOOLS, Workspace, extract_candidate
from search.node import Node

# USD per million (input, output) tokens; a model not listed is recorded with cost 0 and its token counts.
PRICES = {"claude-opus-4-1": (15.0, 75.0), "claude-sonnet-4-5": (3.0, 15.0), "claude-haiku-4-5": (1.0, 5.0)}


class TransientOperatorError(Exception):
    """The API could not be reached or was overloaded after retries; the expansion can be tried again."""


@dataclass
class ToolCall:
    id: str
    name: str
    args: dict[str, Any]


@dataclass
class ChatReply:
    text: str
    tool_calls: list[ToolCall]
    tokens_in: int
    tokens_out: int
    assistant_message: dict[str, Any]
    stop_reason: str = ""


class ChatBackend(Protocol):
    name: str
    model: str

    def chat(self, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ChatReply: ...

    def tool_results(self, results: list[tuple[str, str]]) -> list[dict[str, Any]]: ...


@dataclass
class Transcript:
    system: str
    messages: list[dict[str, Any]] = field(default_factory=list)

    def dump(self) -> str:
        return json.dumps({"system": self.system, "messages": self.messages}, indent=1, default=str)


class LLMOperator:
    wants_memory = True
    supports_crossover = True

    def __init__(self, backend: ChatBackend, kb_root: Path, max_steps: int = 8, knowledge_k: int = 4,
                 spec_path: str | None = None, code_roots: list[Path] | None = None) -> None:
        self.backend, self.kb_root, self.max_steps, self.knowledge_k = backend, kb_root, max_steps, knowledge_k
        self.name = backend.name
        self.spec_path = spec_path
        self.code_roots = list(code_roots or [])
        self._interpreter: Any = None
        self._interpreter_lock = threading.Lock()
        self._docs: list[Document] | None = None
        self._lowered: str | None = None

    @property
    def docs(self) -> list[Document]:
        """The knowledge base, parsed once per operator: it does not change during a run."""
        if self._docs is None:
            self._docs = load_documents(self.kb_root)[0]
        return self._docs

    def interpret(self, source: str) -> str:
        """Lint's second half: the candidate run in the sandbox on Triton's CPU interpreter (small inputs)."""
        if self.spec_path is None:
            return "interpreter check skipped (no spec file)"
        from interpreters.executor import LocalExecutor
        from interpreters.targets import get_target

        with self._interpreter_lock:
            if self._interpreter is None:
                scratch = Path(tempfile.mkdtemp(prefix="ke-lint-")) / "scratch"
                self._interpreter = LocalExecutor(get_target("cpu"), scratch, timeout_s=60.0)
            result = self._interpreter.evaluate(Path(self.spec_path), source)
        if result.status == "ok":
            return "ok: runs correctly on the CPU interpreter (small test inputs; not timed)"
        return f"CPU interpreter: {result.status}: {result.reason}"

    def lowered(self, context: ProposalContext) -> str | None:
        """The offline template lowering of the reference, the draft's starting point ("here is a correct
        kernel; make it faster"); None where the lowering does not cover the reference. Computed once."""
        if self._lowered is None:
            from kernelevolve.lowering import LoweringError, lower_spec_text

            try:
                spec = context.spec_source
                self._lowered = lower_spec_text(context.op, spec, context.target) if spec else ""
            except LoweringError:
                self._lowered = ""
        return self._lowered or None

    def propose(self, parent: Node | None, context: ProposalContext) -> list[Proposal]:
        memory = context.memory
        phase = phase_of(memory, parent is not None)
        chosen = select(self.docs, context.target, context.vendor, phase.tag, phase.name)
        query = " ".join(filter(None, [context.op, phase.state, phase.tag or "",
                                       context.parent_result.reason if context.parent_result else ""]))
        knowledge = rank(chosen, query, self.knowledge_k)
        transcript = Transcript(system_prompt(self.kb_root))
        lowered = self.lowered(context) if parent is None else None
        transcript.messages.append({"role": "user", "content": task_prompt(
            context.op, context.target, context.spec_source, context.parent_source, phase, memory, knowledge,
            second_parent_source=context.second_parent_source, lowered_source=lowered)})
        workspace = Workspace(context.spec_source, context.parent_source or lowered, self.kb_root, context.target,
                              context.vendor, self.interpret, self.docs, self.code_roots)
        tokens_in = tokens_out = 0
        final_text = ""
        for _ in range(self.max_steps):
            reply = self.backend.chat(transcript.system, transcript.messages, TOOLS)
            tokens_in, tokens_out = tokens_in + reply.tokens_in, tokens_out + reply.tokens_out
            transcript.messages.append(reply.assistant_message)
            final_text = reply.text
            if not reply.tool_calls:
                break
            results = [(call.id, workspace.run(call.name, call.args)) for call in reply.tool_calls]
            transcript.messages.extend(self.backend.tool_results(results))
        source = workspace.candidate or extract_candidate(final_text)
        how = "tools" if workspace.candidate else ("fenced block" if source else "none")
        price_in, price_out = PRICES.get(self.backend.model, (0.0, 0.0))
        meta = {"kind": "crossover" if context.second_parent is not None else phase.name, "state": phase.state,
                "model": self.backend.model, "reply": how,
                "tools_used": workspace.calls, "knowledge": [f"{p.path}:{p.start_line}" for p in knowledge],
                "analysis": final_text.strip()[:2000] if how == "tools" else ""}
        if context.second_parent is not None:
            meta["second_parent_id"] = context.second_parent.node_id
        return [Proposal(source or "# the operator produced no candidate\n", meta, tokens_in, tokens_out,
                         (tokens_in * price_in + tokens_out * price_out) / 1e6,
                         artifacts={"prompt.json": transcript.dump(), "response.md": final_text})]
