"""``ke eval``: check and time one candidate file on a target, without touching the run store."""

from __future__ import annotations

import sys

import click

from kernelevolve.cli.common import checked_state, emit_json, json_option, load_op, state_options
from kernelevolve.errors import UserError
from kernelevolve.state import ensure_writable


@click.command("eval")
@click.option("--op", "op", required=True, help="Built-in op name or path to a spec file.")
@click.option("--hw", "hw", required=True, help="Hardware target.")
@click.option("--simulate", is_flag=True)
@click.option("--timeout", "timeout_s", type=float, default=120.0, show_default=True,
              help="Per-phase timeout in seconds.")
@click.option("--ncu", is_flag=True, help="Also collect Nsight Compute metrics (device targets, ncu installed).")
@click.argument("candidate", type=click.Path(dir_okay=False))
@state_options
@json_option
def eval_cmd(op, hw, simulate, timeout_s, ncu, candidate, state_dir, store_url, as_json) -> None:
    """Evaluate CANDIDATE.py against an operator spec on a target."""
    from interpreters.executor import DeviceUnavailable, LocalExecutor
    from interpreters.targets import UnknownTarget, get_target
    from kernelevolve.cli.search_cmd import shrunk_line, test_case_shrink
    from kernelevolve.export_cpu import without_cpu_fallback
    from kernelevolve.inputs import source_file

    if timeout_s <= 0:
        raise UserError(f"--timeout must be positive, got {timeout_s:g}")
    cand_path, cand_text = source_file(candidate, "candidate file")
    cand_text = without_cpu_fallback(cand_text)  # a file exported by `ke best` is checked as the kernel it holds
    paths = checked_state(state_dir, store_url)
    spec = load_op(op)
    try:
        target = get_target(hw)
        test_case_shrink(spec, target, simulate)
        ensure_writable(paths.root)
        executor = LocalExecutor(target, paths.scratch, timeout_s=timeout_s, simulate=simulate, ncu=ncu)
    except (DeviceUnavailable, NotImplementedError) as exc:
        raise UserError(str(exc)) from None
    except UnknownTarget as exc:
        raise UserError(exc.args[0]) from None
    try:
        result = executor.evaluate(spec.path, cand_text)
    finally:
        executor.close()
    payload = result.to_dict()
    payload["op"], payload["candidate"] = spec.name, str(cand_path)
    if as_json:
        emit_json(payload)
    else:
        click.echo(f"{result.status}: fitness {result.fitness:.3f}" + (f" ({result.reason})" if result.reason else ""))
        if result.extra.get("shrunk"):
            click.echo(shrunk_line(result.extra["shrunk"]))
        for case in result.cases:
            timing = f" {case.latency_ms:.4f} ms (eager {case.eager_ms:.4f}, compile {case.compile_ms})" \
                if case.latency_ms else ""
            click.echo(f"  {case.name}: {case.status} max_abs_err={case.max_abs_err}{timing}")
    if result.status != "ok":
        sys.exit(1)
