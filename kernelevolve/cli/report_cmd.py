"""``ke report RUN|CAMPAIGN|MATRIX.json --out report.html [--format png|svg]``: a page (and figures) from the store.

Only reads the store, so it can run while a search writes: the page then shows the state so far.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import click

from kernelevolve.cli.common import emit_json, json_option, open_state, state_options
from kernelevolve.errors import UserError


def write_report(report, out: Path, image_format: str) -> dict:
    """Images first, into a temporary folder (the step that can fail: no browser), then the page, atomically
    (a browser reloading it never sees half a file), then the images moved next to it: a failure leaves nothing."""
    from kernelevolve.report.build import generated_at
    from kernelevolve.report.images import write_images
    from kernelevolve.report.page import render

    text = render(report, generated_at())
    images: list[str] = []
    try:
        with tempfile.TemporaryDirectory(prefix=".ke-report-", dir=out.parent) as tmp:
            drafts = write_images(report.figures, Path(tmp) / out.name, image_format) if image_format != "html" else []
            fd, tmp_page = tempfile.mkstemp(prefix=".ke-report-", suffix=".html", dir=tmp)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.chmod(tmp_page, 0o644)  # mkstemp's 0600 would hide the page from a web server or a colleague
            os.replace(tmp_page, out)
            for draft in drafts:
                os.replace(draft, out.parent / draft.name)
                images.append(str(out.parent / draft.name))
    except OSError as exc:
        raise UserError(f"cannot write {out}: {exc.strerror or exc}") from None
    return {"kind": report.kind, "title": report.title, "out": str(out), "images": images,
            "figures": [f.name for f in report.figures], "nodes": report.node_count}


def check_out(out: str) -> Path:
    path = Path(out)
    if path.suffix.lower() not in (".html", ".htm"):
        raise UserError(f"--out {out}: the report is an HTML page; name it *.html")
    if not path.parent.is_dir():
        raise UserError(f"cannot write {out}: folder {path.parent} does not exist")
    return path


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
    from kernelevolve.report.build import resolve

    out_path = check_out(out)

    def open_stores():
        _, meta, objects = open_state(state_dir, store_url, create=False)
        return meta, objects

    summary = write_report(resolve(target, open_stores), out_path, image_format)
    if as_json:
        emit_json(summary)
        return
    click.echo(f"wrote {summary['kind']} report {out_path} ({len(summary['figures'])} figures"
               + (f", {summary['nodes']} nodes" if summary["nodes"] is not None else "") + ")")
    for path in summary["images"]:
        click.echo(f"  {path}")
