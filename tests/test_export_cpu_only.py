"""Exported kernels run on a CPU-only machine with no setting (issue 30, point 9): without a GPU driver Triton
fails at the first launch (``0 active drivers``) unless TRITON_INTERPRET=1 was set before the kernels were
defined, so every exported file sets it itself there, and its header says so.

One run (node 1 wins 'wide', PyTorch serves 'odd'; built as in test_export.py) is exported in every format,
plus a run whose one node wins everywhere (the kernel file as is); a fresh interpreter WITHOUT
TRITON_INTERPRET in its environment imports each export and runs a kernel-routed shape through it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import torch
from test_export import _run_with_timings

from kernelevolve.cli.main import main
from kernelevolve.export_cpu import with_cpu_fallback

PROBE = '''
import importlib.util, json, os, sys, torch
sys.path.insert(0, FOLDER)


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(FOLDER, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


x = torch.randn(2000)  # the measured 'wide' case: routed to node 1's kernel
want = x * torch.sigmoid(x)
dispatch = load("dispatch").DispatchModel()
torch.testing.assert_close(dispatch(x), want)
assert dispatch.last_route == "node 1", dispatch.last_route
single = load("single").TritonModel()
torch.testing.assert_close(single(x), want)
bench = load("bench").ModelNew()
torch.testing.assert_close(bench(x), want)
assert bench.last_route == "node 1", bench.last_route
import ke_swish
torch.testing.assert_close(ke_swish.Module()(x), want)
assert ke_swish.last_route == "node 1", ke_swish.last_route
print(json.dumps({"interpret": os.environ.get("TRITON_INTERPRET")}))
'''


def test_every_export_format_runs_on_a_cpu_only_machine_with_nothing_set(tmp_path: Path) -> None:
    (tmp_path / "routed").mkdir()
    (tmp_path / "winner").mkdir()
    routed = _run_with_timings(tmp_path / "routed" / "state", {"wide": (0.010, 0.025), "odd": (0.012, 0.009)})
    winner = _run_with_timings(tmp_path / "winner" / "state", {"wide": (0.010, 0.025), "odd": (0.008, 0.009)})
    deploy = tmp_path / "deploy"
    deploy.mkdir()
    for run_id, state, fmt, out in ((routed, "routed", "dispatch", "dispatch.py"),
                                    (routed, "routed", "kernelbench", "bench.py"),
                                    (routed, "routed", "torch-library", "ke_swish"),
                                    (winner, "winner", "dispatch", "single.py")):
        # in this process (the export, not the command, is under test here): four fewer start-ups of torch
        assert main(["best", run_id, "--format", fmt, "--out", str(deploy / out),
                     "--state-dir", str(tmp_path / state / "state")]) == 0
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    ran = subprocess.run([sys.executable, "-c", f"FOLDER = {str(deploy)!r}\n" + PROBE], capture_output=True,
                         text=True, env=env, cwd=deploy, timeout=300)
    assert ran.returncode == 0, ran.stderr[-3000:]
    expected = None if torch.cuda.is_available() else "1"  # a GPU machine keeps its driver
    assert json.loads(ran.stdout.strip().splitlines()[-1]) == {"interpret": expected}
    for header in (deploy / "dispatch.py", deploy / "bench.py", deploy / "ke_swish" / "__init__.py"):
        assert "CPU-only machine" in header.read_text() and "TRITON_INTERPRET=1" in header.read_text(), header
    for kernel_file in (deploy / "single.py", deploy / "dispatch_kernel.py", deploy / "ke_swish" / "kernel_node1.py"):
        text = kernel_file.read_text()
        assert text.index("_ke_os.environ[\"TRITON_INTERPRET\"] = \"1\"") < text.index("import triton"), kernel_file


def test_the_preamble_goes_after_the_docstring_and_future_imports() -> None:
    source = '"""Doc."""\nfrom __future__ import annotations\n\nimport triton\n'
    out = with_cpu_fallback(source)
    compile(out, "k.py", "exec")  # a __future__ import after other code would not compile
    assert out.startswith('"""Doc."""\nfrom __future__ import annotations\n\n# --- CPU-only machines')
    assert out.endswith("\n\nimport triton\n") and with_cpu_fallback("import triton\n").endswith("\n\nimport triton\n")
