"""An S3 outage is waited out (issue #30, point 13): moto's S3 server on loopback, reached through a TCP proxy
the test cuts and restores. The retry window is configurable (KE_S3_RETRY_S) so CI waits seconds, not the
default's 90; s3fs and botocore on their own give up after about 6 s, so the outage here lasts longer."""

from __future__ import annotations

import threading
import time
from urllib.parse import urlparse

import pytest
from helpers.store_fault_helpers import CuttableProxy

from kernelevolve.store import retry
from kernelevolve.store.objects import ObjectStore, StoreError

OUTAGE_S = 9.0  # longer than s3fs + botocore's own retries (~6 s): fails without the store's retry loop


@pytest.fixture
def proxied(s3_bucket: str, s3_server, monkeypatch: pytest.MonkeyPatch):
    endpoint = urlparse(s3_server.endpoint)
    proxy = CuttableProxy((endpoint.hostname, endpoint.port))
    monkeypatch.setenv("KE_S3_ENDPOINT_URL", proxy.url)
    try:
        yield ObjectStore(s3_bucket), proxy
    finally:
        proxy.close()


def test_the_default_window_outlasts_a_minute(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(retry.RETRY_ENV, raising=False)
    assert retry.window_s() >= 60
    monkeypatch.setenv(retry.RETRY_ENV, "nonsense")
    assert retry.window_s() >= 60
    monkeypatch.setenv(retry.RETRY_ENV, "7.5")
    assert retry.window_s() == 7.5


def test_an_outage_shorter_than_the_window_is_waited_out(proxied, monkeypatch: pytest.MonkeyPatch) -> None:
    store, proxy = proxied
    monkeypatch.setenv(retry.RETRY_ENV, str(OUTAGE_S * 3))
    store.put_text("runs/r/nodes/000001/overview.md", "before")
    proxy.cut()
    timer = threading.Timer(OUTAGE_S, proxy.restore)
    timer.start()
    start = time.monotonic()
    try:
        store.put_json("runs/r/nodes/000001/evaluation.json", {"fitness": 1.0})  # during the outage
    finally:
        timer.cancel()
        proxy.restore()
    assert time.monotonic() - start >= OUTAGE_S * 0.9
    assert store.get_json("runs/r/nodes/000001/evaluation.json") == {"fitness": 1.0}
    assert store.get_text("runs/r/nodes/000001/overview.md") == "before"


def test_a_throttling_server_is_waited_out(proxied, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: a 503 SlowDown lasting past s3fs and botocore's own retries ended the call (and the search).
    Those retries absorb about 38 s of SlowDown; with botocore's set to one attempt (read when the client is
    made, at the first call) they absorb about 2 s, so that a 9 s throttle shows the store's own loop."""
    store, proxy = proxied
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    monkeypatch.setenv(retry.RETRY_ENV, str(OUTAGE_S * 3))
    store.put_text("runs/r/nodes/000001/overview.md", "before")
    proxy.busy = True
    timer = threading.Timer(OUTAGE_S, setattr, (proxy, "busy", False))
    timer.start()
    start = time.monotonic()
    try:
        store.put_json("runs/r/nodes/000001/evaluation.json", {"fitness": 2.0})  # answered 503 for a while
        assert store.get_text("runs/r/nodes/000001/overview.md") == "before"
    finally:
        timer.cancel()
        proxy.busy = False
    assert time.monotonic() - start >= OUTAGE_S * 0.9
    assert store.get_json("runs/r/nodes/000001/evaluation.json") == {"fitness": 2.0}


def test_an_outage_longer_than_the_window_fails_in_one_line(proxied, monkeypatch: pytest.MonkeyPatch) -> None:
    store, proxy = proxied
    monkeypatch.setenv(retry.RETRY_ENV, "0.5")
    store.put_text("runs/r/a.txt", "x")
    proxy.cut()
    start = time.monotonic()
    with pytest.raises(StoreError) as err:
        store.get_text("runs/r/a.txt")
    assert time.monotonic() - start < 30
    message = str(err.value)
    assert "\n" not in message and "cannot read artifact runs/r/a.txt" in message and store.url in message


def test_missing_objects_and_refusals_are_not_retried() -> None:
    assert not retry.is_transient(FileNotFoundError("gone"))
    assert not retry.is_transient(PermissionError("denied"))
    assert retry.is_transient(ConnectionRefusedError(111, "refused"))
    calls = []

    def missing() -> None:
        calls.append(1)
        raise FileNotFoundError("gone")

    with pytest.raises(FileNotFoundError):
        retry.retrying(missing, "read", window=30)
    assert len(calls) == 1
