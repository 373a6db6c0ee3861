"""A signal that reaches ``ke`` while it is still importing its commands (issue #30).

Before: the console script imported every command first; SIGTERM in those few hundred milliseconds ended ``ke``
with -15 and no line, and SIGINT printed a KeyboardInterrupt traceback. The test waits until the process has a
handler for SIGTERM (``SigCgt`` in /proc: the console script's first act; Python catches SIGINT from its own
start-up), then signals at once, well before
the commands are imported on any machine.
"""

from __future__ import annotations

import importlib.metadata
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO_ROOT

ENTRY = "import sys; from kernelevolve.cli.entry import main; sys.exit(main())"


def _catches(pid: int, signum: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = next(int(line.split()[1], 16) for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(mask >> (signum - 1) & 1)


def test_the_console_script_is_the_signal_holding_entry() -> None:
    scripts = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="console_scripts")}
    assert scripts.get("ke") == "kernelevolve.cli.entry:main"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_start_up_gets_one_line_and_130(tmp_path: Path, signum: int) -> None:
    env = {**os.environ, "PYTHONPATH": REPO_ROOT, "KE_EXECUTOR": "local"}
    state = tmp_path / "state"
    proc = subprocess.Popen([sys.executable, "-c", ENTRY, "search", "--op", "swish", "--hw", "cpu", "--budget",
                             "1", "--state-dir", str(state)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=REPO_ROOT, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 30
    while not _catches(proc.pid, signal.SIGTERM):  # Python's own start-up catches SIGINT already
        assert proc.poll() is None and time.monotonic() < deadline, "ke never installed a handler"
        time.sleep(0.002)
    os.kill(proc.pid, signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == [
        "ke: error: interrupted; resume with 'ke search --resume RUN' (a campaign or sweep: run it again)"]
    assert not state.exists()  # stopped before any work: nothing to resume, nothing half-written
