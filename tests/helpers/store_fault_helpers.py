"""Helpers of the store fault-injection tests: a TCP proxy that can be cut, read-only runs as root, and
``ke`` started with a fault planted at the writer boundary."""

from __future__ import annotations

import os
import shutil
import socket
import struct
import subprocess
import sys
import threading
from pathlib import Path

from conftest import REPO_ROOT, KeResult

SLOW_DOWN = (b"HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\nContent-Length: %d\r\n"
             b"Connection: close\r\n\r\n%s")
SLOW_DOWN_BODY = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
                  b"<Message>Please reduce your request rate.</Message></Error>")


class CuttableProxy:
    """Forwards loopback TCP connections to ``target``; while cut, it closes open connections and resets
    new ones at once (a refused-like outage an S3 client sees as a connection error); while busy, it answers
    every new connection's request with S3's 503 SlowDown, as a throttling or overloaded endpoint does."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.up = True
        self.busy = False
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cut(self) -> None:
        self.up = False
        with self._lock:
            for sock in self._open:
                _reset(sock)
            self._open.clear()

    def restore(self) -> None:
        self.up = True

    def close(self) -> None:
        self._stopped = True
        self.cut()
        self._server.close()

    def _accept(self) -> None:
        while not self._stopped:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            if not self.up:
                _reset(client)
                continue
            if self.busy:
                threading.Thread(target=_slow_down, args=(client,), daemon=True).start()
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                _reset(client)
                continue
            with self._lock:
                self._open += [client, upstream]
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pump, args=(src, dst), daemon=True).start()


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (src, dst):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _slow_down(client: socket.socket) -> None:
    """Read the request's head (and what came with it), answer 503 SlowDown, close."""
    try:
        client.settimeout(5)
        data = b""
        while b"\r\n\r\n" not in data and (chunk := client.recv(65536)):
            data += chunk
        client.sendall(SLOW_DOWN % (len(SLOW_DOWN_BODY), SLOW_DOWN_BODY))
        client.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        client.close()


def _reset(sock: socket.socket) -> None:
    """Close with an RST (SO_LINGER 0), as a dead endpoint does."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
    except OSError:
        pass


# --- read-only state ------------------------------------------------------------------------------------------

_NO_OVERRIDE = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner,-linux_immutable"]


def read_only_prefix() -> list[str] | None:
    """How to run a command for which a mode-555 folder is really read-only: nothing for a normal user; as
    root (where chmod stops nothing) through setpriv without the capabilities that override file modes,
    else None (then the caller skips, saying why)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        return None
    probe = subprocess.run([*_NO_OVERRIDE, "true"], capture_output=True)
    return _NO_OVERRIDE if probe.returncode == 0 else None


def make_read_only(root: Path) -> None:
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            os.chmod(os.path.join(dirpath, name), 0o444)
        os.chmod(dirpath, 0o555)


def make_writable(root: Path) -> None:
    for dirpath, _dirs, files in os.walk(root):
        os.chmod(dirpath, 0o755)
        for name in files:
            os.chmod(os.path.join(dirpath, name), 0o644)


# --- ke with a planted fault --------------------------------------------------------------------------------

def run_ke_with(prelude: str, *args: str, prefix: list[str] | None = None, timeout: float = 300,
                extra_env: dict[str, str] | None = None) -> KeResult:
    """``ke ARGS`` in its own process, after ``prelude`` (Python) has planted a fault in it."""
    code = (f"import sys\n{prelude}\nfrom kernelevolve.cli.main import main\n"
            f"sys.exit(main({list(args)!r}))\n")
    env = {**os.environ, "KE_EXECUTOR": "local", **(extra_env or {}),
           "PYTHONPATH": REPO_ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([*(prefix or []), sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=REPO_ROOT)
    return KeResult(proc.returncode, proc.stdout, proc.stderr)


# A full disk at the artifact writer: every artifact write after the first ``KE_TEST_WRITES_OK`` fails with
# ENOSPC where the bytes meet the disk (a real file object whose write raises OSError 28).
FULL_DISK_AFTER = """
import io, os, types
import kernelevolve.store.objects as objects
_ok = [int(os.environ.get("KE_TEST_WRITES_OK", "0"))]
_real_fdopen = os.fdopen
class _Full(io.FileIO):
    def write(self, data):
        raise OSError(28, "No space left on device", self.name)
def _fdopen(fd, mode="r", *a, **k):
    if "w" in mode:
        if _ok[0] <= 0:
            return _Full(fd, "wb", closefd=True)
        _ok[0] -= 1
    return _real_fdopen(fd, mode, *a, **k)
class _Os(types.ModuleType):  # the object store's own view of os; the rest of the process keeps the real one
    def __getattr__(self, name):
        return getattr(os, name)
objects.os = _Os("os")
objects.os.fdopen = _fdopen
"""
