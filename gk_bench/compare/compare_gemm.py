#!/usr/bin/env python3
"""gk_gemm_bf16 against cuBLAS through PyTorch, bf16 in and out, in one process (timing rules:
compare_common.py), over the GEMM shape suite (gemm_suite.py: the Llama-3-8B and -70B linears at
M = 1 .. 8192, squares 1024 .. 16384 in the four layouts, 50 seeded random shapes).

  NT  y = x w^T, F.linear's layout (x [M, K], w [N, K]; gk trans_a = 0, trans_b = 1) vs F.linear(x, w)
  NN  y = x w (w [K, N]) vs torch.matmul(x, w)
  TN, TT  x stored [K, M] (gk trans_a = 1) vs torch.matmul(x.t(), w) / torch.matmul(x.t(), w.t())

gk gets the workspace gk_gemm_workspace_bytes asks for (a torch uint8 buffer: torch's allocator
gives 256-byte alignment), as a user following the header's manual would. TFLOP/s for every row;
% of the copy roof (bytes of x, w and y) where M <= 64, where the weight's bytes bound the time.
After the rows: the geometric mean of torch / gk time over the suite's shapes that ran, the lowest,
and the count under 0.9x.

    python3 compare_gemm.py --lib lib/libgk.so --out OUT [--reps N] [--only WORK] [--dry-run]
"""

import math

import compare_common
import gemm_suite
from gk_ctypes import GK_ACT_NONE, GK_BF16

# x ~ N(0, 1) and w ~ N(0, 1 / K): y ~ N(0, 1). Both round an fp32 sum once to bf16 (2^-8
# relative); the sums' order differs (fp32, ~1e-4 here).
RTOL, ATOL = 2e-2, 2e-2


def gemm(s, work, m, n, k, trans_a, trans_b):
    """y[m, n] = op(x) op(w): op(x) = x [m, k] (trans_a = 0) or x^T with x [k, m]; op(w) = w^T with
    w [n, k] (trans_b = 1, F.linear) or w [k, n]."""
    if not s.wants(work):
        return
    torch = s.torch
    F = torch.nn.functional
    lda = m if trans_a else k
    ldb = k if trans_b else n
    ws_bytes = s.gk.gemm_workspace_bytes(m, n, k, trans_a, lda, trans_b, ldb)
    workspace = torch.empty(max(ws_bytes, 1), dtype=torch.uint8, device="cuda")
    ws_ptr = workspace.data_ptr() if ws_bytes else None

    def make():
        x = s.randn(k, m) if trans_a else s.randn(m, k)
        w = s.randn(n, k, scale=k ** -0.5) if trans_b else s.randn(k, n, scale=k ** -0.5)
        return {"x": x, "w": w, "y": s.nan(m, n)}

    def gk(t):
        s.gk.gemm_bf16(t["y"].data_ptr(), GK_BF16, n, t["x"].data_ptr(), lda, trans_a, t["w"].data_ptr(), ldb,
                       trans_b, None, 0, None, m, n, k, 1.0, 0.0, GK_ACT_NONE, ws_ptr, ws_bytes, s.stream)

    def ref(t):
        x = t["x"].t() if trans_a else t["x"]
        if trans_b and not trans_a:
            return F.linear(x, t["w"])
        return torch.matmul(x, t["w"].t() if trans_b else t["w"])

    nbytes = (m * k + n * k + m * n) * 2
    s.measure(work, "M=%d N=%d K=%d" % (m, n, k), nbytes, make, gk, ref,
              check=lambda t, want: s.check("gemm y", t["y"], want, RTOL, ATOL),
              bytes_min=nbytes if m <= 64 else None, flops=2.0 * m * n * k)


LAYOUT_CALL = {(0, 1): "NT (F.linear)", (0, 0): "NN (torch.matmul)", (1, 0): "TN (matmul(x.t(), w))",
               (1, 1): "TT (matmul(x.t(), w.t()))"}


def run_cases(s):
    for name, m, n, k, ta, tb in gemm_suite.suite():
        gemm(s, "%s %s" % (name, LAYOUT_CALL[(ta, tb)]), m, n, k, ta, tb)
    speeds = [r["torch_over_gk"] for r in s.rows if r["status"] == "ok" and r["torch_over_gk"]]
    if speeds:
        print("compare_gemm: suite: %d shapes, geometric mean torch / gk time %.3fx, lowest %.3fx, %d under 0.9x" %
              (len(speeds), math.exp(sum(math.log(v) for v in speeds) / len(speeds)), min(speeds),
               sum(1 for v in speeds if v < 0.9)))


if __name__ == "__main__":
    compare_common.main("compare_gemm", __doc__, run_cases)
