"""Jitted helper calls inside an interpreted launch skip the interpreter's redundant re-patching of
``triton.language`` (evaluators/interpreter_calls.py), with the same results, including Triton's own
reduction helpers (``tl.argmin``/``tl.sum`` call jitted combine functions in ``triton.language.standard``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = r'''
import json, sys
import torch, triton, triton.language as tl
from triton.runtime import interpreter

calls = {"patch": 0}
original = interpreter._patch_lang
def counting(fn):
    calls["patch"] += 1
    return original(fn)
interpreter._patch_lang = counting

if sys.argv[1] == "on":
    from evaluators import interpreter_calls
    assert interpreter_calls.install() and interpreter_calls.install()  # a second install is a no-op

@triton.jit
def _scaled(x, s):
    return tl.where(x > 0, x * s, x)

@triton.jit
def _kernel(x_ptr, out_ptr, idx_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    y = _scaled(x, 2.0)
    tl.store(out_ptr + offs, _scaled(y, 0.5) + tl.sum(y, axis=0), mask=offs < n)
    tl.store(idx_ptr + tl.program_id(0), tl.argmin(tl.where(offs < n, x, float("inf")), axis=0))

torch.manual_seed(0)
x = torch.randn(1000)
out, idx = torch.empty_like(x), torch.empty(8, dtype=torch.int32)
_kernel[(8,)](x, out, idx, 1000, BLOCK=128)
_kernel[(8,)](x, out, idx, 1000, BLOCK=128)
print(json.dumps({"out": out.tolist(), "idx": idx.tolist(), "patches": calls["patch"],
                  "where_restored": tl.where.__module__}))
'''


def _run(mode: str) -> dict:
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, env=env,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_helpers_in_a_launch_are_patched_once_with_the_same_results() -> None:
    plain, fast = _run("off"), _run("on")
    assert fast["out"] == plain["out"] and fast["idx"] == plain["idx"]
    # two launches of 8 programs, each program calling _scaled twice and Triton's reduction helpers: without
    # the skip every helper call re-patches; with it each launch patches once plus once for triton.language.core
    assert plain["patches"] > 40 and fast["patches"] <= 4, (plain["patches"], fast["patches"])
    assert fast["where_restored"] == plain["where_restored"]  # the launch's own scope still restores tl
