#!/usr/bin/env python3
"""gk_reduce.cuh against PyTorch, bf16, in one process (timing rules: compare_common.py).

  RMSNorm     gk_rmsnorm_bf16            vs F.rms_norm(x, (cols,), w, eps)
  LayerNorm   gk_layernorm_bf16          vs F.layer_norm(x, (cols,), w, b, eps)
  softmax     gk_softmax_bf16            vs torch.softmax(x, -1)
      at [16384, 8192], [4096, 4096], [2048, 14336]
  residual add + RMSNorm  gk_residual_rmsnorm_bf16 (h = residual + x kept, out = rmsnorm(h) w)
              vs torch's unfused pair (h = residual + x; F.rms_norm(h, ...)), and vs
              torch.compile of that pair where torch.compile works (else the column is skipped)
      at [16384, 8192], [4096, 4096]

    python3 compare_reduce.py --lib lib/libgk.so --out OUT [--reps N] [--only WORK] [--dry-run]
"""

import compare_common

SHAPES = [(16384, 8192), (4096, 4096), (2048, 14336)]
RESIDUAL_SHAPES = [(16384, 8192), (4096, 4096)]
EPS = 1e-6
# bf16 outputs: gk and torch each round an fp32 result once (torch's composite forms may round
# twice): a few bf16 ulps (2^-8) apart at most. Values here are O(1).
RTOL, ATOL = 1.6e-2, 2e-2


def rmsnorm(s, rows, cols):
    F = s.torch.nn.functional
    w = s.randn(cols)

    def make():
        return {"x": s.randn(rows, cols), "out": s.nan(rows, cols)}

    def gk(t):
        s.gk.rmsnorm_bf16(t["out"].data_ptr(), cols, t["x"].data_ptr(), cols, w.data_ptr(), rows, cols, EPS,
                          s.stream)

    def ref(t):
        return F.rms_norm(t["x"], (cols,), w, EPS)

    s.measure("rmsnorm bf16", "[%d, %d]" % (rows, cols), 2 * rows * cols * 2, make, gk, ref,
              check=lambda t, want: s.check("rmsnorm out", t["out"], want, RTOL, ATOL),
              bytes_min=(2 * rows * cols + cols) * 2)


def layernorm(s, rows, cols):
    F = s.torch.nn.functional
    w, b = s.randn(cols), s.randn(cols)

    def make():
        return {"x": s.randn(rows, cols), "out": s.nan(rows, cols)}

    def gk(t):
        s.gk.layernorm_bf16(t["out"].data_ptr(), cols, t["x"].data_ptr(), cols, w.data_ptr(), b.data_ptr(), rows,
                            cols, EPS, s.stream)

    def ref(t):
        return F.layer_norm(t["x"], (cols,), w, b, EPS)

    s.measure("layernorm bf16", "[%d, %d]" % (rows, cols), 2 * rows * cols * 2, make, gk, ref,
              check=lambda t, want: s.check("layernorm out", t["out"], want, RTOL, ATOL),
              bytes_min=(2 * rows * cols + 2 * cols) * 2)


def softmax(s, rows, cols):
    torch = s.torch

    def make():
        return {"x": s.randn(rows, cols), "out": s.nan(rows, cols)}

    def gk(t):
        s.gk.softmax_bf16(t["out"].data_ptr(), cols, t["x"].data_ptr(), cols, rows, cols, 1.0, s.stream)

    def ref(t):
        return torch.softmax(t["x"], -1)

    # probabilities of about 1 / cols: relative tolerance only (and an atol far below them)
    s.measure("softmax bf16", "[%d, %d]" % (rows, cols), 2 * rows * cols * 2, make, gk, ref,
              check=lambda t, want: s.check("softmax out", t["out"], want, RTOL, 1e-7),
              bytes_min=2 * rows * cols * 2)


def residual_rmsnorm(s, rows, cols):
    work = "residual+rmsnorm bf16"
    if not s.wants(work):  # before torch.compile is tried
        return
    torch = s.torch
    F = torch.nn.functional
    w = s.randn(cols)

    def make():
        return {"residual": s.randn(rows, cols), "x": s.randn(rows, cols), "out": s.nan(rows, cols),
                "residual_out": s.nan(rows, cols)}

    def gk(t):
        s.gk.residual_rmsnorm_bf16(t["out"].data_ptr(), cols, t["residual_out"].data_ptr(),
                                   t["residual"].data_ptr(), cols, t["x"].data_ptr(), cols, w.data_ptr(), rows,
                                   cols, EPS, s.stream)

    def pair(residual, x):
        h = residual + x
        return F.rms_norm(h, (cols,), w, EPS), h

    def ref(t):
        return pair(t["residual"], t["x"])

    def check(t, want):
        out, h = want
        ok = s.check("residual_rmsnorm out", t["out"], out, RTOL, ATOL)
        # h = round(residual + x), as torch's bf16 add rounds it: the same bits
        return s.check("residual_rmsnorm residual_out", t["residual_out"], h, 0.0, 0.0) and ok

    # torch.compile of the pair, where it works on this host (it needs Triton and a C compiler)
    compiled = None
    try:
        fn = torch.compile(pair, dynamic=False)
        probe = make()
        got_out, got_h = fn(probe["residual"], probe["x"])
        want_out, want_h = pair(probe["residual"], probe["x"])
        if not (s.check("torch.compile out", got_out, want_out, RTOL, ATOL) and
                s.check("torch.compile h", got_h, want_h, RTOL, ATOL)):
            raise RuntimeError("torch.compile's result differs from eager torch's")
        del probe, got_out, got_h, want_out, want_h
        compiled = lambda t: fn(t["residual"], t["x"])  # noqa: E731
    except Exception as e:
        print("  torch.compile column skipped: %s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0][:300]))

    s.measure(work, "[%d, %d]" % (rows, cols), 4 * rows * cols * 2, make, gk, ref, check,
              bytes_min=(4 * rows * cols + cols) * 2, others={"compile": compiled})


def run_cases(s):
    for rows, cols in SHAPES:
        rmsnorm(s, rows, cols)
        layernorm(s, rows, cols)
        softmax(s, rows, cols)
    for rows, cols in RESIDUAL_SHAPES:
        residual_rmsnorm(s, rows, cols)


if __name__ == "__main__":
    compare_common.main("compare_reduce", __doc__, run_cases)
