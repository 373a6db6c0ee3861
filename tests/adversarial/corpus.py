"""The adversarial corpus as data: each candidate file's header, parsed (shared by the CPU test and by
``benchmarks/adversarial_gpu.py``, which runs the same files through ``ke eval`` on a GPU)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
CANDIDATES = HERE / "candidates"
ROOT = HERE.parents[1]
OPS = ROOT / "kernelevolve" / "builtin_specs"
STATUSES = {"ok", "incorrect", "compile_error", "runtime_error", "timeout", "crash", "rejected"}
TIMEOUT_S = 20
_HEADER = re.compile(r"^#\s*(op|expect|reason|gpu-expect|gpu-reason|why|xfail)\s*:\s*(.*?)\s*$")


@dataclass(frozen=True)
class Case:
    path: Path
    cls: str
    op: str
    expect: str
    reason: str
    why: str
    xfail: str
    gpu_expect: str
    gpu_reason: str

    @property
    def spec_path(self) -> Path:
        return spec_path(self.op)


def spec_path(op: str) -> Path:
    """A built-in op's spec, or a spec file of this corpus (``specs/...``)."""
    return HERE / op if "/" in op else OPS / f"{op}.py"


def parse(path: Path) -> Case:
    fields: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        match = _HEADER.match(line)
        if match:
            fields[match.group(1)] = match.group(2)
    cls, sep, _ = path.stem.partition("__")
    assert sep, f"{path.name}: name must be <class>__<name>.py"
    for key in ("op", "expect", "why"):
        assert fields.get(key), f"{path.name}: missing '# {key}:' header"
    assert fields["expect"] in STATUSES, f"{path.name}: unknown expect '{fields['expect']}'"
    assert spec_path(fields["op"]).is_file(), f"{path.name}: unknown op '{fields['op']}'"
    assert fields.get("gpu-expect", "ok") in STATUSES, f"{path.name}: unknown gpu-expect"
    if fields["expect"] != "ok" and not fields.get("xfail"):
        # an xfail (evaluator gap) may leave the reason open: the fix decides the message
        assert fields.get("reason"), f"{path.name}: a failing expectation needs '# reason:'"
    return Case(path, cls, fields["op"], fields["expect"], fields.get("reason", ""), fields["why"],
                fields.get("xfail", ""), fields.get("gpu-expect", fields["expect"]),
                fields.get("gpu-reason", fields.get("reason", "")))


CASES = [parse(p) for p in sorted(CANDIDATES.glob("*.py"))]
