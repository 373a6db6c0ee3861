"""Entry point of ``ke``: wires the commands and turns every failure into one line and an exit code.

Exit codes (docs/architecture.md §10): 2 bad input, 1 a failed run, 0 otherwise. Tracebacks go to the log, not stderr.
"""

from __future__ import annotations

import sys
import traceback

import click

from kernelevolve import __version__, interrupts
from kernelevolve.cli.aten_cmd import aten_sweep_cmd
from kernelevolve.cli.campaign_cmd import campaign_cmd
from kernelevolve.cli.common import global_state_options
from kernelevolve.cli.eval_cmd import eval_cmd
from kernelevolve.cli.hw_cmd import hw_group
from kernelevolve.cli.kb_cmd import kb_group
from kernelevolve.cli.mcp_cmd import mcp_cmd
from kernelevolve.cli.report_cmd import report_cmd
from kernelevolve.cli.runs_cmd import best_cmd, runs_cmd, show_cmd
from kernelevolve.cli.search_cmd import search_cmd
from kernelevolve.cli.sweep_cmd import sweep_cmd
from kernelevolve.cli.worker_cmd import worker_cmd
from kernelevolve.errors import RunFailed, StoreFailure, UserError, disk_failure


class Interrupted(Exception):
    """A signal's KeyboardInterrupt carried past click, which would print an empty line and call it "aborted"."""


class _Group(click.Group):
    def invoke(self, ctx: click.Context):  # noqa: ANN201 - click's own signature
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise Interrupted() from None


INTERRUPTED = "interrupted; resume with 'ke search --resume RUN' (a campaign or sweep: run it again)"


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="ke")
@global_state_options
def cli() -> None:
    """KernelEvolve: search for fast, correct Triton kernels."""


for command in (search_cmd, campaign_cmd, sweep_cmd, aten_sweep_cmd, eval_cmd, runs_cmd, show_cmd, best_cmd, hw_group,
                worker_cmd, kb_group, mcp_cmd, report_cmd):
    cli.add_command(command)


def _fail(message: str, code: int) -> int:
    first = " ".join(str(message).split()) or "error"
    print(f"ke: error: {first}", file=sys.stderr)
    return code


def main(argv: list[str] | None = None) -> int:
    """Run one command; SIGTERM and SIGHUP interrupt it as Ctrl-C does (:mod:`kernelevolve.interrupts`). Without
    ``argv`` this is the ``ke`` process itself, which a second signal (or a stuck cleanup) may end at once."""
    with interrupts.handled(process=argv is None):
        return _run(argv)


def _run(argv: list[str] | None) -> int:
    try:
        cli.main(args=argv, prog_name="ke", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except (Interrupted, KeyboardInterrupt, click.exceptions.Abort):
        return _fail(INTERRUPTED, interrupts.EXIT_CODE)
    except click.ClickException as exc:  # usage errors: unknown option, missing argument, bad type
        return _fail(exc.format_message(), 2)
    except UserError as exc:
        return _fail(INTERRUPTED, interrupts.EXIT_CODE) if interrupts.signalled() else _fail(str(exc), 2)
    except (RunFailed, StoreFailure) as exc:
        return _fail(INTERRUPTED, interrupts.EXIT_CODE) if interrupts.signalled() else _fail(str(exc), 1)
    except SystemExit as exc:
        return int(exc.code or 0)
    except Exception as exc:  # a bug in KernelEvolve (unless the disk or the database failed)
        failure = disk_failure(exc)
        if failure:
            return _fail(failure, 1)
        _log_internal_error()
        if interrupts.signalled():  # the signal's KeyboardInterrupt broke a lock or a library call mid-way
            return _fail(INTERRUPTED, interrupts.EXIT_CODE)
        return _fail(f"internal error: {type(exc).__name__}: {exc}", 1)
    return 0


def _log_internal_error() -> None:
    try:
        import structlog

        structlog.get_logger("kernelevolve").error("internal_error", trace=traceback.format_exc())
    except Exception:  # noqa: BLE001 - never let logging hide the real error
        pass


if __name__ == "__main__":
    sys.exit(main())
