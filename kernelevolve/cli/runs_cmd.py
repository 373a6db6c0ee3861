"""``ke runs``, ``ke show RUN [--tree]`` and ``ke best RUN --out FILE [--format F]``: reading stored runs.

All of them only read, through short-lived connections, so they work while a search is writing. ``ke best`` is
``kernelevolve.api.export`` plus its printout; the others read the store directly.
"""

from __future__ import annotations

import dataclasses

import click

from kernelevolve.api.stores import open_state, resolve_run
from kernelevolve.cli.common import emit_json, json_option, state_options
from kernelevolve.store.recovery import missing_artifacts
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
    from kernelevolve.cli.tables import RUN_COLUMNS, render, run_cells

    _, meta, _ = open_state(state_dir, store_url, create=False)
    counts = meta.run_node_counts()
    runs = meta.list_runs()
    best = {r.run_id: next(iter(meta.best_nodes(r.run_id, 1)), None) for r in runs}  # as 'ke campaign' has it
    if as_json:
        rows = [_run_dict(r, counts.get(r.run_id, 0)) for r in runs]
        for row in rows:
            node = best[row["run_id"]]
            row.update(best_node_id=node.node_id if node else None, best_fitness=node.fitness if node else None)
        emit_json({"runs": rows})
        return
    for line in render(RUN_COLUMNS, [
            run_cells(r.run_id, r.op, r.hw, r.strategy, r.status, counts.get(r.run_id, 0), r.budget,
                      best[r.run_id].node_id if best[r.run_id] else None,
                      best[r.run_id].fitness if best[r.run_id] else None) for r in runs]):
        click.echo(line)


@click.command("show")
@click.argument("run_id")
@click.option("--tree", is_flag=True, help="Draw the search graph.")
@state_options
@json_option
def show_cmd(run_id, tree, state_dir, store_url, as_json) -> None:
    """Show a run and its nodes."""
    _, meta, objects = open_state(state_dir, store_url, create=False)
    run = meta.get_run(resolve_run(meta, run_id))
    nodes = meta.nodes(run.run_id)
    if as_json:
        lost = missing_artifacts(meta, objects, run.run_id)
        emit_json({"run": _run_dict(run, len(nodes)), "nodes": [_node_dict(n) for n in nodes],
                   "missing_artifacts": {str(n): names for n, names in lost.items()}})
        return
    click.echo(f"run {run.run_id}: op {run.op} on {run.hw}{' (simulated)' if run.simulated else ''}, "
               f"{run.strategy}, {len(nodes)}/{run.budget} nodes, {run.status}")
    _report_missing(meta, objects, run.run_id)
    if tree:
        for line in render_tree(nodes, run.best_node_id):
            click.echo(line)
    else:
        for n in nodes:
            click.echo(_node_line(n, run.best_node_id))


def _report_missing(meta, objects, run_id: str) -> None:
    """A run whose artifacts were lost is not healthy: say which nodes lost what (stdout, after the header)."""
    lost = missing_artifacts(meta, objects, run_id)
    if lost:
        listed = "; ".join(f"node {n}: {', '.join(names)}" for n, names in list(lost.items())[:8])
        more = f"; and {len(lost) - 8} more nodes" if len(lost) > 8 else ""
        click.echo(f"  missing artifacts in {objects.url} ({len(lost)} nodes): {listed}{more}")


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
@click.option("--out", "out", required=True, type=click.Path(),
              help="Where to write: a file (dispatch, kernelbench) or a package folder (torch-library).")
@click.option("--format", "fmt", type=click.Choice(["dispatch", "torch-library", "kernelbench"]), default="dispatch",
              show_default=True, help="dispatch: a standalone dispatcher module; torch-library: a package "
              "registering torch.ops.kernelevolve.<op>; kernelbench: one ModelNew file in KernelBench's layout.")
@state_options
@json_option
def best_cmd(run_id, out, fmt, state_dir, store_url, as_json) -> None:
    """Write a run's best kernels: each measured shape to its fastest node, PyTorch where none won."""
    from kernelevolve.api import export

    written = export(run_id, out, format=fmt, state_dir=state_dir, store_url=store_url)
    if as_json:
        emit_json(written.to_dict())
        return
    run_id, node, plan = written.run_id, written.node, written.plan
    click.echo(f"wrote run {run_id}'s best node {node.node_id} (fitness {node.fitness:.3f}) to {out}")
    if plan.untimed:
        click.echo("  no per-case timings (untimed target): the kernel is used for every shape")
        return
    for r in plan.routes:
        route = f"node {r.node_id}" if r.node_id is not None else "falls back to PyTorch"
        click.echo(f"    {r.case}: {r.speedup_vs_eager:.2f}x vs eager -> {route}")
    if fmt == "torch-library":
        click.echo(f"  torch.library op kernelevolve::{_op_name(written.op)} "
                   f"({plan.timings_from}); package files: {', '.join(plan.files)}")
    elif fmt == "kernelbench":
        click.echo(f"  KernelBench ModelNew with shape-aware dispatch ({plan.timings_from}), kernels and "
                   f"reference inline")
    elif len(plan.files) > 1:
        click.echo(f"  shape-aware dispatch ({plan.timings_from}); kernels and reference written next to it: "
                   f"{', '.join(plan.files[1:])}")
    else:
        click.echo(f"  node {node.node_id} won every measured case ({plan.timings_from}): no dispatch needed")


def _op_name(op: str) -> str:
    from kernelevolve.export_torch_library import op_identifier

    return op_identifier(op)
