"""Errors the CLI turns into one line on stderr and an exit code (docs/architecture.md §10)."""

import errno


class UserError(Exception):
    """Bad input: exit code 2, nothing written."""


class RunFailed(Exception):
    """A run or evaluation that started but did not succeed: exit code 1."""


class StoreFailure(Exception):
    """The artifact store, the disk or the run database failed (an outage, a full disk, a damaged file):
    not a bug and not bad input, so exit code 1 with a line naming the cause and the path."""


_DISK_ERRNOS = {errno.ENOSPC: "the disk is full", errno.EDQUOT: "the disk quota is exceeded",
                errno.EROFS: "the file system is read-only", errno.EIO: "an I/O error",
                errno.EACCES: "permission denied", errno.EPERM: "permission denied"}


def disk_failure(exc: BaseException) -> str | None:
    """One line for an error that is the disk's or the database's fault rather than a bug, else None:
    an OSError of a full, read-only or failing disk (naming its path), or a DuckDB error that escaped the
    store's own wrapping (naming the database as its module reports it)."""
    if isinstance(exc, OSError) and exc.errno in _DISK_ERRNOS:
        where = f" at {exc.filename}" if exc.filename else ""
        return f"disk failure{where}: {_DISK_ERRNOS[exc.errno]} ({exc.strerror or exc})"
    if type(exc).__module__.split(".")[0] in ("duckdb", "_duckdb"):
        line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return f"run database failure: {type(exc).__name__}: {line}"
    return None
