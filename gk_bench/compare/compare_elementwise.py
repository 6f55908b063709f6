#!/usr/bin/env python3
"""gk_elementwise.cuh's SwiGLU against PyTorch, bf16, in one process (timing rules: compare_common.py).

  SwiGLU, gate and up separate [16384, 8192]:   gk_swiglu_bf16 vs F.silu(gate) * up
  SwiGLU, packed input [16384, 2 * 8192]:       gk_swiglu_packed_bf16 vs F.silu(x[:, :d]) * x[:, d:]

    python3 compare_elementwise.py --lib lib/libgk.so --out OUT [--reps N] [--only WORK] [--dry-run]
"""

import compare_common

ROWS, D = 16384, 8192
# gk rounds silu(g) * u once; torch rounds silu(g), then the product: at most about 2^-8 apart,
# relative (the error of a product is relative to the product, also near zero)
RTOL, ATOL = 1.6e-2, 1e-3


def swiglu(s):
    F = s.torch.nn.functional
    n = ROWS * D

    def make():
        return {"gate": s.randn(ROWS, D), "up": s.randn(ROWS, D), "out": s.nan(ROWS, D)}

    def gk(t):
        s.gk.swiglu_bf16(t["out"].data_ptr(), t["gate"].data_ptr(), t["up"].data_ptr(), n, s.stream)

    def ref(t):
        return F.silu(t["gate"]) * t["up"]

    s.measure("swiglu bf16", "[%d, %d]" % (ROWS, D), 3 * n * 2, make, gk, ref,
              check=lambda t, want: s.check("swiglu out", t["out"], want, RTOL, ATOL),
              bytes_min=3 * n * 2)


def swiglu_packed(s):
    F = s.torch.nn.functional

    def make():
        return {"x": s.randn(ROWS, 2 * D), "out": s.nan(ROWS, D)}

    def gk(t):
        s.gk.swiglu_packed_bf16(t["out"].data_ptr(), D, t["x"].data_ptr(), 2 * D, ROWS, D, s.stream)

    def ref(t):
        x = t["x"]
        return F.silu(x[:, :D]) * x[:, D:]

    s.measure("swiglu packed bf16", "[%d, 2 x %d]" % (ROWS, D), 3 * ROWS * D * 2, make, gk, ref,
              check=lambda t, want: s.check("swiglu packed out", t["out"], want, RTOL, ATOL),
              bytes_min=3 * ROWS * D * 2)


def run_cases(s):
    swiglu(s)
    swiglu_packed(s)


if __name__ == "__main__":
    compare_common.main("compare_elementwise", __doc__, run_cases)
