"""``ke best --format torch-library`` and ``--format kernelbench``: the same routes as the dispatch export,
rendered as a ``torch.library`` custom op and as a KernelBench ``ModelNew`` file.

Runs are built as in test_export.py (real DuckDB file and object store, per-case timings written by the test
because a CPU cannot time kernels). The op holds a parameter inside a submodule and a buffer, so the export
must pass every tensor it reads explicitly. What is exported is then imported in a fresh interpreter with
TRITON_INTERPRET=1 (set before triton is imported; the kernels run on Triton's CPU interpreter).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT
from test_export import _run_with_timings

from kernelevolve.export_torch_library import op_identifier

AFFINE = '''
class Affine(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(features))
'''

SPEC = '''import torch
import torch.nn as nn
''' + AFFINE + '''

class PytorchModel(nn.Module):
    """y = relu(x * affine.weight + shift), per column of x [M, features]."""

    def __init__(self, features):
        super().__init__()
        self.affine = Affine(features)
        self.register_buffer("shift", torch.randn(features))

    def forward(self, x):
        return torch.relu(x * self.affine.weight + self.shift)


def get_init_inputs():
    return [48]


def get_inputs(device="cpu"):
    return {"wide": (torch.randn(64, 48, device=device),), "odd": (torch.randn(5, 48, device=device),),
            "tall": (torch.randn(300, 48, device=device),)}
'''

KERNEL = '''import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK_SIZE = 256
''' + AFFINE + '''

@triton.jit
def _affine_relu(x_ptr, w_ptr, s_ptr, y_ptr, n_elements, n_cols, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    col = offs % n_cols
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + col, mask=mask, other=0.0).to(tl.float32)
    s = tl.load(s_ptr + col, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, tl.maximum(x * w + s, 0.0).to(y_ptr.dtype.element_ty), mask=mask)


class TritonModel(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.affine = Affine(features)
        self.register_buffer("shift", torch.zeros(features))

    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        _affine_relu[(triton.cdiv(n, BLOCK_SIZE),)](x, self.affine.weight, self.shift, y, n, x.shape[-1],
                                                    BLOCK_SIZE=BLOCK_SIZE)
        return y
'''

# node 1 wins 'wide' (2.5x) and loses the rest; node 2 wins the geomean and 'tall'; nothing beats eager on 'odd'
NODE_TIMINGS = ({"wide": (0.010, 0.025), "odd": (0.012, 0.009), "tall": (0.020, 0.010)},
                {"wide": (0.020, 0.024), "odd": (0.010, 0.007), "tall": (0.010, 0.015)})
EXPECTED_ROUTES = {"wide": "node 1", "odd": "pytorch", "tall": "node 2", "unseen": "node 2"}
SHAPES = {"wide": (64, 48), "odd": (5, 48), "tall": (300, 48), "unseen": (7, 48)}
OP = "1-affine relu"  # a spec file's stem: the op's registered name must be made an identifier


def _python(code: str, cwd: Path) -> str:
    """Run ``code`` in a fresh interpreter on the Triton CPU interpreter; its last stdout line."""
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=600,
                         env={**os.environ, "TRITON_INTERPRET": "1"})
    assert ran.returncode == 0, ran.stderr[-4000:]
    return ran.stdout.strip().splitlines()[-1]


def _routed_run(ke, tmp_path: Path) -> tuple[Path, str]:
    state = tmp_path / "state"
    run_id = _run_with_timings(state, *NODE_TIMINGS, spec_text=SPEC, kernel=KERNEL, op=OP)
    return state, run_id


def test_op_names_are_identifiers() -> None:
    assert op_identifier("swish") == "swish"
    assert op_identifier("1-affine relu") == "op_1_affine_relu"
    assert op_identifier("problems/level1/19_ReLU.py") == "op_19_relu"
    assert op_identifier("class") == "class_"


TORCH_LIBRARY_PROBE = '''
import json, torch, torch.nn as nn
import ke_affine
from ke_affine import reference

torch.manual_seed(0)
model = ke_affine.Module(*reference.get_init_inputs())
ref = reference.PytorchModel(*reference.get_init_inputs())
ref.load_state_dict(model.state_dict())  # the Module's state_dict is the reference's
with torch.no_grad():
    model.affine.weight.copy_(torch.linspace(-1, 1, 48))  # make both outputs depend on every tensor
    model.shift.copy_(torch.linspace(0.5, -0.5, 48))
ref.load_state_dict(model.state_dict())
op = torch.ops.kernelevolve.op_1_affine_relu
routes, compiled_routes = {}, {}
for name, shape in SHAPES.items():
    x = torch.randn(*shape)
    y = op(x, *ke_affine.op_tensors(model))  # the op, with the tensors read explicitly
    torch.testing.assert_close(y, ref(x), atol=1e-5, rtol=1e-5)
    routes[name] = ke_affine.last_route


def around(z, x):  # no transcendental: Inductor's vectorized tanh was 3e-5 off eager's on one CI host
    return z * z * 0.25 + x


class Net(nn.Module):  # a user's model around the op, compiled whole
    def __init__(self):
        super().__init__()
        self.block = model

    def forward(self, x):
        z = self.block(x)
        return z, around(z, x)


net = torch.compile(Net(), fullgraph=True)  # default backend: inductor
for name in ("wide", "odd"):
    x = torch.randn(*SHAPES[name], requires_grad=True)
    z, y = net(x)
    x_ref = x.detach().clone().requires_grad_()
    z_ref = ref(x_ref)
    y_ref = around(z_ref, x_ref)
    torch.testing.assert_close(z, z_ref, atol=1e-5, rtol=1e-5)  # the op itself, inside the compiled graph
    torch.testing.assert_close(y, y_ref, atol=1e-5, rtol=1e-5)
    compiled_routes[name] = ke_affine.last_route
    y.sum().backward()  # gradients come from the reference's formula
    y_ref.sum().backward()
    torch.testing.assert_close(x.grad, x_ref.grad)
    torch.testing.assert_close(model.affine.weight.grad, ref.affine.weight.grad)
    model.zero_grad()
    ref.zero_grad()
try:
    ke_affine.Module(12)
    refused = False
except ValueError:
    refused = True
print(json.dumps({"routes": routes, "compiled": compiled_routes, "schema": ke_affine.SCHEMA,
                  "refused": refused}))
'''


@pytest.mark.slow
def test_torch_library_export_runs_under_torch_compile(ke, tmp_path: Path) -> None:
    """Imported, called through torch.ops.kernelevolve and inside torch.compile(fullgraph=True) with the default
    inductor backend (it compiles the surrounding graph on the CPU with the system's C++ compiler); outputs and
    gradients match the reference, and each shape takes the route the plan gave it."""
    state, run_id = _routed_run(ke, tmp_path)
    out = tmp_path / "deploy" / "ke_affine"
    out.parent.mkdir()
    result = ke("best", run_id, "--format", "torch-library", "--out", str(out), "--state-dir", str(state), "--json")
    assert result.returncode == 0, result.stderr
    payload = result.json()
    assert payload["format"] == "torch-library" and payload["kernel_nodes"] == [2, 1]
    assert sorted(Path(f).name for f in payload["files"]) == [
        "__init__.py", "_runtime.py", "kernel_node1.py", "kernel_node2.py", "reference.py"]
    assert payload["kernel_files"] == {"2": str(out / "kernel_node2.py"), "1": str(out / "kernel_node1.py")}
    again = ke("best", run_id, "--format", "torch-library", "--out", str(out), "--state-dir", str(state))
    assert again.returncode == 0, again.stderr  # an earlier export of its own is rewritten in place
    assert "kernelevolve::op_1_affine_relu" in again.stdout

    probe = f"SHAPES = {SHAPES!r}\n" + TORCH_LIBRARY_PROBE
    seen = json.loads(_python(probe, out.parent))
    assert seen["routes"] == EXPECTED_ROUTES
    assert seen["compiled"] == {"wide": "node 1", "odd": "pytorch"}
    assert seen["schema"] == "(Tensor x, Tensor affine_weight, Tensor shift) -> Tensor"
    assert seen["refused"]  # the op was built for the run's init args


KERNELBENCH_SPEC = '''import torch
import torch.nn as nn
''' + AFFINE + '''

class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.affine = Affine(features)
        self.register_buffer("shift", torch.randn(features))

    def forward(self, x):
        return torch.relu(x * self.affine.weight + self.shift)


def get_inputs():
    return [torch.randn(64, 48)]


def get_test_inputs():
    return [(torch.randn(5, 48),), (torch.randn(300, 48),)]


def get_init_inputs():
    return [48]
'''

KERNELBENCH_PROBE = '''
import importlib.util, json, sys, torch


def load(path, name):  # as KernelBench loads a problem and a generated ModelNew: a module from a file
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


report = {}
for label, problem_file, new_file in CASES:
    problem, generated = load(problem_file, label + "_problem"), load(new_file, label + "_new")
    init = problem.get_init_inputs()
    torch.manual_seed(42)
    model = problem.Model(*init)
    torch.manual_seed(42)
    model_new = generated.ModelNew(*init)
    same_init = all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), model_new.state_dict().values()))
    keys = list(model_new.state_dict()) == list(model.state_dict())
    with torch.no_grad():  # different weights than the seed gave, copied as the brief's harness does
        for t in model.state_dict().values():
            t.copy_(torch.randn_like(t))
    model_new.load_state_dict(model.state_dict())
    inputs = problem.get_inputs()
    cases = [tuple(inputs)] if not isinstance(inputs, dict) else list(inputs.values())
    if hasattr(problem, "get_test_inputs"):
        extra = problem.get_test_inputs()
        cases += list(extra.values()) if isinstance(extra, dict) else [tuple(c) for c in extra]
    cases.append((torch.randn(7, 48),))
    routes = []
    with torch.no_grad():
        for args in cases:
            torch.testing.assert_close(model_new(*args), model(*args), atol=1e-5, rtol=1e-5)
            routes.append([list(args[0].shape), model_new.last_route])
    report[label] = {"same_init": same_init, "keys": keys, "routes": routes}
print(json.dumps(report))
'''


@pytest.mark.slow
def test_kernelbench_export_loads_like_kernelbench(ke, tmp_path: Path) -> None:
    """One file, loaded next to the problem file: ModelNew(*get_init_inputs()) matches Model on the problem's
    inputs. Three runs: a KernelBench-layout problem whose one case no kernel won (PyTorch there, the kernel on
    other shapes), the three-case run whose two kernel nodes define the same names in one file, and a run
    `ke search` made on the cpu target (no timings: its best node everywhere)."""
    (tmp_path / "kb").mkdir()
    kb_state = tmp_path / "kb" / "state"
    kb_run = _run_with_timings(kb_state, {"case0": (0.012, 0.009)}, spec_text=KERNELBENCH_SPEC, kernel=KERNEL,
                               op="7_affine_relu")
    state, run_id = _routed_run(ke, tmp_path)
    searched = tmp_path / "searched"  # and a run made by `ke search` itself (untimed on the cpu target)
    searched.mkdir()
    (searched / "swish.py").write_text((Path(REPO_ROOT) / "tests" / "specs" / "kernelbench_swish.py").read_text())
    search = ke("search", "--op", str(searched / "swish.py"), "--hw", "cpu", "--budget", "1", "--strategy", "greedy",
                "--operator", "offline", "--state-dir", str(searched / "state"), "--json")
    assert search.returncode == 0, search.stderr
    files = {}
    for label, st, rid in (("kb", kb_state, kb_run), ("routed", state, run_id),
                           ("searched", searched / "state", search.json()["run_id"])):
        out = tmp_path / f"{label}_new.py"
        result = ke("best", rid, "--format", "kernelbench", "--out", str(out), "--state-dir", str(st), "--json")
        assert result.returncode == 0, result.stderr
        assert result.json()["files"] == [str(out)]
        files[label] = out
    assert "class ModelNew(Reference):" in files["routed"].read_text()
    folder = tmp_path / "deploy"  # the problem file alone: the ModelNew file must carry everything it needs
    folder.mkdir()
    cases = []
    for label, spec_text in (("kb", KERNELBENCH_SPEC), ("routed", SPEC.replace("PytorchModel", "Model")),
                             ("searched", (searched / "swish.py").read_text())):
        (folder / f"{label}_problem.py").write_text(spec_text)
        (folder / f"{label}_new.py").write_text(files[label].read_text())
        cases.append((label, str(folder / f"{label}_problem.py"), str(folder / f"{label}_new.py")))
    report = json.loads(_python(f"CASES = {cases!r}\n" + KERNELBENCH_PROBE, folder))
    for label in ("kb", "routed", "searched"):
        assert report[label]["same_init"] and report[label]["keys"], report[label]
    assert report["kb"]["routes"] == [[[64, 48], "pytorch"], [[5, 48], "node 1"], [[300, 48], "node 1"],
                                      [[7, 48], "node 1"]]
    assert [route for _, route in report["searched"]["routes"]] == ["node 1", "node 1"]  # no timings: the best
    assert report["routed"]["routes"] == [[[64, 48], "node 1"], [[5, 48], "pytorch"], [[300, 48], "node 2"],
                                          [[7, 48], "node 2"]]


def test_torch_library_export_refuses_a_folder_that_cannot_be_imported(ke, tmp_path: Path) -> None:
    state, run_id = _routed_run(ke, tmp_path)
    out = tmp_path / "ke-affine"
    result = ke("best", run_id, "--format", "torch-library", "--out", str(out), "--state-dir", str(state))
    assert result.returncode == 2 and result.stderr.startswith("ke: error: ") and "identifier" in result.stderr
    assert not out.exists()
    folder = tmp_path / "a_folder"
    folder.mkdir()
    result = ke("best", run_id, "--format", "kernelbench", "--out", str(folder), "--state-dir", str(state))
    assert result.returncode == 2 and "writes a file" in result.stderr
    (folder / "__init__.py").write_text("import os\n")  # a user's own package is never overwritten
    result = ke("best", run_id, "--format", "torch-library", "--out", str(folder), "--state-dir", str(state))
    assert result.returncode == 2 and "not an earlier torch-library export" in result.stderr
    assert [p.name for p in folder.iterdir()] == ["__init__.py"]
    assert (folder / "__init__.py").read_text() == "import os\n"
    bad = ke("best", run_id, "--format", "onnx", "--out", str(tmp_path / "x.py"), "--state-dir", str(state))
    assert bad.returncode == 2 and bad.stderr.startswith("ke: error: ") and "onnx" in bad.stderr
