"""The 160-operator ATen coverage suite (issue #8, part 1): its table, rendered specs and their lowering.

Cheap checks cover all 160 ops: unique names and every required category; each rendered spec loads, its
reference runs on its test inputs (and on meta tensors for the production cases, as the simulator does),
and FLOPS/BYTES are defined. The drafts come from the general lowering, one per input structure
(``kernelevolve.lowering``, ``per_structure``); for one representative op per family the candidate parses,
passes the static anti-cheat checks, exposes mutable tunables and passes the real sandboxed cpu evaluation
(Triton's interpreter, three seeds, fresh-input call, dynamic checks), as do tunable-mutated candidates,
and a deliberately wrong draft must come back ``incorrect``. The full 160/160 sweep on cpu and mtia-v3 is
``ke aten-sweep``'s job (tests/test_aten_sweep.py), which checks every op's draft the same way.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch

from evaluators.spec import load_spec
from evaluators.static_checks import check_source
from interpreters.executor import LocalExecutor
from interpreters.targets import get_target
from kernelevolve.aten import SUITE, get_op, render_spec
from kernelevolve.aten.op import CATEGORIES, FAMILIES
from kernelevolve.lowering import lower_spec
from kernelevolve.operators.tunables import find_tunables, rewrite

NAMES = [op.name for op in SUITE]
# One quick op per template family (the slowest family members interpret for tens of seconds).
REPRESENTATIVES = {"elementwise": "where.self", "reduction": "argmax.default", "scan": "cumsum.default",
                   "gather": "gather.default", "norm": "_softmax.default", "layout": "cat.default"}
REQUIRED = {"add.Tensor", "sum.dim_IntList", "gelu_backward.default", "native_layer_norm.default", "_softmax.default",
            "index_select.default", "embedding.default", "cumsum.default", "cumprod.default", "where.self",
            "masked_fill.Scalar", "_to_copy.default", "scatter_add.default", "triu.default", "flip.default",
            "erfinv.default", "atan2.default", "argmax.default", "logsumexp.default", "native_group_norm.default"}


@pytest.fixture(scope="module")
def spec_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("aten_specs")
    for op in SUITE:
        (root / f"{op.slug}.py").write_text(render_spec(op), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def cpu(tmp_path_factory):
    ex = LocalExecutor(get_target("cpu"), tmp_path_factory.mktemp("aten_cpu") / "scratch", timeout_s=300.0)
    yield ex
    ex.close()


def test_suite_has_160_unique_ops_covering_every_category() -> None:
    assert len(SUITE) == 160 and len(set(NAMES)) == 160
    assert {op.category for op in SUITE} == set(CATEGORIES)
    assert {op.family for op in SUITE} == set(FAMILIES)
    assert REQUIRED <= set(NAMES)
    for op in SUITE:
        assert op.overload == f"aten.{op.name}" and op.call.startswith(f"torch.ops.{op.overload}("), op.name
        packet, overload = op.name.rsplit(".", 1)
        assert hasattr(getattr(torch.ops.aten, packet), overload), f"{op.name} is not an ATen overload"
        assert isinstance(op.bandwidth_bound, bool)
    assert get_op("aten.add.Tensor") is get_op("add.Tensor")
    with pytest.raises(KeyError):
        get_op("no_such_op.default")


@pytest.mark.parametrize("name", NAMES)
def test_spec_loads_and_reference_runs(spec_dir: Path, name: str) -> None:
    op = get_op(name)
    spec = load_spec(spec_dir / f"{op.slug}.py")
    assert spec.get_test_inputs is not None and spec.init_args() == []
    torch.manual_seed(0)
    test = spec.cases("test")
    dtypes, shapes, empty = set(), set(), False
    reference = spec.reference_cls().eval()
    for case, inputs in test.items():
        with torch.no_grad():
            out = reference(*inputs)
        outs = out if isinstance(out, tuple | list) else (out,)
        assert all(isinstance(o, torch.Tensor) for o in outs), case
        dtypes.add(inputs[0].dtype)
        shapes.add(tuple(inputs[0].shape))
        empty |= any(t.numel() == 0 for t in inputs)
        assert spec.flops(inputs) is not None and spec.bytes(inputs) is not None
        assert spec.bytes(inputs) >= sum(o.numel() * o.element_size() for o in outs)
    assert len(test) >= 4 and len(shapes) >= 3, f"{name}: too few distinct test cases"
    assert empty or name in ("max.default", "min.default"), f"{name}: no empty case"  # ATen rejects those
    # the simulator builds production inputs on meta tensors and runs the reference there
    prod = spec.cases("prod", "meta")
    assert prod and all(max(t.numel() for t in c if isinstance(t, torch.Tensor)) >= 2**20 for c in prod.values())
    for inputs in prod.values():
        with torch.no_grad():
            reference(*inputs)
        assert spec.bytes(inputs) > 0


def _draft(spec_dir: Path, name: str) -> str:
    return lower_spec(spec_dir / f"{get_op(name).slug}.py", "cpu", per_structure=True)


def _every_block(source: str, value: int) -> str:
    """The draft with every block-size tunable (``*_BLOCK``, ``*_BLOCK_M``, ...) set to ``value``."""
    blocks = {t: value for t in find_tunables(source) if "_BLOCK" in t.name}
    assert blocks, "the draft has no block size to search"
    return rewrite(source, blocks)


@pytest.mark.parametrize("family", sorted(REPRESENTATIVES))
def test_representative_op_evaluates_ok_on_cpu(cpu: LocalExecutor, spec_dir: Path, family: str) -> None:
    op = get_op(REPRESENTATIVES[family])
    assert op.family == family
    source = _draft(spec_dir, op.name)
    tree = ast.parse(source)
    assert [n.name for n in tree.body if isinstance(n, ast.ClassDef)] == ["TritonModel"]
    assert check_source(source) == [], [str(v) for v in check_source(source)]
    assert source.startswith('"""\n---\nop: ') and "hardware: [any]" in source
    result = cpu.evaluate(spec_dir / f"{op.slug}.py", source)
    assert result.status == "ok", f"{op.name}: {result.status}: {result.reason}"
    assert result.cases and all(c.status == "ok" for c in result.cases)


@pytest.mark.parametrize("name", ["argmax.default", "triu.default", "constant_pad_nd.default"])
def test_the_smallest_blocks_stay_correct(cpu: LocalExecutor, spec_dir: Path, name: str) -> None:
    """The offline search may shrink every block to 16: masking keeps a reduction and the 2-D layout kernels
    exact (batched, 1-D and empty cases included)."""
    result = cpu.evaluate(spec_dir / f"{get_op(name).slug}.py", _every_block(_draft(spec_dir, name), 16))
    assert result.status == "ok", f"{result.status}: {result.reason}"


def test_wrong_lowering_is_incorrect(cpu: LocalExecutor, spec_dir: Path) -> None:
    """A draft that drops add's alpha=2 still passes the static checks but must fail correctness."""
    op = get_op("add.Tensor")
    source = _draft(spec_dir, op.name)
    assert "(a1 * 2)" in source
    wrong = source.replace("(a1 * 2)", "a1")
    assert check_source(wrong) == []
    result = cpu.evaluate(spec_dir / f"{op.slug}.py", wrong)
    assert result.status == "incorrect", f"{result.status}: {result.reason}"


def test_fmod_helper_is_exact_including_signed_zeros_and_specials() -> None:
    """The lowering's fmod against torch.fmod under the interpreter: random suite inputs exactly, zeros with
    the dividend's sign, inf and NaN rules; the one miss allowed is the documented |a/b| = 3e36 case."""
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "TRITON_INTERPRET": "1", "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run([sys.executable, str(Path(__file__).parents[1] / "benchmarks" / "fmod_exactness.py"),
                           "--n", "4096"], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout[done.stdout.index("{"):])
    assert report["random_mismatches"]["new"] == 0
    assert report["special_mismatches"]["new"] == 1
