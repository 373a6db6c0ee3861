"""Building the universal operator's prompt from runtime evidence (docs/architecture.md §8).

There is one prompt shape, not a Debug template and an Improve template: what changes is the evidence.
The phase (draft, debug, optimize) and the parent's state (an error class or what bounds it) decide which
knowledge-base passages are retrieved; the context memory supplies the parent's evaluation, its lineage,
its siblings and the run's failures; the spec and the parent's code are always included.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kernelevolve.knowledge.search import Passage
from kernelevolve.memory import RunMemory

# Error class or roofline bound of the parent -> the knowledge-base bottleneck tag that helps with it.
STATE_TO_TAG = {"compile_error": "compile", "incorrect": "correctness", "runtime_error": "correctness",
                "rejected": "correctness", "crash": "correctness", "timeout": "latency",
                "memory-bound": "memory", "compute-bound": "compute", "latency-bound": "latency"}
CONSTRAINT_DOCS = ("constraints/candidate_format.md", "constraints/reply_format.md")

ROLE = """You are a GPU kernel engineer. You write Triton kernels that compute exactly what a PyTorch reference
computes, faster, on the named hardware target. Your candidate is checked for correctness on fresh inputs
and against anti-cheat rules, then timed (or simulated) on the target.

A candidate is one Python file defining `class TritonModel(nn.Module)` with the reference's constructor and
forward signatures. forward may only allocate outputs (torch.empty*), take views and launch @triton.jit
kernels; all arithmetic happens inside the kernels.

Work with the tools: read files, write candidate.py (or edit it with replace_in_file), run lint, search the
knowledge base. When you are done, reply with a short analysis (what you changed and why, 2-5 sentences).
If you cannot use tools, reply with exactly one fenced ```python block holding the complete candidate."""


@dataclass
class Phase:
    name: str  # draft | debug | optimize
    state: str  # the parent's state (memory.classify)
    tag: str | None  # knowledge-base bottleneck tag to retrieve for


def phase_of(memory: RunMemory | None, has_parent: bool) -> Phase:
    state = memory.parent_state if memory else ("root" if not has_parent else "correct")
    if not has_parent:
        return Phase("draft", state, None)
    tag = STATE_TO_TAG.get(state)
    return Phase("debug" if tag in ("compile", "correctness") else "optimize", state, tag)


def system_prompt(kb_root: Path) -> str:
    parts = [ROLE]
    for rel in CONSTRAINT_DOCS:
        path = kb_root / rel
        if path.is_file():
            text = path.read_text(encoding="utf-8").split("---", 2)[-1].strip()
            parts.append(f"## {rel}\n{text[:4000]}")
    return "\n\n".join(parts)


def task_prompt(op: str, target: str, spec_source: str, parent_source: str | None, phase: Phase,
                memory: RunMemory | None, knowledge: list[Passage], budget_tokens: int = 6000,
                second_parent_source: str | None = None, lowered_source: str | None = None) -> str:
    goal = {"draft": "Write a first correct, reasonably fast candidate.",
            "debug": f"The parent failed ({phase.state}). Fix it with the smallest change that makes it correct.",
            "optimize": f"The parent is correct and {phase.state}. Make it faster; keep it correct."}[phase.name]
    parts = [f"# Task\nOperator `{op}` on target `{target}`. Phase: {phase.name}. {goal}",
             f"# Reference (spec.py)\n```python\n{spec_source.strip()}\n```"]
    if lowered_source is not None and parent_source is None:
        parts.append("# A correct kernel (candidate.py starts as this copy)\nHere is a correct kernel, lowered offline "
                     "from the reference by template (kernelevolve.lowering); make it faster and keep it correct."
                     f"\n```python\n{lowered_source.strip()}\n```")
    if parent_source is not None:
        parts.append(f"# Parent candidate (parent.py; candidate.py starts as a copy)\n```python\n"
                     f"{parent_source.strip()}\n```")
    if second_parent_source is not None:
        parts.append("# Second parent (crossover: combine what makes each parent good)\n```python\n"
                     f"{second_parent_source.strip()}\n```")
    if memory is not None and memory.items:
        parts.append("# What the search knows\n" + memory.render(budget_tokens))
    if knowledge:
        why = f" for {phase.tag}" if phase.tag else ""
        parts.append(f"# Knowledge base excerpts{why} on {target}\n" + "\n\n".join(
            f"## {p.title} ({p.path}:{p.start_line})\n{p.excerpt}" for p in knowledge))
    return "\n\n".join(parts)
