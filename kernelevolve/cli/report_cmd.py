"""``ke report RUN|CAMPAIGN|MATRIX.json --out report.html [--format png|svg]``: a page (and figures) from the store.

Only reads the store, so it can run while a search writes: the page then shows the state so far. The work is
``kernelevolve.api.report``.
"""

from __future__ import annotations

import click

from kernelevolve.cli.common import emit_json, json_option, state_options


@click.command("report")
@click.argument("target")
@click.option("--out", "out", default="report.html", show_default=True, type=click.Path(dir_okay=False),
              help="Where to write the self-contained HTML page.")
@click.option("--format", "image_format", type=click.Choice(["html", "png", "svg"]), default="html",
              show_default=True, help="png|svg: also write every figure as an image next to the page "
              "(<out stem>-<figure>.png).")
@state_options
@json_option
def report_cmd(target, out, image_format, state_dir, store_url, as_json) -> None:
    """Render a run, a campaign (name or id) or an ATen sweep (campaign or matrix .json) as one HTML page."""
    from kernelevolve.api import report

    summary = report(target, out=out, image_format=image_format, state_dir=state_dir, store_url=store_url)
    if as_json:
        emit_json(summary)
        return
    click.echo(f"wrote {summary['kind']} report {summary['out']} ({len(summary['figures'])} figures"
               + (f", {summary['nodes']} nodes" if summary["nodes"] is not None else "") + ")")
    for path in summary["images"]:
        click.echo(f"  {path}")
