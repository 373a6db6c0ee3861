"""SIGTERM and SIGHUP stop ``ke`` the way Ctrl-C does, and a stopped ``ke`` is gone within seconds (issue #28).

Why: Python's default SIGTERM (what ``timeout``, ``kill`` and job schedulers send) ends the process without running
``finally`` blocks, so the run was never marked interrupted and its pools were never closed: the evaluation workers
and a private Ray cluster outlived ``ke``, on a GPU host holding device memory. Here the first SIGINT, SIGTERM or
SIGHUP raises KeyboardInterrupt in the main thread, so the one interrupt path runs (runs marked interrupted, pools
closed, Ray shut down, exit 130). A second signal exits at once: the workers die with this process anyway
(:mod:`interpreters.sandbox` sets their parent-death signal), so nobody needs SIGKILL to get out of a slow cleanup.
A signal that comes while a module is being imported is held until :func:`check` (issue #30): torch's import
swallows a KeyboardInterrupt raised inside it.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))
FORCE_EXIT_S = 8.0  # after the first signal, the process ends by then even if a thread or a cleanup step hangs
EXIT_CODE = 130

_received: list[int] = []
_raised: list[bool] = []  # whether the first signal's KeyboardInterrupt was raised (not deferred)
_installed: dict[int, Any] = {}  # signal -> the handler it had before :func:`handled`
_process = False  # whether the caller is the whole process (``ke`` itself), so that it may be exited


def signalled() -> bool:
    """Whether a signal arrived: an exception raised after it (a lock released by an interrupted ``with``, a
    library call cut short) is part of the interrupt, not a bug of its own (issue #30)."""
    return bool(_received)


def _force_exit(message: str) -> None:
    """End the process now; os.write, not print: a handler may run while the main thread is inside a print."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, RuntimeError):
            pass
    try:
        os.write(2, f"ke: error: {message}\n".encode())
    except OSError:
        pass
    os._exit(EXIT_CODE)


def _exit_later(seconds: float) -> None:
    """A daemon timer: exiting Python joins the pools' threads, and one stuck in a slow call would keep ``ke``
    alive (and a busy evaluation with it) well past the signal."""

    def wait_then_exit() -> None:
        time.sleep(seconds)
        _force_exit(f"still stopping {seconds:.0f} s after the signal; exiting now")

    threading.Thread(target=wait_then_exit, name="ke-exit-deadline", daemon=True).start()


def check() -> None:
    """Raise the interrupt deferred by :func:`_handler` (a signal that came during an import); call it where a
    command moves from set-up to work (opening an executor, driving runs)."""
    if _received and not _raised:
        _raised.append(True)
        raise KeyboardInterrupt(signal.Signals(_received[0]).name)


def _importing(frame: FrameType | None) -> bool:
    """Whether ``frame`` runs inside an import. A KeyboardInterrupt raised there can be swallowed: torch's
    import of numpy catches it (the search then ran on until the 8 s deadline) and may leave Python to end
    itself with SIGINT after ``ke`` printed its line (exit -2 instead of 130; issue #30)."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def _handler(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    if len(_received) > 1:
        if _process:
            _force_exit("signalled again; exiting now")
        return  # not ours to end: let the first interrupt's cleanup finish
    if _process:
        _exit_later(FORCE_EXIT_S)
    if _importing(frame):
        return  # raised by check() once set-up reaches it; the deadline above still holds
    _raised.append(True)
    raise KeyboardInterrupt(signal.Signals(signum).name)


@contextmanager
def handled(process: bool) -> Iterator[None]:
    """Within: SIGINT, SIGTERM and SIGHUP raise KeyboardInterrupt once (a signal set to be ignored, as ``nohup``
    does, stays ignored). ``process``: the caller is the ``ke`` process itself, so a second signal, or a cleanup
    still running FORCE_EXIT_S after the first, exits it, and the handlers stay for the interpreter's own exit;
    otherwise the previous handlers come back on leaving. Only the main thread sets handlers; elsewhere, a no-op."""
    global _process
    if threading.current_thread() is not threading.main_thread() or _installed:
        yield
        return
    _received.clear()
    _raised.clear()
    _process = process
    for signum in SIGNALS:
        previous = signal.getsignal(signum)
        if previous == signal.SIG_IGN:
            continue
        _installed[signum] = previous
        signal.signal(signum, _handler)
    try:
        yield
    finally:
        if not process:
            for signum, previous in _installed.items():
                signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
            _installed.clear()
