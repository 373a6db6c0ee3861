"""``ke campaign FILE.toml``: run (or resume) a whole campaign of searches on shared pools
(``kernelevolve.api.campaign``), then its table."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from kernelevolve.cli.common import emit_json, json_option, state_options
from kernelevolve.cli.progress import ProgressBoard


@click.command("campaign")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--concurrency", type=int, default=None, help="Expansions in flight across all runs (file: "
              "concurrency).")
@click.option("--executor", default=None, help="local|ray (default: the file's, else ray when installed).")
@click.option("--ray-address", default=None, help="Join this Ray cluster instead of starting a local one.")
@state_options
@json_option
def campaign_cmd(file, concurrency, executor, ray_address, state_dir, store_url, as_json) -> None:
    """Search many ops x targets x strategies together; running the same file again resumes it."""
    from kernelevolve.api import campaign

    summary = campaign(file, concurrency=concurrency, executor=executor, ray_address=ray_address,
                       state_dir=state_dir, store_url=store_url, progress=ProgressBoard)
    _report(summary, as_json)


def _report(summary: dict, as_json: bool) -> None:
    rows = summary["runs"]
    if as_json:
        emit_json(summary)
    else:
        click.echo(f"campaign {summary['name']} [{summary['campaign_id']}]: {summary['status']}")
        from kernelevolve.cli.tables import RUN_COLUMNS, render, run_cells

        for line in render((("slot", True), *RUN_COLUMNS), [
                [r["slot"], *run_cells(r["run_id"], r["op"], r["hw"], r["strategy"], r["status"], r["nodes"],
                                       r["budget"], r["best_node_id"], r["best_fitness"])] for r in rows]):
            click.echo(line)
    if summary["failures"] or summary["status"] != "completed":
        sys.exit(1)
