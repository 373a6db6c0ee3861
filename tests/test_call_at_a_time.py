"""The check runs and judges one call at a time (issue #28): while the judge runs the reference for a call, the
candidate process holds that call's outputs only, and the judge's reference cache stays within its bytes.

On an H100 a transposed conv's evaluation peaked at 3.8x its case while the candidate held both calls' outputs
during the judge's reference run; these tests pin the protocol that removed it, on the CPU interpreter."""

from __future__ import annotations

import os

os.environ["TRITON_INTERPRET"] = "1"  # must precede the first triton.jit the candidate runs

import gc  # noqa: E402
import weakref  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402

from evaluators.candidate import load_candidate_class  # noqa: E402
from evaluators.correctness import CALLS, SeedCheck, judge, machinery_state  # noqa: E402
from evaluators.judging import ReferenceCache  # noqa: E402
from evaluators.numerics import configure_numerics  # noqa: E402
from evaluators.spec import load_spec  # noqa: E402

configure_numerics()  # as every evaluation process does: the autotuned candidate runs its first config

ROOT = Path(__file__).resolve().parents[1]
SWISH = ROOT / "kernelevolve" / "builtin_specs" / "swish.py"
HONEST = ROOT / "tests" / "adversarial" / "candidates" / "honest__swish_autotune.py"


def test_the_second_call_lets_the_first_calls_outputs_go() -> None:
    spec, before = load_spec(str(SWISH)), machinery_state()
    check = SeedCheck(spec, load_candidate_class(HONEST), "test", "cpu", 0, True, before)
    first = check.first_call()
    assert judge(spec, "test", "cpu", [0], first, calls=(0,))[0].status == "ok"
    held = [weakref.ref(t) for outs, _ in check.kept.values() for t in outs]
    assert held and all(ref() is not None for ref in held)
    del first  # the worker has judged the first call: its copies go
    second = check.second_call()
    gc.collect()
    assert all(ref() is None for ref in held), "the first call's outputs outlived the second call"
    assert set(second) == {f"0/{name}/{CALLS[1]}" for name in spec.cases("test", "cpu")}
    cases = judge(spec, "test", "cpu", [0], second, calls=(1,))
    assert cases and all(c.status == "ok" for c in cases), [c.error for c in cases]


def test_a_call_judged_against_the_other_calls_reference_fails() -> None:
    """The judge compares each call with its own inputs' reference: the first call's outputs offered as the
    second's are wrong (the seed's fresh values differ)."""
    spec, before = load_spec(str(SWISH)), machinery_state()
    check = SeedCheck(spec, load_candidate_class(HONEST), "test", "cpu", 0, True, before)
    first = check.first_call()
    relabelled = {key.replace(f"/{CALLS[0]}", f"/{CALLS[1]}"): outs for key, outs in first.items()}
    cases = judge(spec, "test", "cpu", [0], relabelled, calls=(1,))
    assert any(c.status == "incorrect" and "fresh-input call" in c.error for c in cases)


def test_a_full_reference_cache_admits_nothing_more_and_keeps_its_hits() -> None:
    """Cycling through more calls than fit, the cache keeps what it admitted first (an evicting cache would miss
    every time over such a cycle) and never holds more than its bound."""
    spec = load_spec(str(SWISH))
    one_call = sum(t.numel() * t.element_size() for _, outs in next(ReferenceCache(0).calls(
        spec, "test", "cpu", 0, (0,)))[1].items() for t in outs)
    cache = ReferenceCache(int(one_call * 1.5))
    for _ in range(2):
        for seed in (0, 1, 2):
            for index, expected in cache.calls(spec, "test", "cpu", seed):
                assert all(isinstance(t, torch.Tensor) for outs in expected.values() for t in outs)
                assert index in (0, 1)
    assert cache.held_bytes == one_call <= cache.max_bytes
    assert cache.hits == 1 and cache.misses == 11


def test_a_reference_output_that_views_a_larger_buffer_is_kept_compact(tmp_path) -> None:
    """A loss's mean can be a 0-d view of its elementwise buffer: the judge (and its cache) must hold 4 bytes,
    not the buffer the view keeps alive."""
    spec_file = tmp_path / "huber.py"
    spec_file.write_text(
        "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
        "    def forward(self, a, b):\n        return torch.nn.functional.smooth_l1_loss(a, b)\n\n\n"
        "def get_inputs():\n    return [torch.rand(200, 200), torch.rand(200, 200)]\n\n\n"
        "def get_init_inputs():\n    return []\n")
    spec = load_spec(str(spec_file))
    raw = torch.nn.functional.smooth_l1_loss(torch.rand(300, 300), torch.rand(300, 300))
    assert raw.untyped_storage().nbytes() > 1000, "this torch no longer returns a view: pick another example"
    cache = ReferenceCache(1 << 20)
    for _, expected in cache.calls(spec, "test", "cpu", 0):
        [[out]] = expected.values()
        assert out.untyped_storage().nbytes() == out.element_size()
    assert cache.held_bytes == 2 * 4
