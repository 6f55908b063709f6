#!/usr/bin/env python3
"""gk_fp8.cuh's FP8 GEMM against torch._scaled_mm, the call a PyTorch user makes for an fp8 Linear, in
one process (timing rules: compare_common.py).

THE PROBLEM. y[M, N] = (a[M, K] sa) (b[N, K] sb)^T in bf16, a and b e4m3 (K-major: b is the Linear's
[out, in] weight), fp32 accumulation:
    fp8 tensor    one fp32 scale an operand             4096^3, 8192^3
    fp8 rowcol    a scale a row of a and a row of b     4096^3, 8192^3
    fp8 block     1 x 128 blocks of a, 128 x 128 of b   4096^3, 8192^3 (torch column where this torch's
                  _scaled_mm takes block scales; otherwise n/a)
  gk:     gk_fp8_gemm with gk_fp8_workspace_bytes of workspace
  torch:  torch._scaled_mm(a, b.t(), scale_a, scale_b, out_dtype=torch.bfloat16) (cuBLASLt), scales
          of shape [1, 1] / [M, 1] and [1, N] (torch's row-wise form); block: [M, K / 128] and
          [N / 128, K / 128] as DeepSeek's kernels take them
  chain:  RMSNorm + fp8 quantization + FP8 GEMM (gk_rmsnorm_quant_e4m3_bf16, then gk_fp8_gemm with
          row scales on a weight quantized once) against F.rms_norm + F.linear in bf16, x [4096, 8192]
          -> [4096, 28672]: the issue's "faster than bf16 RMSNorm + bf16 GEMM by 1.6x"
Inputs: a, b from N(0, 1) bf16 quantized by gk_fp8_quantize (row scales) or cast (tensor scale 1),
scales uniform in [0.5, 2).

THE CHECK before timing: gk's y within 2e-2 |y| + 1e-2 max |y| of torch's (the chain: of the bf16
chain's, 8e-2 of max |y|: fp8's 3 mantissa bits). torch/gk above 1: gk is faster.

    python3 compare_fp8.py --lib lib/libgk.so --out OUT [--reps N] [--only WORK] [--dry-run]
"""

import compare_common
import gk_ctypes
from gk_ctypes import GK_ACT_NONE, GK_BF16, GK_FP8_BLOCK, GK_FP8_ROW, GK_FP8_TENSOR

RTOL, ATOL_OF_MAX = 2e-2, 1e-2
NAMES = {GK_FP8_TENSOR: "tensor", GK_FP8_ROW: "rowcol", GK_FP8_BLOCK: "block"}


def fp8_gemm(s, size, mode):
    work = "fp8 %s" % NAMES[mode]
    if not s.wants(work):
        return
    torch = s.torch
    gk = s.gk
    m = n = k = size
    kb = (k + 127) // 128
    ws_bytes = gk.fp8_workspace_bytes(m, n, k, 1 if mode == GK_FP8_BLOCK else 0)
    workspace = torch.empty(max(ws_bytes, 1), dtype=torch.uint8, device="cuda")
    ws_ptr = workspace.data_ptr() if ws_bytes else None
    notes = {}
    reason = []

    def scales(rows, cols_blocks, per_row):
        if mode == GK_FP8_TENSOR:
            return torch.rand(1, 1, device="cuda") * 1.5 + 0.5
        if mode == GK_FP8_ROW:
            return torch.rand(rows, 1, device="cuda") * 1.5 + 0.5
        return torch.rand(per_row, cols_blocks, device="cuda") * 1.5 + 0.5

    def make():
        t = {"a": torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn),
             "b": torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)}
        t["sa"] = scales(m, kb, m)
        t["sb"] = scales(n, kb, (n + 127) // 128)
        t["y"] = s.nan(m, n)
        return t

    def gk_call(t):
        gk.fp8_gemm(t["y"].data_ptr(), GK_BF16, n, t["a"].data_ptr(), k, t["sa"].data_ptr(), mode, t["b"].data_ptr(),
                    k, t["sb"].data_ptr(), mode, None, 0, None, m, n, k, 1.0, 0.0, GK_ACT_NONE, ws_ptr, ws_bytes,
                    s.stream)

    def torch_call(t):
        sb = t["sb"].reshape(1, 1) if mode == GK_FP8_TENSOR else t["sb"].reshape(1, n) if mode == GK_FP8_ROW \
            else t["sb"]
        return torch._scaled_mm(t["a"], t["b"].t(), scale_a=t["sa"], scale_b=sb, out_dtype=torch.bfloat16)

    def ref(t):
        if mode != GK_FP8_BLOCK:
            return torch_call(t)
        # the block-scaled reference in fp32 (torch's own block-scaled fp8 GEMM is timed where it runs)
        a = t["a"].float().reshape(m, kb, 128) * t["sa"].reshape(m, kb, 1)
        b = t["b"].float().reshape(n // 128, 128, kb, 128) * t["sb"].reshape(n // 128, 1, kb, 1)
        return (a.reshape(m, k) @ b.reshape(n, k).t()).to(torch.bfloat16)

    others = {}
    if mode == GK_FP8_BLOCK:
        def torch_block(t):
            return torch._scaled_mm(t["a"], t["b"].t(), scale_a=t["sa"], scale_b=t["sb"].t().contiguous().t(),
                                    out_dtype=torch.bfloat16)
        others["torch_block"] = torch_block

    def check(t, want):
        peak = want.float().abs().max().item()
        notes["gk_err"] = (t["y"].float() - want.float()).abs().max().item() / max(peak, 1e-30)
        ok = s.check("gk y vs torch", t["y"], want, RTOL, ATOL_OF_MAX * peak)
        if "torch_block" in others and others["torch_block"] is not None:
            try:
                got = others["torch_block"](t)
                torch.cuda.synchronize()
                if not s.check("torch block-scaled y vs the fp32 reference", got, want, RTOL, ATOL_OF_MAX * peak):
                    raise RuntimeError("its result differs from the reference")
            except Exception as e:
                reason.append("%s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0][:160]))
                others["torch_block"] = None
                notes["torch_block"] = "n/a (%s)" % reason[0]
        return ok

    shape = "M=%d N=%d K=%d" % (m, n, k)
    nbytes = m * k + n * k + 2 * m * n
    s.measure(work, shape, nbytes, make, gk_call, ref if mode == GK_FP8_BLOCK else torch_call, check,
              bytes_min=nbytes, flops=2.0 * m * n * k, others=others, notes=notes)


def chain(s):
    work = "rmsnorm+fp8 quant+fp8 gemm"
    if not s.wants(work):
        return
    torch = s.torch
    F = torch.nn.functional
    gk = s.gk
    m, n, k = 4096, 28672, 8192
    ws_bytes = gk.fp8_workspace_bytes(m, n, k, 0)
    workspace = torch.empty(max(ws_bytes, 1), dtype=torch.uint8, device="cuda")
    ws_ptr = workspace.data_ptr() if ws_bytes else None
    notes = {}

    def make():
        t = {"x": torch.randn(m, k, dtype=torch.bfloat16, device="cuda"),
             "g": (torch.rand(k, device="cuda") + 0.5).to(torch.bfloat16),
             "w": (torch.randn(n, k, device="cuda") * 0.02).to(torch.bfloat16)}
        t["w8"] = torch.empty(n, k, dtype=torch.uint8, device="cuda")
        t["sw"] = torch.empty(n, dtype=torch.float32, device="cuda")
        gk.fp8_quantize(t["w8"].data_ptr(), k, t["sw"].data_ptr(), GK_FP8_ROW, 1, t["w"].data_ptr(), GK_BF16, k, 0, n,
                        k, s.stream)
        t["x8"] = torch.empty(m, k, dtype=torch.uint8, device="cuda")
        t["sx"] = torch.empty(m, dtype=torch.float32, device="cuda")
        t["y"] = s.nan(m, n)
        return t

    def gk_call(t):
        gk.rmsnorm_quant_e4m3_bf16(t["x8"].data_ptr(), k, t["sx"].data_ptr(), t["x"].data_ptr(), k, t["g"].data_ptr(),
                                   m, k, 1e-6, s.stream)
        gk.fp8_gemm(t["y"].data_ptr(), GK_BF16, n, t["x8"].data_ptr(), k, t["sx"].data_ptr(), GK_FP8_ROW,
                    t["w8"].data_ptr(), k, t["sw"].data_ptr(), GK_FP8_ROW, None, 0, None, m, n, k, 1.0, 0.0,
                    GK_ACT_NONE, ws_ptr, ws_bytes, s.stream)

    def ref(t):
        return F.linear(F.rms_norm(t["x"], (k,), t["g"], 1e-6), t["w"])

    def check(t, want):
        peak = want.float().abs().max().item()
        notes["gk_err"] = (t["y"].float() - want.float()).abs().max().item() / max(peak, 1e-30)
        return s.check("gk fp8 chain vs bf16 chain", t["y"], want, 0.0, 8e-2 * peak)

    nbytes = m * k * 2 + n * k + 2 * m * n
    s.measure(work, "M=%d N=%d K=%d" % (m, n, k), nbytes, make, gk_call, ref, check, bytes_min=nbytes,
              flops=2.0 * m * n * k, notes=notes)


def run_cases(s):
    if not hasattr(s.torch, "_scaled_mm"):
        print("compare_fp8: this torch has no torch._scaled_mm")
    for mode in (GK_FP8_TENSOR, GK_FP8_ROW, GK_FP8_BLOCK):
        for size in (4096, 8192):
            fp8_gemm(s, size, mode)
    chain(s)


if __name__ == "__main__":
    compare_common.main("compare_fp8", __doc__, run_cases, dry_check=gk_ctypes.check_layouts)
