"""A handful of the project's own corpus (benchmarks/any_op/) searched end to end offline on the cpu target,
through the same driver that produces benchmarks/results/any_op_cpu.*: one problem per kind (a matmul, a
convolution, a fusion, a block), each drafted from the lowering and judged by the real evaluator."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HANDFUL = "level1/04_*,level1/16_*,level2/16_*,level3/01_*"


@pytest.mark.slow
def test_a_handful_of_the_corpus_is_correct_offline(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "any_op_sweep.py"), "--hw", "cpu", "--budget",
                           "1", "--concurrency", "2", "--only", HANDFUL, "--state-dir", str(tmp_path / "state"),
                           "--write", str(tmp_path / "matrix")], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads((tmp_path / "matrix.json").read_text())
    rows = {r["op"]: r for r in report["rows"]}
    assert sorted(rows) == ["level1/04_matmul_transposed_b", "level1/16_conv2d_square",
                            "level2/16_linear_batchnorm1d_gelu", "level3/01_mlp"], sorted(rows)
    for name, row in rows.items():
        assert row["correct"] and row["status"] == "ok" and row["nodes"] == 1, (name, row["status"], row["reason"])
        assert row["shrunk"], f"{name}: production sizes were not shrunk for the interpreter"
    assert {level: s["correct"] for level, s in report["levels"].items()} == {"level1": 2, "level2": 1, "level3": 1}
