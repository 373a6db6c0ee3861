"""Pointwise formulas the general lowering gained for ATen suite ops (bitwise shifts, silu/mish backward):
a spec using them passes the evaluator, and the shifts match ATen for amounts outside [0, bits) whatever the
hardware does with such an amount.

Triton's CPU interpreter shifts through NumPy, whose ``<<``/``>>`` already give ATen's out-of-range results;
compiled Triton emits a bare LLVM shift, undefined there. So the formulas are also checked on integers
whose shifts take the amount modulo the width (as x86 does), where only the formula's own guard is exact."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from helpers.lowering_checks import passes

from kernelevolve.lowering import lower_spec
from kernelevolve.lowering.pointwise_ops import OPS

SPEC = Path(__file__).parent / "specs" / "shifts_and_activation_grads.py"
NUMPY = {torch.int8: np.int8, torch.uint8: np.uint8, torch.int16: np.int16, torch.int32: np.int32,
         torch.int64: np.int64}
LEFT = {"bitwise_left_shift", "__lshift__"}


class _Wrapping:
    """An integer array whose shifts use the amount modulo the width: an out-of-range shift is wrong here."""

    def __init__(self, values: np.ndarray) -> None:
        self.v = values

    def _shift(self, other: _Wrapping, left: bool) -> _Wrapping:
        amount = other.v.astype(np.int64) % (self.v.dtype.itemsize * 8)
        return _Wrapping(np.left_shift(self.v, amount.astype(self.v.dtype)) if left
                         else np.right_shift(self.v, amount.astype(self.v.dtype)))

    def __lshift__(self, other: _Wrapping) -> _Wrapping:
        return self._shift(other, True)

    def __rshift__(self, other: _Wrapping) -> _Wrapping:
        return self._shift(other, False)

    def __ge__(self, other: int) -> np.ndarray:
        return self.v >= other

    def __lt__(self, other: int) -> np.ndarray:
        return self.v < other


def _where(cond: np.ndarray, a: object, b: object) -> _Wrapping:
    pick = np.where(cond, a.v if isinstance(a, _Wrapping) else a, b.v if isinstance(b, _Wrapping) else b)
    return _Wrapping(pick.astype((a if isinstance(a, _Wrapping) else b).v.dtype))


@pytest.mark.parametrize("dtype", sorted(NUMPY, key=str))
@pytest.mark.parametrize("op", ["bitwise_left_shift", "bitwise_right_shift", "__lshift__", "__rshift__"])
def test_shift_formulas_match_aten_outside_the_width(op: str, dtype: torch.dtype) -> None:
    bits = torch.iinfo(dtype).bits
    info = torch.iinfo(dtype)
    values = torch.tensor(sorted(v for v in {info.min, -7, -1, 0, 1, 5, 100, info.max} if info.min <= v <= info.max),
                          dtype=dtype)
    amounts = torch.tensor([a for a in (-70, -9, -1, 0, 1, 3, bits - 1, bits, bits + 1, 70, 127, 255)
                            if info.min <= a <= info.max], dtype=dtype)
    x, y = (t.reshape(-1) for t in torch.meshgrid(values, amounts, indexing="ij"))
    expected = (x << y) if op in LEFT else (x >> y)  # ATen's own, on the CPU
    expr = OPS[op](["x", "y"], {"_dtype": dtype, "_float": False})
    got = eval(expr, {"tl": SimpleNamespace(where=_where)},  # noqa: S307 - the formula's own text
               {"x": _Wrapping(x.numpy()), "y": _Wrapping(y.numpy())})
    got = got.v if isinstance(got, _Wrapping) else got
    assert np.array_equal(np.asarray(got).astype(NUMPY[dtype]), expected.numpy()), expr


@pytest.mark.slow
def test_shift_and_activation_grad_spec_passes_the_evaluator(ke, tmp_path: Path) -> None:
    for target in ("mtia-v3", "h100"):
        assert "_pointwise" in lower_spec(SPEC, target, per_structure=True)
    draft = lower_spec(SPEC, "cpu", per_structure=True)
    assert draft.count("    def _draft") == 5  # one per input structure
    verdict = passes(ke, SPEC, draft, tmp_path, "shifts_and_activation_grads", gpu_form=False)
    assert {c["name"] for c in verdict["cases"] if c["status"] == "ok"} == {
        "1000_i32_fp32", "7x33_i64_fp16", "3x5x17_i8_bf16", "65_u8_fp32", "7x33_row_i32_i64_fp32"}
