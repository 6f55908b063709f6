#!/usr/bin/env python3
"""gk_gemm_bf16 against cuBLAS through PyTorch, bf16 in and out, in one process (timing rules:
compare_common.py).

  y = x w^T, F.linear's layout (x [M, K], w [N, K]; gk trans_a = 0, trans_b = 1) vs F.linear(x, w):
      4096^3 and 8192^3, and the Llama-3-8B linears at M = 1 .. 8192:
      qkv N = 6144, K = 4096; o N = 4096, K = 4096; gate/up fused N = 28672, K = 4096;
      up N = 14336, K = 4096; down N = 4096, K = 14336
  y = x w (w [K, N]; trans_b = 0) vs torch.matmul(x, w): 4096^3

gk gets the workspace gk_gemm_workspace_bytes asks for (a torch uint8 buffer: torch's allocator
gives 256-byte alignment), as a user following the header's manual would. TFLOP/s for every row;
% of the copy roof (bytes of x, w and y) where M <= 64, where the weight's bytes bound the time.

    python3 compare_gemm.py --lib lib/libgk.so --out OUT [--reps N] [--only WORK] [--dry-run]
"""

import compare_common
from gk_ctypes import GK_ACT_NONE, GK_BF16

LLAMA3_8B = [  # (name, N, K) of y[M, N] = x[M, K] w[N, K]^T
    ("qkv", 6144, 4096),
    ("o", 4096, 4096),
    ("gate/up", 28672, 4096),
    ("up", 14336, 4096),
    ("down", 4096, 14336),
]
LLAMA_M = [1, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
# x ~ N(0, 1) and w ~ N(0, 1 / K): y ~ N(0, 1). Both round an fp32 sum once to bf16 (2^-8
# relative); the sums' order differs (fp32, ~1e-4 here).
RTOL, ATOL = 2e-2, 2e-2


def gemm(s, work, m, n, k, trans_b):
    """y[m, n] = x[m, k] op(w), op(w) = w^T with w [n, k] (trans_b = 1, F.linear) or w [k, n] (trans_b = 0)."""
    if not s.wants(work):
        return
    torch = s.torch
    F = torch.nn.functional
    ldb = k if trans_b else n
    ws_bytes = s.gk.gemm_workspace_bytes(m, n, k, 0, k, trans_b, ldb)
    workspace = torch.empty(max(ws_bytes, 1), dtype=torch.uint8, device="cuda")
    ws_ptr = workspace.data_ptr() if ws_bytes else None

    def make():
        w = s.randn(n, k, scale=k ** -0.5) if trans_b else s.randn(k, n, scale=k ** -0.5)
        return {"x": s.randn(m, k), "w": w, "y": s.nan(m, n)}

    def gk(t):
        s.gk.gemm_bf16(t["y"].data_ptr(), GK_BF16, n, t["x"].data_ptr(), k, 0, t["w"].data_ptr(), ldb, trans_b,
                       None, 0, None, m, n, k, 1.0, 0.0, GK_ACT_NONE, ws_ptr, ws_bytes, s.stream)

    def ref(t):
        return F.linear(t["x"], t["w"]) if trans_b else torch.matmul(t["x"], t["w"])

    nbytes = (m * k + n * k + m * n) * 2
    s.measure(work, "M=%d N=%d K=%d" % (m, n, k), nbytes, make, gk, ref,
              check=lambda t, want: s.check("gemm y", t["y"], want, RTOL, ATOL),
              bytes_min=nbytes if m <= 64 else None, flops=2.0 * m * n * k)


def run_cases(s):
    gemm(s, "gemm NT (F.linear)", 4096, 4096, 4096, 1)
    gemm(s, "gemm NN (torch.matmul)", 4096, 4096, 4096, 0)
    gemm(s, "gemm NT (F.linear)", 8192, 8192, 8192, 1)
    for name, n, k in LLAMA3_8B:
        for m in LLAMA_M:
            gemm(s, "llama3-8b %s (F.linear)" % name, m, n, k, 1)


if __name__ == "__main__":
    compare_common.main("compare_gemm", __doc__, run_cases)
