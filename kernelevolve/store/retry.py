"""Waiting out a short S3 outage: a store call that cannot connect, or that the server answers with a 5xx or
a throttling error (503 SlowDown, 429), is retried with capped exponential backoff and jitter (tenacity) for a
window (``KE_S3_RETRY_S``, default 90 s), so a restarted, overloaded or briefly unreachable endpoint does not
end a search. s3fs and botocore retry for only ~5 s of their own."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from typing import TypeVar

import structlog
import tenacity

T = TypeVar("T")

RETRY_ENV = "KE_S3_RETRY_S"
DEFAULT_WINDOW_S = 90.0  # an outage of at least 60 s must be waited out (issue #30, point 13)
_FIRST_DELAY_S, _CAP_S = 0.5, 10.0
_TRANSIENT_ERRNOS = {errno.ECONNREFUSED, errno.ECONNRESET, errno.ECONNABORTED, errno.ETIMEDOUT,
                     errno.EHOSTUNREACH, errno.ENETUNREACH, errno.ENETDOWN, errno.EPIPE, errno.EAGAIN}
_TRANSIENT_NAMES = {"ConnectionError", "EndpointConnectionError", "ConnectionClosedError", "ReadTimeoutError",
                    "ConnectTimeoutError", "HTTPClientError", "ClientConnectorError", "ServerDisconnectedError",
                    "ClientOSError", "ServerTimeoutError", "TimeoutError", "IncompleteReadError"}

# S3's own words for "not now": throttling and server-side failures, whatever status code carries them
_SERVER_BUSY_CODES = {"SlowDown", "Throttling", "ThrottlingException", "RequestLimitExceeded", "TooManyRequests",
                      "RequestTimeout", "InternalError", "ServiceUnavailable", "503", "500", "502", "504"}
_SERVER_BUSY_STATUS = {429, 500, 502, 503, 504}

log = structlog.get_logger("kernelevolve.store")


def window_s() -> float:
    """How long to keep retrying: ``KE_S3_RETRY_S`` seconds if set to a number >= 0, else the default."""
    raw = os.environ.get(RETRY_ENV, "")
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_WINDOW_S
    return value if value >= 0 else DEFAULT_WINDOW_S


def is_transient(exc: BaseException) -> bool:
    """True for a failure to reach the endpoint (refused, reset, timed out) or a busy server (5xx, throttled),
    anywhere in the cause chain; a missing object, a denied request or bad data is not waited on."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, (FileNotFoundError, PermissionError)):
            return False
        if isinstance(current, ConnectionError) or any(c.__name__ in _TRANSIENT_NAMES
                                                       for c in type(current).__mro__):
            return True
        if isinstance(current, OSError) and current.errno in _TRANSIENT_ERRNOS:
            return True
        if _server_busy(current):
            return True
        current = current.__cause__ or current.__context__
    return False


def _server_busy(exc: BaseException) -> bool:
    """A botocore ClientError (s3fs keeps it as the cause of its OSError) for a 5xx or a throttling answer."""
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return False
    code = str((response.get("Error") or {}).get("Code", ""))
    status = (response.get("ResponseMetadata") or {}).get("HTTPStatusCode")
    return code in _SERVER_BUSY_CODES or status in _SERVER_BUSY_STATUS


def retrying(call: Callable[[], T], what: str, window: float | None = None) -> T:
    """``call()``, retried while it fails transiently and the window lasts; then its last error is raised."""

    def warn(state: tenacity.RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        log.warning("s3_retry", what=what, attempt=state.attempt_number, error=f"{type(exc).__name__}: {exc}"[:300])

    retry = tenacity.Retrying(
        retry=tenacity.retry_if_exception(is_transient),
        stop=tenacity.stop_after_delay(window_s() if window is None else window),
        wait=tenacity.wait_random_exponential(multiplier=_FIRST_DELAY_S, max=_CAP_S),
        before_sleep=warn, reraise=True)
    return retry(call)
