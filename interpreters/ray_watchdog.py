"""A private Ray instance dies with the process that started it, even by ``kill -9`` (issue #30 point 6).

Why: Ray ties its GCS and raylet to the driver (they die with ``ke``), but the raylet's agents (``ray::DashboardAgent``,
``ray::RuntimeEnvAgent``), on finding the raylet gone, first try to report its death to the GCS, which is gone
too: they lived on for up to a minute, re-parented to init. The watchdog is a tiny process that holds the read end
of a pipe whose write end only ``ke`` holds; when ``ke`` ends, however it ends, the pipe closes and the watchdog
kills every process the raylet started (it notes the raylet's children once a second: setproctitle blanks the
environment they could have been found by), then exits.
"""

from __future__ import annotations

import os
import subprocess
import sys

# Run with ``python -c``: no import of this package (the watchdog must start in milliseconds and need no path).
_SWEEP = r"""
import os, select, signal, sys
raylet, seen = sys.argv[1], {}
def stat(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return fields[1], fields[19]
    except (OSError, IndexError):
        return None, None
def scan():
    for name in os.listdir("/proc"):
        if name.isdigit():
            ppid, start = stat(name)
            if ppid == raylet or name in seen:
                seen.setdefault(name, start)
while True:
    scan()
    if select.select([sys.stdin], [], [], 1.0)[0] and not os.read(sys.stdin.fileno(), 4096):
        break  # EOF: the process that started the instance closed the pipe, or is gone
scan()
for pid, start in seen.items():
    if stat(pid)[1] == start:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except OSError:
            pass
"""

_watchdog: subprocess.Popen | None = None


def children_named(word: str) -> list[int]:
    """This process's children whose command line contains ``word``."""
    found = []
    me = str(os.getpid())
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/stat", encoding="utf-8", errors="replace") as f:
                ppid = f.read().rsplit(")", 1)[1].split()[1]
            if ppid != me:
                continue
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if word.encode() in f.read():
                    found.append(int(name))
        except (OSError, IndexError):
            continue
    return found


def watch() -> None:
    """Start the watchdog for the raylet this process started (none found, e.g. not Linux: nothing to do)."""
    global _watchdog
    raylets = children_named("raylet/raylet") if sys.platform.startswith("linux") else []
    if _watchdog is not None or len(raylets) != 1:
        return
    _watchdog = subprocess.Popen([sys.executable, "-c", _SWEEP, str(raylets[0])], stdin=subprocess.PIPE,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def release(timeout_s: float = 5.0) -> None:
    """After ``ray.shutdown``: close the pipe, so the watchdog sweeps what is left and exits."""
    global _watchdog
    if _watchdog is None:
        return
    proc, _watchdog = _watchdog, None
    try:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
