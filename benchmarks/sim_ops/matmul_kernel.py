import torch
import triton
import triton.language as tl

BLOCK_M = 64  # 16..256
BLOCK_N = 64  # 16..256
BLOCK_K = 32  # 16..128
NUM_WARPS = 4
NUM_STAGES = 3


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


class TritonModel(torch.nn.Module):
    def forward(self, a, b):
        m, k = a.shape
        n = b.shape[1]
        c = torch.empty((m, n), device=a.device, dtype=torch.float16)
        grid = (triton.cdiv(m, BLOCK_M), triton.cdiv(n, BLOCK_N))
        matmul_kernel[grid](a, b, c, m, n, k, BM=BLOCK_M, BN=BLOCK_N, BK=BLOCK_K, num_warps=NUM_WARPS,
                            num_stages=NUM_STAGES)
        return c
