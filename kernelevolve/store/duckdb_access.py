"""Cross-process access to one DuckDB file: short attachments guarded by a lock file.

Concurrency model. A process that has a DuckDB file open for writing holds an exclusive lock on
it that keeps every other process out, readers included. Yet ``ke show`` must work while a search
writes, and two searches may share one store. So the file is never kept open between calls:
each session attaches it (read-only for pure reads), runs in one transaction and detaches.
Contended access is retried with capped exponential backoff and jitter until ``lock_timeout_s``,
then fails with a one-line StoreError.

Why a lock file next to the database (``<db>.lock``, flock: shared to read, exclusive to write)
and not DuckDB's own lock alone: DuckDB reads the file header *before* it takes its lock, so a
process that gets the lock just after another one's checkpoint can work from a stale header.
Two processes writing back to back then lose commits or fail with "Could not read enough bytes"
(seen here about once in ten runs of 2 x 150 writes under CPU load). Taking our lock first closes
that window; DuckDB's lock still guards against programs outside this protocol.

Cost. Creating a DuckDB instance takes ~17 ms even in memory, so each process keeps one
in-memory "host" connection per database file and ``ATTACH``/``DETACH``es the file on it (~2 ms
to read, ~6 ms to write and checkpoint). Threads of one process are serialised per file by an
in-process lock: the host connection is not shareable.

Interrupted sessions. A signal's KeyboardInterrupt (:mod:`kernelevolve.interrupts`) can land on any
line between ATTACH and DETACH, and the host outlives the session: the file would stay attached, and
the next session of this process (the one that marks the run interrupted) would fail its ATTACH with
"Unique file handle conflict" (issue #30). So the host is marked ``attached`` before every ATTACH and
unmarked only after a confirmed DETACH; a session that finds the mark closes the host and starts anew.

Fairness. Polling alone lets a process that writes back to back keep the lock almost all the
time. A process that had to wait therefore sets the lock file's mtime to now; one about to lock
that sees a fresh mtime holds off (bounded) until the waiter got in and set it back to 0.

Batches. ``batch()`` keeps the file attached and one transaction open for many writes. The
caller may buffer rows meanwhile (bulk inserts are far faster column-wise than row by row): the
buffer is handed to the ``flush`` hook before every session inside the batch, so that reads see
the buffered rows, and once more before the commit.

Errors are phrased for the metadata store, the one user of this module.
"""

from __future__ import annotations

import fcntl
import os
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

import duckdb

from kernelevolve.errors import StoreFailure

_CATALOG = "ke"  # the name the database file is attached under
_LOCK_CONFLICT = ("Could not set lock", "Conflicting lock")
_BACKOFF_START_S, _BACKOFF_GROWTH, _BACKOFF_CAP_S = 0.002, 1.5, 0.2  # ~0.6 s to reach the cap
_WAITER_FRESH_S = 0.4  # > the longest sleep of a waiter (cap x 1.5 jitter): fresher = still waiting
_MAX_YIELD_S = 0.5  # the longest an attaching process defers to a waiter

BufferT = TypeVar("BufferT")


class StoreError(StoreFailure):
    """A metadata-store failure, with a one-line message fit for the command line."""


_DAMAGED = ("Could not read enough bytes", "not a valid DuckDB database", "Corrupt", "corrupt", "checksum")


def describe(path: Path, error: BaseException) -> str:
    """One line for a DuckDB failure on ``path``: a damaged file is named as such (DuckDB's own words,
    "Could not read enough bytes", give no hint that the file is truncated)."""
    line = first_line(error)
    if any(marker in line for marker in _DAMAGED):
        return f"the run database {path} is damaged ({line}); restore it from a backup or move it away"
    return f"metadata store {path}: {line}"


def first_line(error: BaseException) -> str:
    """The first line of an error's message (DuckDB's run to several), else its type's name."""
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


@dataclass
class _OpenBatch:
    owner: int  # the thread that opened it; other threads wait on the file's lock instead
    buffer: Any  # the caller's rows not yet written, handed to the flush hook


@dataclass
class _SharedFileState:
    """Per-file, per-process state shared by every LockedDuckDBFile on that file."""

    lock: threading.RLock = field(default_factory=threading.RLock)
    host: duckdb.DuckDBPyConnection | None = None  # in-memory; the file is attached only per session
    lock_fd: int | None = None  # the open ``<db>.lock``; None where it cannot be opened
    pid: int = 0  # the process that opened ``host`` and ``lock_fd``: a forked child needs its own
    attached: bool = False  # the file may be attached to ``host``: set before ATTACH, cleared once detached
    batch: _OpenBatch | None = None


_STATE_BY_FILE: dict[str, _SharedFileState] = {}
_STATE_BY_FILE_LOCK = threading.Lock()


class LockedDuckDBFile(Generic[BufferT]):
    """One DuckDB file, attached per session under ``<db>.lock``; see the module docstring.

    ``flush(conn, buffer)`` writes a batch's buffered rows through ``conn``; it is called
    before each session inside a batch, at the batch's end and on :meth:`flush_batch`.
    """

    def __init__(self, path: Path | str, lock_timeout_s: float,
                 flush: Callable[[duckdb.DuckDBPyConnection, BufferT], None]) -> None:
        self.path = Path(path).expanduser()
        self.lock_timeout_s = lock_timeout_s
        self._flush = flush
        self._real = Path(os.path.realpath(self.path))  # what is attached: immune to later chdir
        self._lockfile = self._real.with_name(self._real.name + ".lock")
        with _STATE_BY_FILE_LOCK:
            self._state = _STATE_BY_FILE.setdefault(str(self._real), _SharedFileState())
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError(f"cannot create the directory of metadata store {self.path}: "
                             f"{e.strerror or first_line(e)}") from e
        if self.path.is_dir():
            raise StoreError(f"metadata store {self.path} is a directory, not a DuckDB file")

    # ---- sessions and batches ----------------------------------------------------------------

    @contextmanager
    def session(self, write: bool) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection for one call: the open batch's (after flushing it) or a fresh attachment.

        A fresh attachment runs a write session in one transaction, committed at exit; DuckDB
        errors inside become a one-line StoreError.
        """
        batch = self._own_batch()
        if batch is not None:
            self._flush(self._state.host, batch.buffer)
            yield self._state.host
            return
        with self._attached(read_only=not write) as conn:
            try:
                if write:
                    conn.begin()
                yield conn
                if write:
                    conn.commit()
            except duckdb.Error as e:
                raise StoreError(describe(self.path, e)) from e

    @contextmanager
    def batch(self, new_buffer: Callable[[], BufferT]) -> Iterator[None]:
        """Keep the file attached and one write transaction open until exit; see the module docstring.

        Sessions of this thread inside it join the batch; so do nested batches. Any error rolls
        the whole batch back, and other processes are kept out for the duration.
        """
        if self._own_batch() is not None:
            yield
            return
        with self._attached(read_only=False) as conn:
            try:
                batch = self._state.batch = _OpenBatch(threading.get_ident(), new_buffer())
                conn.begin()
                yield
                self._flush(conn, batch.buffer)
                conn.commit()
            except duckdb.Error as e:
                raise StoreError(f"metadata store {self.path}: batch failed: {first_line(e)}") from e
            finally:
                self._state.batch = None

    def batch_buffer(self) -> BufferT | None:
        """The buffer of the batch this thread has open on the file, or None outside a batch."""
        batch = self._own_batch()
        return batch.buffer if batch is not None else None

    def flush_batch(self) -> None:
        """Write this thread's batch buffer now (to bound its size); the batch stays open."""
        batch = self._own_batch()
        if batch is not None:
            self._flush(self._state.host, batch.buffer)

    def _own_batch(self) -> _OpenBatch | None:
        batch = self._state.batch
        return batch if batch is not None and batch.owner == threading.get_ident() else None

    @contextmanager
    def _attached(self, read_only: bool) -> Iterator[duckdb.DuckDBPyConnection]:
        """The file attached to this process's host connection, with this thread alone on it."""
        if not self._state.lock.acquire(timeout=self.lock_timeout_s):
            raise self._locked()
        try:
            conn = self._lock_and_attach(read_only)
            try:
                yield conn
            finally:
                self._detach_and_unlock()
        finally:
            self._state.lock.release()

    # ---- the lock file and the attachment ----------------------------------------------------

    def _locked(self) -> StoreError:
        return StoreError(f"metadata store {self.path} is locked by another process for more than "
                          f"{self.lock_timeout_s:g}s")

    def _defer_to_waiters(self) -> None:
        """Hold off (bounded) while the lock file's fresh mtime says another process waits."""
        deadline = time.monotonic() + _MAX_YIELD_S
        while time.monotonic() < deadline:
            try:
                if time.time() - os.stat(self._lockfile).st_mtime > _WAITER_FRESH_S:
                    return
            except OSError:
                return
            time.sleep(0.002)

    def _state_for_this_process(self) -> _SharedFileState:
        state = self._state
        if state.pid != os.getpid():  # first use in this process, or a forked child
            state.host, state.attached = None, False
            state.lock_fd, state.pid = self._open_lockfile(), os.getpid()
        if state.attached:  # a session cut short (see the module docstring): its attachment is stale
            self._drop_host()
        if state.host is None:
            state.host = duckdb.connect(":memory:")
        return state

    def _open_lockfile(self) -> int | None:
        try:
            fd = os.open(self._lockfile, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
            os.utime(self._lockfile, (0, 0))  # a fresh mtime means "someone is waiting"
            return fd
        except FileExistsError:
            pass
        except OSError:
            return None
        for flags in (os.O_RDWR, os.O_RDONLY):  # read-only: a directory nobody writes through us
            with suppress(OSError):
                return os.open(self._lockfile, flags)
        return None

    def _lock_and_attach(self, read_only: bool) -> duckdb.DuckDBPyConnection:
        """Take the lock file, then attach the database to this process's host connection."""
        state = self._state_for_this_process()
        quoted = "'" + str(self._real).replace("'", "''") + "'"
        attach = f"ATTACH {quoted} AS {_CATALOG}" + (" (READ_ONLY)" if read_only else "")
        mode = (fcntl.LOCK_SH if read_only else fcntl.LOCK_EX) | fcntl.LOCK_NB
        self._defer_to_waiters()
        deadline = time.monotonic() + self.lock_timeout_s
        delay, waited, locked = _BACKOFF_START_S, False, state.lock_fd is None
        try:
            while True:
                try:
                    if not locked:
                        fcntl.flock(state.lock_fd, mode)
                        locked = True
                    state.attached = True
                    state.host.execute(attach)
                    break
                except BlockingIOError:
                    pass  # another KernelEvolve process is in the store
                except duckdb.IOException as e:
                    message = str(e)
                    if "not a valid DuckDB database" in message:
                        raise StoreError(f"metadata store {self.path} is not a DuckDB database") from e
                    if not any(marker in message for marker in _LOCK_CONFLICT):
                        raise StoreError(describe(self.path, e)) from e
                    # else a program outside this protocol (duckdb CLI, say) holds DuckDB's lock
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise self._locked()
                waited = True
                with suppress(OSError):
                    os.utime(self._lockfile)  # "someone is waiting"
                time.sleep(min(remaining, delay * random.uniform(0.5, 1.5)))
                delay = min(delay * _BACKOFF_GROWTH, _BACKOFF_CAP_S)
            state.host.execute(f"USE {_CATALOG}")
        except BaseException:
            if state.host is not None and locked:
                self._detach_and_unlock()
            raise
        finally:
            if waited:
                with suppress(OSError):
                    os.utime(self._lockfile, (0, 0))  # got in (or gave up): stop holding others off
        return state.host

    def _detach_and_unlock(self) -> None:
        """Roll back anything still open, release the database and then the lock file."""
        state = self._state
        try:
            state.batch = None  # ends with the attachment, even where an interrupt skipped batch()'s own reset
            with suppress(duckdb.Error):
                state.host.rollback()
            try:
                state.host.execute("USE memory")
                if _CATALOG in {row[0] for row in state.host.execute("SHOW DATABASES").fetchall()}:
                    state.host.execute(f"DETACH {_CATALOG}")
                state.attached = False
            except duckdb.Error:
                self._drop_host()  # a host that cannot detach may still hold the file
        finally:
            if state.lock_fd is not None:
                fcntl.flock(state.lock_fd, fcntl.LOCK_UN)

    def _drop_host(self) -> None:
        """Close the host whole, which releases the file whatever state it was left in. Closed before it
        is forgotten: a live one kept by a traceback would still hold the file for this process."""
        state = self._state
        if state.host is not None:
            with suppress(duckdb.Error):
                state.host.close()
        state.host, state.attached = None, False
