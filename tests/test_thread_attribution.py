"""Thread starts count against a candidate only when its own code starts them.

On an H100 a lowered layer norm was rejected on its fresh-seed re-verification with "the candidate started a
thread": the process had timed it in between, and the timing's ``torch.compile`` baseline started Inductor's
threads. A thread that torch, Triton or the evaluator starts for itself is not the candidate's, even when the
candidate's forward called into them; one that candidate code starts, directly or through the standard
library, is.
"""

from __future__ import annotations

import os

os.environ["TRITON_INTERPRET"] = "1"  # must precede the first triton.jit the candidates run

import sys  # noqa: E402
import textwrap  # noqa: E402
import threading  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from evaluators.correctness import Rejected, machinery_state, run_candidate  # noqa: E402
from evaluators.guard import install_launch_hooks, register_candidate_file, threads_started  # noqa: E402
from evaluators.loading import load_module  # noqa: E402
from evaluators.spec import load_spec  # noqa: E402

SWISH = Path(__file__).resolve().parents[1] / "kernelevolve" / "builtin_specs" / "swish.py"
LIBRARY = '''
import threading

def warm_up():
    """What a library does on first use: a helper thread of its own."""
    t = threading.Thread(target=lambda: None, daemon=True)
    t.start()
    t.join()
'''
KERNEL = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl
{imports}


@triton.jit
def _swish(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x * tl.sigmoid(x), mask=offs < n)


class TritonModel(nn.Module):
    def forward(self, x):
        {before}
        y = torch.empty_like(x)
        _swish[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
'''


@pytest.fixture()
def library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "ke_fake_library.py").write_text(LIBRARY)
    monkeypatch.syspath_prepend(str(tmp_path / "lib"))
    sys.modules.pop("ke_fake_library", None)
    return tmp_path


def _candidate(folder: Path, name: str, imports: str, before: str) -> Path:
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(KERNEL).format(imports=imports, before=before))
    return path


def test_only_candidate_code_counts(library: Path) -> None:
    install_launch_hooks()
    mine = library / "mine.py"
    mine.write_text("import threading\nimport concurrent.futures\nimport ke_fake_library\n"
                    "def direct():\n    threading.Thread(target=lambda: None).start()\n"
                    "def pooled():\n    concurrent.futures.ThreadPoolExecutor(1).submit(print, end='')\n"
                    "def through_library():\n    ke_fake_library.warm_up()\n")
    register_candidate_file(mine)
    module = load_module(mine, "threads_probe")
    for call, counted in ((module.direct, True), (module.pooled, True), (module.through_library, False)):
        before = threads_started()
        call()
        assert (threads_started() > before) is counted, call.__name__
    before = threads_started()
    threading.Thread(target=lambda: None).start()  # the evaluator's (this test's) own thread
    assert threads_started() == before


def test_library_thread_between_checks_is_no_cheat(library: Path) -> None:
    """The re-verification scenario: check, something of the evaluator's starts threads, check again."""
    spec = load_spec(SWISH)
    path = _candidate(library, "honest_with_library", "import ke_fake_library", "ke_fake_library.warm_up()")
    state = machinery_state()
    run_candidate(spec, str(path), "test", "cpu", [0], state)  # its forward makes the library start a thread
    threading.Thread(target=lambda: None).start()  # e.g. the timing's torch.compile baseline
    run_candidate(spec, str(path), "test", "cpu", [1009], state)  # the fresh-seed re-verification passes


def test_a_candidate_thread_is_still_rejected(library: Path) -> None:
    spec = load_spec(SWISH)
    path = _candidate(library, "threaded", "import threading", "threading.Thread(target=lambda: None).start()")
    with pytest.raises(Rejected, match="started a thread"):
        run_candidate(spec, str(path), "test", "cpu", [0], machinery_state())
