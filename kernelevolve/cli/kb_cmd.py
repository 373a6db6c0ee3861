"""``ke kb index|check|search``: maintain and query the knowledge base."""

from __future__ import annotations

import dataclasses
import sys
import tempfile
from pathlib import Path

import click

from kernelevolve.cli.common import emit_json, json_option, knowledge_root
from kernelevolve.errors import RunFailed, UserError

kb_dir_option = click.option("--kb-dir", default=None, help="Knowledge-base root (env KE_KB_DIR; default: "
                             "the shipped one).")


@click.group("kb")
def kb_group() -> None:
    """The knowledge base the operators read."""


@kb_group.command("index")
@kb_dir_option
def kb_index(kb_dir) -> None:
    """Regenerate index.md from the documents' front matter."""
    from kernelevolve.knowledge.documents import load_documents
    from kernelevolve.knowledge.index import write_index

    root = knowledge_root(kb_dir)
    docs, problems = load_documents(root)
    if problems:
        raise UserError(f"{len(problems)} document(s) have bad front matter, first: {problems[0]}")
    changed = write_index(root, docs)
    click.echo(f"index.md {'written' if changed else 'already current'}: {len(docs)} documents")


@kb_group.command("check")
@kb_dir_option
@click.option("--no-samples", is_flag=True, help="Skip running the code samples on the CPU interpreter.")
@json_option
def kb_check(kb_dir, no_samples, as_json) -> None:
    """Verify index, front matter, links, code paths, and that every code sample is correct."""
    from kernelevolve.knowledge.check import sample_problems, static_problems

    root = knowledge_root(kb_dir)
    docs, problems = static_problems(root)
    samples = [d for d in docs if d.kind == "sample"]
    if not no_samples:
        def progress(path: str, status: str) -> None:
            print(f"[kb check] {path}: {status}", file=sys.stderr, flush=True)

        with tempfile.TemporaryDirectory(prefix="ke-kb-check-") as tmp:
            problems += sample_problems(docs, root, Path(tmp) / "scratch", progress)
    summary = {"documents": len(docs) - len(samples), "samples": len(samples), "samples_run": not no_samples,
               "problems": problems}
    if as_json:
        emit_json(summary)
    else:
        for problem in problems:
            click.echo(f"problem: {problem}")
        click.echo(f"{summary['documents']} documents, {summary['samples']} code samples"
                   f"{'' if no_samples else ' (all run)'}: {len(problems)} problem(s)")
    if problems:
        raise RunFailed(f"knowledge base check found {len(problems)} problem(s); first: {problems[0]}")


@kb_group.command("search")
@click.argument("query")
@click.option("--hw", "target", default=None, help="Only documents that apply to this target.")
@click.option("--bottleneck", default=None, help="memory|compute|latency|occupancy|registers|launch|numerics|"
              "correctness|compile")
@click.option("--phase", default=None, help="draft|debug|optimize")
@click.option("--grep", "mode", flag_value="grep", help="Exact-string search (context lines).")
@click.option("--regex", "mode", flag_value="regex", help="Regular-expression search.")
@click.option("--files", "mode", flag_value="files", help="File-name search.")
@click.option("--code-root", "code_roots", multiple=True,
              help="Also search this folder (grep/regex/files); env KE_CODE_ROOTS adds more.")
@click.option("-k", "k", type=int, default=5, show_default=True)
@kb_dir_option
@json_option
def kb_search(query, target, bottleneck, phase, mode, code_roots, k, kb_dir, as_json) -> None:
    """Deep search: documents for the target/bottleneck/phase ranked against QUERY, with code they name."""
    from kernelevolve.knowledge import search as deep
    from kernelevolve.knowledge.documents import BOTTLENECKS, PHASES, known_targets, load_documents
    from kernelevolve.knowledge.roots import CodeRootError
    from kernelevolve.knowledge.roots import code_roots as configured_roots

    root = knowledge_root(kb_dir)
    try:
        roots = [root, *configured_roots(code_roots)]
    except CodeRootError as exc:
        raise UserError(str(exc)) from None
    if mode in ("grep", "regex"):
        try:
            found = deep.grep(query, roots, regex=mode == "regex")
        except Exception as exc:  # re.error: a bad pattern is bad input
            raise UserError(f"bad regular expression {query!r}: {exc}") from None
        _emit([dataclasses.asdict(m) for m in found], as_json, lambda m: f"{m['path']}:{m['line']}\n{m['text']}\n")
        return
    if mode == "files":
        _emit([{"path": p} for p in deep.find_files(query, roots)], as_json, lambda m: m["path"])
        return
    targets = known_targets()
    if target is not None and target not in targets:
        raise UserError(f"unknown hardware target '{target}' (known: {', '.join(sorted(targets))})")
    if bottleneck is not None and bottleneck not in BOTTLENECKS:
        raise UserError(f"unknown bottleneck '{bottleneck}' (known: {', '.join(sorted(BOTTLENECKS))})")
    if phase is not None and phase not in PHASES:
        raise UserError(f"unknown phase '{phase}' (known: {', '.join(sorted(PHASES))})")
    docs, _ = load_documents(root)
    chosen = deep.select(docs, target, targets.get(target) if target else None, bottleneck, phase)
    passages = deep.rank(chosen, query, k)
    passages += deep.follow_code(passages, docs, query)
    _emit([dataclasses.asdict(p) for p in passages], as_json,
          lambda p: f"== {p['path']}:{p['start_line']} ({p['kind']}, score {p['score']}) {p['title']}\n"
                    f"{p['excerpt']}\n")


def _emit(rows: list[dict], as_json: bool, fmt) -> None:
    if as_json:
        emit_json({"results": rows})
        return
    if not rows:
        click.echo("no matches")
    for row in rows:
        click.echo(fmt(row))
