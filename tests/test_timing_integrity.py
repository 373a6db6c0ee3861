"""The parts of un-gameable timing that run without a GPU: fresh inputs swapped in place, the sampled timed-output
check, the random sample of repetitions, a search node's early stop, and the precision floor (the GPU run of the
whole adversarial corpus is ``benchmarks/adversarial_gpu.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from evaluators.fresh_inputs import FreshInputs
from evaluators.job import SEARCH_PRECISION, EvaluationJob
from evaluators.precision import FREE, needs_exact, precision_problem, relative_error
from evaluators.spec import load_spec
from evaluators.timed_checks import TimedOutputError, output_check
from evaluators.timing import median_settled, sample_reps

SWISH = Path(__file__).resolve().parents[1] / "kernelevolve" / "builtin_specs" / "swish.py"


def _pair(shape=(64, 33)):
    torch.manual_seed(0)
    return (torch.randn(shape), 3), (torch.randn(shape), 3)


def test_swap_keeps_objects_moves_versions_and_alternates_values() -> None:
    working, other = _pair()
    first, second = working[0].clone(), other[0].clone()
    rotation = FreshInputs(working, other)
    assert rotation.in_place
    tensor, version = rotation.current()[0], working[0]._version
    assert rotation.advance() == 1
    assert rotation.current()[0] is tensor and torch.equal(tensor, second)
    assert tensor._version > version
    assert rotation.advance() == 0 and torch.equal(tensor, first)
    assert torch.equal(other[0], second)  # the other set holds the other content again


def test_swap_in_chunks_and_non_contiguous(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("evaluators.fresh_inputs.CHUNK_BYTES", 40)  # 10 floats a chunk: many chunks
    working, other = _pair((7, 13))
    a, b = working[0].clone(), other[0].clone()
    rotation = FreshInputs(working, other)
    rotation.advance()
    assert torch.equal(working[0], b) and torch.equal(other[0], a)
    t1, t2 = torch.randn(8, 6).t(), torch.randn(8, 6).t()  # transposed views: swapped through a clone
    c1, c2 = t1.clone(), t2.clone()
    FreshInputs((t1,), (t2,)).advance()
    assert torch.equal(t1, c2) and torch.equal(t2, c1)


def test_other_structure_alternates_whole_sets_and_writes_them() -> None:
    working, other = (torch.randn(5),), (torch.randn(7),)  # a data-dependent case: another length per seed
    rotation = FreshInputs(working, other)
    assert not rotation.in_place
    before = other[0]._version
    assert rotation.advance() == 1 and rotation.current() is other and other[0]._version > before
    assert rotation.advance() == 0 and rotation.current() is working


def test_sample_reps_draws_one_in_every_batch() -> None:
    for reps in (1, 15, 16, 17, 100, 500):
        picked = sample_reps(reps, batch=16)
        assert len(picked) == -(-reps // 16)
        assert all(0 <= r < reps for r in picked)
        assert sorted(r // 16 for r in picked) == list(range(-(-reps // 16)))
    assert len({frozenset(sample_reps(160)) for _ in range(20)}) > 1  # random, not a fixed pattern


def test_a_steady_median_settles_in_two_batches_and_a_noisy_one_does_not() -> None:
    steady = [20.0 + 0.1 * (i % 5) for i in range(32)]  # IQR 0.2 on 20.2: about 0.15% standard error
    assert median_settled(steady, SEARCH_PRECISION)
    noisy = [20.0 + 4.0 * (i % 7) for i in range(32)]  # IQR ~16 on ~32: about 8%
    assert not median_settled(noisy, SEARCH_PRECISION)
    assert median_settled(noisy * 400, SEARCH_PRECISION)  # the same spread over 12800 samples is precise
    assert not median_settled([1.0, 1.0, 1.0], SEARCH_PRECISION)  # too few to say


def test_only_a_search_node_may_stop_its_timing_early() -> None:
    full = EvaluationJob(spec_path="s.py", candidate_path="c.py", device="cuda")
    assert full.timing_options({})["precision"] is None  # ke eval and a run's re-measurements: the whole target
    node = full.search_node(screen_below=None)
    assert node.timing_options({})["precision"] == SEARCH_PRECISION
    assert EvaluationJob.from_dict(node.to_dict()) == node


def _check_for(working, other):
    spec = load_spec(SWISH)
    reference = spec.reference_cls()
    rotation = FreshInputs(working, other)
    counter: dict[str, int] = {}
    return rotation, output_check(spec, reference, rotation.current, "c", None, counter), counter


def test_timed_check_rejects_a_stale_output_and_accepts_a_fresh_one() -> None:
    working, other = (torch.randn(300),), (torch.randn(300),)
    rotation, check, counter = _check_for(working, other)
    swish = lambda x: x * torch.sigmoid(x)  # noqa: E731
    stale = swish(working[0])  # computed on the first content
    content = rotation.advance()
    check(swish(rotation.current()[0]), content, 0)
    assert counter == {"c": 1}
    with pytest.raises(TimedOutputError, match="stale or remembered result"):
        check(stale, content, 1)


class _Deferred(torch.Tensor):
    pass


def test_timed_check_rejects_a_tensor_subclass_and_a_non_tensor() -> None:
    working, other = (torch.randn(10),), (torch.randn(10),)
    rotation, check, _ = _check_for(working, other)
    out = (working[0] * torch.sigmoid(working[0])).as_subclass(_Deferred)
    with pytest.raises(TimedOutputError, match="not a plain torch.Tensor"):
        check(out, 0, 0)
    with pytest.raises(TimedOutputError, match="forward returned NoneType"):
        check(None, 0, 0)


def test_precision_floor_rejects_half_precision_and_near_zero_constants() -> None:
    torch.manual_seed(1)
    x = torch.randn(4096)
    exact = (x.double() * torch.sigmoid(x.double()))
    reference = x * torch.sigmoid(x)
    half = (x.half() * torch.sigmoid(x.half())).float()  # within 1e-2 of the reference everywhere
    assert torch.allclose(half, reference, atol=1e-2, rtol=1e-2)
    assert needs_exact([half], [reference])
    assert "below fp32 precision" in precision_problem([half], [reference], [exact])
    tiny_ref, tiny_exact = reference * 1e-6, exact * 1e-6
    zeros = torch.zeros_like(tiny_ref)
    assert torch.allclose(zeros, tiny_ref, atol=1e-4, rtol=1e-4)  # the tolerance alone would pass it
    assert relative_error(zeros, tiny_ref) == pytest.approx(1.0)
    assert "below fp32 precision" in precision_problem([zeros], [tiny_ref], [tiny_exact])
    assert precision_problem([reference.clone()], [reference], [exact]) is None


def test_precision_floor_accepts_a_long_sum_in_another_order() -> None:
    torch.manual_seed(2)
    rows = torch.randn(64, 1 << 16)
    reference = rows.sum(dim=1)
    blocked = rows.view(64, 256, 256).sum(dim=2).sum(dim=1)  # another, equally exact order
    sequential = torch.zeros(64)
    for chunk in rows.split(4096, dim=1):  # coarser: 16 fp32 partials added one after another
        sequential += chunk.sum(dim=1)
    exact = rows.double().sum(dim=1)
    for got in (blocked, sequential):
        assert relative_error(got, reference) < 1e-3
        assert precision_problem([got], [reference], [exact]) is None
    assert FREE < 1e-4


NOISY = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x + torch.randn_like(x)


def get_inputs():
    return [torch.rand(64)]


def get_init_inputs():
    return []
'''


def test_timed_check_of_a_reference_that_draws_seeds_both_sides_alike(tmp_path: Path) -> None:
    """A sampled timed call is seeded before it runs (timing.py) and its reference recompute alike, so a
    candidate that draws where the reference draws passes; one that draws from another state does not."""
    from evaluators.seeding import seed_forward

    path = tmp_path / "noisy.py"
    path.write_text(NOISY, encoding="utf-8")
    spec = load_spec(path)
    working, other = (torch.rand(64),), (torch.rand(64),)
    rotation = FreshInputs(working, other)
    counter: dict[str, int] = {}
    check = output_check(spec, spec.reference_cls(), rotation.current, "c", None, counter)
    x = rotation.current()[0]
    seed_forward(0, 2 + 5)
    check(x + torch.randn_like(x), 0, 5)
    assert counter == {"c": 1}
    seed_forward(0, 2 + 6)
    with pytest.raises(TimedOutputError, match="not the reference's"):
        check(x + torch.randn_like(x), 0, 5)
