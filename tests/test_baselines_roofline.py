"""Pure pieces of the GPU path that can be checked without a GPU: the baseline cache and the roofline."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluators.baselines import BaselineCache, cache_key
from evaluators.roofline import Peaks, analyse, default_work

H100 = Peaks(dram_gbps=3350, tflops={"fp32": 67, "fp16": 989.4}, launch_overhead_us=4.0)


def test_cache_round_trip_and_keys_separate_versions(tmp_path: Path) -> None:
    cache = BaselineCache(tmp_path / "b")
    k1 = cache_key("spec", "case", "NVIDIA H100", {"torch": "2.11"})
    k2 = cache_key("spec", "case", "NVIDIA H100", {"torch": "2.12"})
    assert k1 != k2 and cache.get(k1) is None
    cache.put(k1, {"compile_over_eager": 0.8})
    assert cache.get(k1) == {"compile_over_eager": 0.8} and cache.get(k2) is None
    assert BaselineCache(None).get(k1) is None


def test_memory_bound_copy() -> None:
    # 1 GiB read + 1 GiB written at 3.35 TB/s: 0.641 ms floor; measured 0.8 ms is 80% of it
    nbytes = 2 * (1 << 30)
    out = analyse(flops=0, nbytes=nbytes, dtype="fp32", measured_ms=0.8, peaks=H100)
    assert out["bottleneck"] == "memory"
    assert out["floor_ms"] == pytest.approx(nbytes / 3350e9 * 1e3)
    assert out["fraction_of_floor"] == pytest.approx(out["floor_ms"] / 0.8)


def test_compute_bound_matmul_uses_the_dtype_rate() -> None:
    n = 8192
    flops, nbytes = 2 * n**3, 3 * n * n * 2
    fp16 = analyse(flops, nbytes, "fp16", measured_ms=2.0, peaks=H100)
    fp32 = analyse(flops, nbytes, "fp32", measured_ms=20.0, peaks=H100)
    assert fp16["bottleneck"] == fp32["bottleneck"] == "compute"
    assert fp32["compute_floor_ms"] / fp16["compute_floor_ms"] == pytest.approx(989.4 / 67)


def test_tiny_kernels_are_latency_bound() -> None:
    out = analyse(flops=1e3, nbytes=4096, dtype="fp32", measured_ms=0.006, peaks=H100)
    assert out["bottleneck"] == "latency" and out["floor_ms"] == pytest.approx(0.004)


def test_spec_extra_baselines_are_checked_against_the_reference() -> None:
    """conv1d's conv2d channels-last baseline computes the op; a baseline that does not is never timed."""
    from evaluators.performance import _agrees
    from evaluators.spec import load_spec
    from kernelevolve.builtin_specs import resolve_op

    spec = load_spec(resolve_op("conv1d"))
    reference = spec.reference_cls()
    baselines = spec.extra_baselines(reference)
    assert set(baselines) == {"conv2d_channels_last"}
    for case in spec.cases("test").values():
        assert _agrees(spec, baselines["conv2d_channels_last"], reference, case)
        assert not _agrees(spec, lambda x: reference(x) + 0.1, reference, case)
    assert load_spec(resolve_op("swish")).extra_baselines is None


def test_a_spec_without_flops_or_bytes_gets_its_reference_work() -> None:
    """A KernelBench-format file states no FLOPS/BYTES; its floor used to be the launch overhead alone."""
    import torch

    torch.manual_seed(0)
    reference = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU())
    x = torch.randn(16, 64)
    flops, nbytes = default_work(reference, (x,))
    assert flops == 2 * 16 * 64 * 32  # the addmm; the relu is not counted (a lower bound)
    assert nbytes == 4 * (16 * 64 + 32 * 64 + 32 + 16 * 32)  # input, weight, bias, output
    floor = analyse(flops, nbytes, "fp32", 1.0, Peaks(3350.0, {"fp32": 67.0}, 4.0))
    assert floor["memory_floor_ms"] > 0 and floor["floor_ms"] == 0.004  # tiny: the launch still dominates
