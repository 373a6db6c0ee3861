"""The simulator on kernels whose traffic and work are known by construction: it must count them exactly
and rank them as the physics says (docs/architecture.md §5, issue #4)."""

from __future__ import annotations

import os

os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported: these kernels run in the interpreter

import pytest  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import evaluators.sim_counter as sim_counter  # noqa: E402
from evaluators.cost_model import Hardware, dram_bytes, estimate  # noqa: E402
from evaluators.sim_counter import counting, replanned, sample_indices  # noqa: E402
from interpreters.executor import hardware_record  # noqa: E402
from interpreters.targets import get_target  # noqa: E402

H100 = Hardware.from_dict(hardware_record(get_target("h100")))


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def affine_relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.maximum(x * 2.0 + 1.0, 0.0), mask=mask)


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * factor, mask=mask)


@triton.jit
def add_one_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1.0, mask=mask)


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask), 0.0), mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


def count(launch_fn):
    with counting() as launches:
        launch_fn()
    return launches


def test_sampling_keeps_first_and_last_programs() -> None:
    assert sample_indices(10) == set(range(10))
    picked = sample_indices(100_000)
    assert {0, 99_999} <= picked and len(picked) <= 24


def test_copy_traffic_is_exact_and_time_tracks_bandwidth() -> None:
    n = (1 << 22) + 77  # not a multiple of the block: the partial last program must be weighted right
    x, y = torch.randn(n), torch.empty(n)
    launches = count(lambda: copy_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024))
    read, written = dram_bytes(launches[0], H100.cache_bytes)
    assert read == pytest.approx(4 * n, rel=1e-3) and written == pytest.approx(4 * n, rel=1e-3)
    est = estimate(launches, H100)
    floor_ms = 8 * n / (H100.dram_gbps * 1e9) * 1e3
    assert est["launches"][0]["limit"] == "memory"
    assert floor_ms < est["time_ms"] < 1.5 * floor_ms


def test_tiny_blocks_are_slower_than_wide_ones() -> None:
    n = 1 << 22
    x, y = torch.randn(n), torch.empty(n)
    wide = estimate(count(lambda: copy_kernel[(triton.cdiv(n, 2048),)](x, y, n, BLOCK=2048)), H100)
    tiny = estimate(count(lambda: copy_kernel[(triton.cdiv(n, 32),)](x, y, n, BLOCK=32)), H100)
    assert tiny["time_ms"] > 1.5 * wide["time_ms"]


def test_fused_beats_unfused_by_the_traffic_ratio() -> None:
    n = 1 << 22
    x, t1, t2, y = torch.randn(n), torch.empty(n), torch.empty(n), torch.empty(n)
    grid = (triton.cdiv(n, 1024),)
    fused = estimate(count(lambda: affine_relu_kernel[grid](x, y, n, BLOCK=1024)), H100)

    def unfused() -> None:
        scale_kernel[grid](x, t1, n, 2.0, BLOCK=1024)
        add_one_kernel[grid](t1, t2, n, BLOCK=1024)
        relu_kernel[grid](t2, y, n, BLOCK=1024)

    split = estimate(count(unfused), H100)
    assert len(split["launches"]) == 3
    moved = sum(lc["dram_read_bytes"] + lc["dram_write_bytes"] for lc in split["launches"])
    assert moved == pytest.approx(3 * 8 * n, rel=1e-3)
    assert split["time_ms"] / fused["time_ms"] == pytest.approx(3.0, rel=0.25)


def test_tiled_matmul_counts_flops_and_charges_cached_rereads_once() -> None:
    m = n = k = 256
    a, b = torch.randn(m, k).half(), torch.randn(k, n).half()
    c = torch.empty(m, n, dtype=torch.float16)
    launches = count(lambda: matmul_kernel[(m // 64, n // 64)](a, b, c, m, n, k, BM=64, BN=64, BK=32))
    launch = launches[0]
    assert launch.total("dot_flops") == pytest.approx(2 * m * n * k)
    requested = sum(launch.per_buffer("load_bytes"))
    unique = (m * k + k * n) * 2
    assert requested == pytest.approx(unique * (n // 64), rel=1e-6)  # each panel re-read once per tile row
    read, _ = dram_bytes(launch, H100.cache_bytes)
    assert read == pytest.approx(unique, rel=1e-6)  # 256 KiB fits in L2: re-reads are not DRAM traffic
    tiny_cache = Hardware(**{**H100.__dict__, "cache_bytes": 1024.0})
    read_small_cache, _ = dram_bytes(launch, tiny_cache.cache_bytes)
    assert read_small_cache > 3 * unique
    est = estimate(launches, H100)["launches"][0]
    dot_floor_ms = 2 * m * n * k / (989.4e12 * 0.75) * 1e3  # fp16 tensor-core rate at 75% achievable
    # plus the fp32 accumulator adds and the address arithmetic of every tile load
    assert dot_floor_ms <= est["compute_ms"] < 3 * dot_floor_ms


def test_programs_too_costly_to_interpret_24_times_are_sampled_fewer_with_the_same_totals(monkeypatch) -> None:
    """A long-K matmul program costs seconds on the interpreter: a published-size launch samples fewer of them,
    spread from the first to the last, and a uniform grid's extrapolated totals do not move."""
    m, n, k = 64, 16 * 50, 512
    a, b = torch.randn(m, k), torch.randn(k, n)
    c = torch.empty(m, n, dtype=torch.float16)

    def launch():
        return count(lambda: matmul_kernel[(m // 16, n // 16)](a, b, c, m, n, k, BM=16, BN=16, BK=16))[0]

    whole = launch()
    steps = whole.sampled[0].steps
    assert len(whole.sampled) == sim_counter.MAX_SAMPLED_PROGRAMS and steps > 32  # a loop of 32 tile steps
    monkeypatch.setattr(sim_counter, "STEP_BUDGET", 5 * steps)
    cut = launch()
    assert len(cut.sampled) == 5 and all(p.steps == steps for p in cut.sampled)
    for attr in ("dot_flops", "load_ops", "int_ops"):
        assert cut.total(attr) == pytest.approx(whole.total(attr))
    assert sum(cut.per_buffer("store_bytes")) == pytest.approx(m * n * 2)
    assert replanned(sample_indices(200), 0, 200, steps, budget=steps) == {0, 199}  # never fewer than 2
    assert replanned(sample_indices(200), 0, 200, steps, budget=30 * steps) == sample_indices(200)


def test_mtia_knobs_change_the_estimate() -> None:
    mtia = Hardware.from_dict(hardware_record(get_target("mtia-v3")))
    n = 1 << 22
    x, y = torch.randn(n), torch.empty(n)
    grid = (triton.cdiv(n, 1024),)
    plain = estimate(count(lambda: copy_kernel[grid](x, y, n, BLOCK=1024)), mtia)
    buffered = estimate(count(lambda: copy_kernel[grid](x, y, n, BLOCK=1024, cb_multiplier=4)), mtia)
    assert buffered["time_ms"] < plain["time_ms"]
    assert estimate(count(lambda: copy_kernel[grid](x, y, n, BLOCK=1024, cb_multiplier=4)), H100)["time_ms"] == \
        pytest.approx(estimate(count(lambda: copy_kernel[grid](x, y, n, BLOCK=1024)), H100)["time_ms"])
