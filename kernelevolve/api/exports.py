"""``export`` (a run's best kernels to a file or package: ``ke best``) and ``report`` (an HTML page: ``ke
report``). Both only read the store, through short-lived connections, so they work while a search writes."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelevolve.api.stores import open_state, resolve_run
from kernelevolve.errors import UserError
from kernelevolve.store import layout
from kernelevolve.store.recovery import warn

if TYPE_CHECKING:  # torch comes with the export modules: imported when an export runs, not with the CLI
    from kernelevolve.export_plan import ExportPlan
    from search.node import Node


@dataclass(frozen=True)
class Export:
    """What ``export`` wrote: the run, its best node, and the routing plan (cases -> nodes, files written)."""

    run_id: str
    op: str
    node: Node
    out: str
    format: str
    plan: ExportPlan

    def to_dict(self) -> dict[str, Any]:
        """What ``ke best --json`` prints."""
        plan = self.plan
        return {"run_id": self.run_id, "node_id": self.node.node_id, "fitness": self.node.fitness, "out": self.out,
                "format": self.format, "files": plan.files, "timings_from": plan.timings_from,
                "kernel_nodes": plan.kernel_nodes,
                "kernel_files": {str(n): f for n, f in plan.kernel_files.items()},
                "kernel_cases": [{"case": r.case, "node_id": r.node_id, "speedup_vs_eager": r.speedup_vs_eager,
                                  "latency_ms": r.latency_ms} for r in plan.won],
                "fallback_cases": [{"case": r.case, "speedup_vs_eager": r.speedup_vs_eager} for r in plan.lost]}


def export(run_id: str, out: str, *, format: str = "dispatch", state_dir: str | None = None,
           store_url: str | None = None) -> Export:
    """Write a run's best kernels to ``out``: each measured shape to its fastest node, PyTorch where none won.
    ``format``: dispatch (a standalone module), torch-library (a package folder), kernelbench (one ModelNew)."""
    from kernelevolve.export import FORMATS
    from kernelevolve.export import export as write_format
    from kernelevolve.export_plan import plan_dispatch
    from kernelevolve.inputs import folder_to_create, output_file

    fmt = format
    if fmt not in FORMATS:
        raise UserError(f"unknown export format '{fmt}' (known: {', '.join(FORMATS)})")
    # checked before reading the store: nothing to undo. torch-library writes a package folder, the others a file
    if fmt != "torch-library" and Path(out).is_dir():
        raise UserError(f"cannot write {out} (from --out): it is a directory; --format {fmt} writes a file")
    out_path = (folder_to_create(out, "package folder", "--out") if fmt == "torch-library"
                else output_file(out, "kernel file", "--out"))
    _, meta, objects = open_state(state_dir, store_url, create=False)
    run = meta.get_run(resolve_run(meta, run_id))
    best = meta.best_nodes(run.run_id, 1)
    if not best:
        raise UserError(f"run {run.run_id} has no correct kernel")
    node = best[0]
    evaluations = winner_evaluations(meta, objects, run.run_id, node.node_id)
    sources = _sources(meta, objects, run.run_id, node.node_id, evaluations)
    with tempfile.TemporaryDirectory(prefix="ke-best-") as tmp:
        spec_path = Path(tmp) / f"{run.op}.py"  # the exact spec the run used, as stored with it
        spec_path.write_text(objects.get_text(layout.spec_key(run.spec_hash)), encoding="utf-8")
        try:
            plan = write_format(out_path, sources, spec_path, plan_dispatch(evaluations, node.node_id), run.run_id,
                                run.op, run.hw, fmt)
        except OSError as exc:
            raise UserError(f"cannot write {out}: {exc.strerror or exc}") from None
    return Export(run.run_id, run.op, node, out, fmt, plan)


def _sources(meta, objects, run_id: str, best_node: int, evaluations: dict[int, dict]) -> dict[int, str]:
    """Each routed node's kernel; a per-case winner whose kernel is lost is left out (warned), the best is needed."""
    from kernelevolve.store.objects import ArtifactMissing

    sources = {}
    for n in list(evaluations):
        try:
            sources[n] = objects.get_text(meta.get_node(run_id, n).path_ref)
        except ArtifactMissing as exc:
            if n == best_node:
                raise
            warn(f"{exc}; node {n} is left out of the export")
            del evaluations[n]
    return sources


def winner_evaluations(meta, objects, run_id: str, best_node: int) -> dict[int, dict]:
    """node -> the evaluation that decides its routes: the fresh final re-measurement where the run made one
    (``finish_run``), else the node's search-time evaluation; the best node and every per-case winner."""
    from kernelevolve.store.evaluations import authoritative_evaluation

    nodes = [best_node] + sorted({n for n, _ in meta.case_winners(run_id).values()} - {best_node})
    run, finished = meta.get_run(run_id), objects.exists(layout.final_key(run_id, best_node, True))
    out = {}
    for node_id in nodes:
        # without a re-measurement of it, a node counts only where the run made none at all (a run from before
        # per-case winners, or one still in progress); its evaluation is rebuilt if its artifact is lost
        evaluation, _ = authoritative_evaluation(meta, objects, run, meta.get_node(run_id, node_id),
                                                 best=node_id == best_node,
                                                 fallback=node_id == best_node or not finished)
        if evaluation is not None:
            out[node_id] = evaluation
    return out


def report(target: str, *, out: str = "report.html", image_format: str = "html", state_dir: str | None = None,
           store_url: str | None = None) -> dict[str, Any]:
    """Render a run, a campaign (name or id) or a sweep (campaign or matrix .json) as one HTML page at ``out``
    (``image_format`` png|svg: every figure also as an image next to it); returns what ``ke report --json``
    prints."""
    from kernelevolve.report.build import resolve

    if image_format not in ("html", "png", "svg"):
        raise UserError(f"unknown image format '{image_format}' (known: html, png, svg)")
    out_path = check_out(out)

    def open_stores():
        _, meta, objects = open_state(state_dir, store_url, create=False)
        return meta, objects

    return write_report(resolve(target, open_stores), out_path, image_format)


def check_out(out: str) -> Path:
    """The page's path: an .html name in an existing folder (bad input otherwise, before the store is read)."""
    path = Path(out)
    if path.suffix.lower() not in (".html", ".htm"):
        raise UserError(f"--out {out}: the report is an HTML page; name it *.html")
    if not path.parent.is_dir():
        raise UserError(f"cannot write {out}: folder {path.parent} does not exist")
    return path


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
