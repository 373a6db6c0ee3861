"""Shared fixtures. The S3 fixtures run moto as a real HTTP server in a subprocess (no in-process
mocking), so tests exercise s3fs/aiobotocore exactly as production does against a real endpoint."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest


@dataclass
class S3Server:
    endpoint: str
    env: dict[str, str] = field(default_factory=dict)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_until_up(proc: subprocess.Popen, endpoint: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"moto server exited early with code {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1):
                return
        except urllib.error.HTTPError:
            return  # it answered, whatever the status
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"moto server at {endpoint} did not answer within {timeout:.0f} s")


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """moto's standalone S3 server on a free loopback port; sets no global environment."""
    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    log = (tmp_path_factory.mktemp("moto") / "server.log").open("wb")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    try:
        _wait_until_up(proc, endpoint)
        yield S3Server(
            endpoint=endpoint,
            env={
                "AWS_ACCESS_KEY_ID": "testing",
                "AWS_SECRET_ACCESS_KEY": "testing",
                "AWS_DEFAULT_REGION": "us-east-1",
                "KE_S3_ENDPOINT_URL": endpoint,
            },
        )
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture
def s3_bucket(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fresh, uniquely named bucket on the moto server; returns ``s3://<bucket>/ke``.

    The test's environment points at the server (credentials, region, KE_S3_ENDPOINT_URL) and
    ambient AWS settings that could redirect or break requests are removed."""
    import s3fs

    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(name, raising=False)
    for name, value in s3_server.env.items():
        monkeypatch.setenv(name, value)
    bucket = f"ke-test-{uuid.uuid4().hex[:16]}"
    fs = s3fs.S3FileSystem(
        key="testing",
        secret="testing",
        client_kwargs={"endpoint_url": s3_server.endpoint},  # region from env: us-east-1 takes no
        skip_instance_cache=True,  # LocationConstraint, and s3fs would send one if given region_name
        use_listings_cache=False,
    )
    fs.mkdir(bucket)
    yield f"s3://{bucket}/ke"


# --- running the real `ke` command ---------------------------------------------------------------------

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class KeResult:
    returncode: int
    stdout: str
    stderr: str

    def json(self):
        import json

        return json.loads(self.stdout)


def run_ke(*args: str, env: dict[str, str] | None = None, timeout: float = 600, cwd: str | None = None) -> KeResult:
    """Run ``ke`` as a user would: a separate process, real stores, exit code and streams captured.

    The executor is pinned to ``local`` unless the caller says otherwise: the default (Ray) would start a
    private Ray cluster per command on a 2-core machine. The Ray path has its own tests (test_ray_*)."""
    full_env = {"KE_EXECUTOR": "local", **os.environ, **(env or {})}
    full_env["PYTHONPATH"] = REPO_ROOT + os.pathsep + full_env.get("PYTHONPATH", "")
    proc = subprocess.run(
        [sys.executable, "-m", "kernelevolve.cli.main", *args],
        capture_output=True, text=True, env=full_env, timeout=timeout, cwd=cwd or REPO_ROOT,
    )
    return KeResult(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def ke():
    return run_ke
