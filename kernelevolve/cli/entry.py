"""The ``ke`` console script: holds SIGINT, SIGTERM and SIGHUP from the first instruction (issue #30).

Why: importing the commands takes a few hundred milliseconds on a loaded 2-core machine, and a signal in that
window used to print a KeyboardInterrupt traceback (SIGINT) or end ``ke`` silently with -15 (SIGTERM). Here such
a signal is held while the import runs, and answered with the usual one line and exit code 130 before any work
starts; after it, :mod:`kernelevolve.interrupts` owns the signals. Only that module (standard library alone)
is imported before the handlers are in place.
"""

from __future__ import annotations

import signal
import sys

from kernelevolve.interrupts import EXIT_CODE, SIGNALS


def main() -> int:
    held: list[int] = []
    for signum in SIGNALS:
        if signal.getsignal(signum) != signal.SIG_IGN:  # nohup's ignored signals stay ignored
            signal.signal(signum, lambda received, _frame: held.append(received))
    from kernelevolve.cli.main import INTERRUPTED  # the slow part
    from kernelevolve.cli.main import main as run_command

    if held:
        print(f"ke: error: {INTERRUPTED}", file=sys.stderr)
        return EXIT_CODE
    return run_command()


if __name__ == "__main__":
    sys.exit(main())
