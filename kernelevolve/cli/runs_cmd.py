"""``ke runs``, ``ke show RUN [--tree]`` and ``ke best RUN --out FILE``: reading stored runs.

All of them only read, through short-lived connections, so they work while a search is writing.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from kernelevolve.cli.common import emit_json, json_option, open_state, resolve_run, state_options
from kernelevolve.errors import UserError
from search.node import Node


def _run_dict(run, nodes: int) -> dict:
    row = dataclasses.asdict(run)
    row["nodes"] = nodes
    return row


def _node_dict(node: Node) -> dict:
    row = dataclasses.asdict(node)
    row["is_buggy"] = node.is_buggy
    return row


@click.command("runs")
@state_options
@json_option
def runs_cmd(state_dir, store_url, as_json) -> None:
    """List runs, newest first."""
    _, meta, _ = open_state(state_dir, store_url, create=False)
    counts = meta.run_node_counts()
    runs = meta.list_runs()
    if as_json:
        emit_json({"runs": [_run_dict(r, counts.get(r.run_id, 0)) for r in runs]})
        return
    click.echo(f"{'run':9} {'op':14} {'hw':9} {'strategy':12} {'status':11} {'nodes':>9} best")
    for r in runs:
        click.echo(f"{r.run_id:9} {r.op[:14]:14} {r.hw:9} {r.strategy:12} {r.status:11} "
                   f"{counts.get(r.run_id, 0):>4}/{r.budget:<4} {r.best_node_id or '-'}")


@click.command("show")
@click.argument("run_id")
@click.option("--tree", is_flag=True, help="Draw the search graph.")
@state_options
@json_option
def show_cmd(run_id, tree, state_dir, store_url, as_json) -> None:
    """Show a run and its nodes."""
    _, meta, _ = open_state(state_dir, store_url, create=False)
    run = meta.get_run(resolve_run(meta, run_id))
    nodes = meta.nodes(run.run_id)
    if as_json:
        emit_json({"run": _run_dict(run, len(nodes)), "nodes": [_node_dict(n) for n in nodes]})
        return
    click.echo(f"run {run.run_id}: op {run.op} on {run.hw}{' (simulated)' if run.simulated else ''}, "
               f"{run.strategy}, {len(nodes)}/{run.budget} nodes, {run.status}")
    if tree:
        for line in render_tree(nodes, run.best_node_id):
            click.echo(line)
    else:
        for n in nodes:
            click.echo(_node_line(n, run.best_node_id))


def _node_line(n: Node, best_id: int | None) -> str:
    star = " *best*" if n.node_id == best_id else ""
    parent = "root" if n.parent_id is None else str(n.parent_id)
    reason = f"  {n.reason[:80]}" if n.reason else ""
    seed = n.operator_meta.get("seeded_from")
    change = (f"seeded from {seed['run_id']}/{seed['node_id']} ({seed['hw']})" if seed else
              n.operator_meta.get("changes") or n.operator_meta.get("sample") or "")
    return f"node {n.node_id} <- {parent}: {n.status} fitness={n.fitness:.3f} {change}{star}{reason}"


def render_tree(nodes: list[Node], best_id: int | None) -> list[str]:
    children: dict[int | None, list[Node]] = {}
    for n in nodes:
        children.setdefault(n.parent_id, []).append(n)
    lines = ["root (PyTorch reference)"]

    def walk(parent: int | None, prefix: str) -> None:
        kids = children.get(parent, [])
        for i, n in enumerate(kids):
            last = i == len(kids) - 1
            lines.append(prefix + ("└── " if last else "├── ") + _node_line(n, best_id))
            walk(n.node_id, prefix + ("    " if last else "│   "))

    walk(None, "")
    return lines


@click.command("best")
@click.argument("run_id")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False), help="Where to write the kernel.")
@state_options
@json_option
def best_cmd(run_id, out, state_dir, store_url, as_json) -> None:
    """Write a run's best kernel to a file, with shape-aware dispatch to PyTorch where it lost."""
    import tempfile

    from kernelevolve.export import export

    _, meta, objects = open_state(state_dir, store_url, create=False)
    run = meta.get_run(resolve_run(meta, run_id))
    best = meta.best_nodes(run.run_id, 1)
    if not best:
        raise UserError(f"run {run.run_id} has no correct kernel")
    node = best[0]
    source = objects.get_text(node.path_ref)
    final_ref = f"runs/{run.run_id}/final.json"
    final = objects.get_json(final_ref) if objects.exists(final_ref) else None
    if not (final and final.get("node_id") == node.node_id and final.get("status") == "ok"):
        final = objects.get_json(objects.node_prefix(run.run_id, node.node_id) + "evaluation.json")
    out_path = Path(out)
    if not out_path.parent.is_dir():
        raise UserError(f"cannot write {out}: folder {out_path.parent} does not exist")
    with tempfile.TemporaryDirectory(prefix="ke-best-") as tmp:
        spec_path = Path(tmp) / f"{run.op}.py"  # the exact spec the run used, as stored with it
        spec_path.write_text(objects.get_text(f"specs/{run.spec_hash}.py"), encoding="utf-8")
        try:
            plan = export(out_path, source, spec_path, final, run.run_id, node.node_id, run.op, run.hw)
        except OSError as exc:
            raise UserError(f"cannot write {out}: {exc.strerror or exc}") from None
    payload = {"run_id": run.run_id, "node_id": node.node_id, "fitness": node.fitness, "out": out,
               "files": plan.files, "timings_from": plan.timings_from,
               "kernel_cases": [{"case": c, "speedup_vs_eager": s} for c, s in plan.won],
               "fallback_cases": [{"case": c, "speedup_vs_eager": s} for c, s in plan.lost]}
    if as_json:
        emit_json(payload)
        return
    click.echo(f"wrote node {node.node_id} of run {run.run_id} (fitness {node.fitness:.3f}) to {out}")
    if plan.untimed:
        click.echo("  no per-case timings (untimed target): the kernel is used for every shape")
    elif plan.lost:
        click.echo("  shape-aware dispatch: PyTorch is used where the kernel was not faster than eager:")
        for case, speedup in plan.lost:
            click.echo(f"    {case}: {speedup:.2f}x vs eager -> falls back to PyTorch")
        click.echo(f"  kernel and reference written next to it: {', '.join(plan.files[1:])}")
    else:
        click.echo(f"  the kernel won every measured case ({plan.timings_from}): no fallback needed")
