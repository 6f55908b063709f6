#!/usr/bin/env python3
"""gk_quant.cuh's W4A16 GEMM (bf16 or f16 activations times prepacked int4 weights, group scales)
against what a PyTorch user calls for the same layer, in one process (timing rules:
compare_common.py).

THE PROBLEM. y[M, N] = x[M, K] W[N, K]^T (F.linear's layout), W = (u - z) s with 4-bit codes u,
scales s of groups of 128 along K and zero points z (8 for symmetric weights), bf16 x and y, no
bias; the shapes of //gk_bench:quant:
    llama3-70b gate/up   N 28672, K 8192     M = 1, 16, 64, 128, 4096
    llama3-70b down      N 8192,  K 28672    M = 1, 16, 64, 128, 4096
    square               N 8192,  K 8192     M = 1, 16, 64, 128, 4096
all symmetric ("w4a16 bf16 sym g128"); at M 1 on gate/up also 4-bit zero points ("zint4": GPTQ /
AWQ style), float zero points ("zflt": HQQ style) and f16 activations ("w4a16 f16 sym g128").
Inputs: canonical codes q [N, K / 2] uint8 of uniformly random bytes (gk's canonical form: k even
in the low nibble; signed nibbles when symmetric), scales [K / 128, N] of x's dtype uniform in
[0.5, 1.5) x 1e-2, 4-bit zero points [K / 128, N / 2] random bytes, float zero points [K / 128, N]
uniform in [4, 12); x ~ N(0, 1).

  gk:     gk_w4_gemm_bf16 (gk_w4_gemm_f16) on the weight prepacked once by gk_w4_prepack, with a
          workspace of gk_w4_workspace_bytes(M, N, K) bytes as the manual says (a torch uint8
          buffer: torch's allocator aligns it to 512 bytes; note ws_MiB); note gk_plan:
          gk_w4_plan_for's choice (configuration, working warps and the partials a pair may have,
          or the dequantize + gk_gemm path).
  torch:  F.linear(x, w) (cuBLAS) on the weight dequantized once by gk_w4_dequant into a [N, K]
          tensor of x's dtype (checked against torch's own dequantization of the canonical codes
          first): what a user without a W4 kernel runs, reading 4x the weight's bytes.
  torch_int4 (notes torch_int4_us, torch_int4_over_gk, ...): torch's int4 weight-only kernel
          (tinygemm), torch.ops.aten._weight_int4pack_mm(x, w_int4pack, 128, scales_and_zeros), the
          weight converted once by torch.ops.aten._convert_weight_to_int4pack(codes, inner_k_tiles =
          8) from unsigned codes u [N, K / 2] uint8 with k even in the HIGH nibble (torch 2.5 and
          newer; an older torch gets the int32 [N, K] form), scales_and_zeros [K / 128, N, 2] bf16 of
          (s, (8 - z) s): tinygemm computes (u - 8) s + zero. bf16 only (the f16 row says n/a), and
          'n/a' with the reason where this torch lacks the ops or refuses the shape.
  fp8:    gk_fp8.cuh's GEMM against torch._scaled_mm is compare_fp8.py.

THE CHECK, before anything is timed (a failure skips the row's timing, is reported, and makes the
script exit non-zero): gk's dequantized weight (the torch column's operand) against torch's own
dequantization of the canonical codes, scales and zero points in fp32, every element within 2^-7
(|W| + |z s| for float zero points) (note dq_err: the largest |difference| / that scale); gk's y
(NaN until written) within 2e-2 |y| + 1e-2 max |y| of F.linear's (note gk_err: max |gk - F.linear|
/ max |F.linear|). torch_int4's y is held to the same bound (note torch_int4_err); where it fails
the column is left out of the timing.

Timing: every contender rotates over enough input sets (each with its own weights) that the
smallest call's bytes (gk's: the int4 weight, x and y) times the other sets add up to twice the L2
between two uses of a set, so no weight is served from L2. % copy: gk_w4_ledger's bytes (codes,
scale records, x and y) over each time against the copy roof (for torch an effective rate: F.linear
reads the 16-bit weight); notes gk_pct_copy_weights, torch_pct_copy_weights,
torch_int4_pct_copy_weights: the weight bytes each reads (gk: codes and scale / zero records;
F.linear: 2 N K; tinygemm: N K / 2 and its scales_and_zeros) over its time, as a percentage of the
copy roof: the issue's measure of a weight-only GEMV at M = 1. torch/gk above 1: gk is faster.

    python3 compare_quant.py --lib lib/libgk.so --out OUT [--reps N] [--only WORK] [--dry-run]
"""

import ctypes

import compare_common
import gk_ctypes
from gk_ctypes import GK_ACT_NONE, GK_BF16, GK_F16, GK_W4_SYMMETRIC, GK_W4_ZEROS_FLOAT, GK_W4_ZEROS_INT4, GkW4Weight

GROUP = 128
SHAPES = [  # (name, N, K) of y[M, N] = x[M, K] W[N, K]^T
    ("llama3-70b gate/up", 28672, 8192),
    ("llama3-70b down", 8192, 28672),
    ("square", 8192, 8192),
]
MS = [1, 16, 64, 128, 4096]
ZEROS = {GK_W4_SYMMETRIC: "sym", GK_W4_ZEROS_INT4: "zint4", GK_W4_ZEROS_FLOAT: "zflt"}
INNER_K_TILES = 8
# y: both sides accumulate in fp32 and round y to 16 bits (2^-9 relative); F.linear reads the weight
# rounded once to 16 bits (2^-9 of each |w|, random signs), gk the exact codes times s.
RTOL, ATOL_OF_MAX = 2e-2, 1e-2
WEIGHT_RTOL = 2.0 ** -7  # the dequantized weight: one rounding to 16 bits (< 2^-8 in bf16), and -z s (float zeros)


def canonical_unpacked(torch, q, symmetric):
    """Codes [N, K] int32 from the canonical bytes [N, K / 2] (k even in the low nibble) as unsigned
    offset-binary u (0..15): symmetric signed nibbles q become u = q + 8 (nibble ^ 8)."""
    lo, hi = (q & 15).to(torch.int32), (q >> 4).to(torch.int32)
    u = torch.stack((lo, hi), dim=-1).reshape(q.shape[0], q.shape[1] * 2)
    return u ^ 8 if symmetric else u


def zero_points(torch, t, zm, n, groups):
    """z [K / G, N] fp32: 8 when symmetric, the 4-bit codes (n even in the low nibble), or the floats."""
    if zm == GK_W4_SYMMETRIC:
        return torch.full((groups, n), 8.0, device=t["scales"].device)
    if zm == GK_W4_ZEROS_INT4:
        zb = t["zeros"]
        return torch.stack(((zb & 15), (zb >> 4)), dim=-1).reshape(groups, n).float()
    return t["zeros"].float()


def int4pack_of(torch, t, zm, n, k):
    """torch's tinygemm operands from the canonical ones: (w_int4pack, scales_and_zeros)."""
    groups = k // GROUP
    u = canonical_unpacked(torch, t["q"], zm == GK_W4_SYMMETRIC)  # [N, K] int32, 0..15
    packed = None
    try:  # torch 2.5 and newer: uint8 [N, K / 2], k even in the high nibble
        packed = torch.ops.aten._convert_weight_to_int4pack(((u[:, ::2] << 4) | u[:, 1::2]).to(torch.uint8).contiguous(),
                                                             INNER_K_TILES)
    except (RuntimeError, TypeError) as first:
        try:  # older torch: int32 [N, K] values 0..15
            packed = torch.ops.aten._convert_weight_to_int4pack(u.contiguous(), INNER_K_TILES)
        except (RuntimeError, TypeError):
            raise first
    del u
    s = t["scales"].float()
    z = zero_points(torch, t, zm, n, groups)
    sz = torch.stack((s, (8.0 - z) * s), dim=-1).to(torch.bfloat16).contiguous()  # [K / G, N, 2]
    return packed, sz


def dequant_check(s, t, zm, n, k, notes):
    """gk_w4_dequant's weight (t["wd"]) against torch's fp32 dequantization of the canonical codes,
    scales and zero points, a chunk of rows at a time: within 2^-7 (|W| + |z s| for float zeros)."""
    torch = s.torch
    groups = k // GROUP
    z_all = zero_points(torch, t, zm, n, groups)
    worst, bad, first = 0.0, 0, None
    step = max(1, (1 << 25) // k)
    for r0 in range(0, n, step):
        r1 = min(n, r0 + step)
        u = canonical_unpacked(torch, t["q"][r0:r1], zm == GK_W4_SYMMETRIC).float()
        sc = t["scales"][:, r0:r1].float().t().repeat_interleave(GROUP, dim=1)  # [rows, K]
        z = z_all[:, r0:r1].t().repeat_interleave(GROUP, dim=1)
        want = (u - z) * sc
        zs = (z * sc).abs() if zm == GK_W4_ZEROS_FLOAT else torch.zeros_like(want)
        got = t["wd"][r0:r1].float()
        diff = (got - want).abs()
        scale = want.abs() + zs
        worst = max(worst, (diff / scale.clamp_min(1e-30)).max().item())
        miss = ~(diff <= WEIGHT_RTOL * scale)
        nbad = int(miss.sum().item())
        if nbad and first is None:
            i = int(miss.flatten().nonzero()[0].item())
            first = "row %d, k %d: gk %r, torch %r" % (r0 + i // k, i % k, got.flatten()[i].item(),
                                                      want.flatten()[i].item())
        bad += nbad
    notes["dq_err"] = worst
    if bad:
        print("  MISMATCH gk_w4_dequant vs torch's dequantization: %d of %d weights outside 2^-7 (|W| + |z s|); "
              "first: %s" % (bad, n * k, first))
        return False
    return True


def check_y(s, what, got, want, notes, key):
    """|got - want| <= RTOL |want| + ATOL_OF_MAX max |want| everywhere (NaN fails)."""
    peak = want.float().abs().max().item()
    notes[key] = (got.float() - want.float()).abs().max().item() / max(peak, 1e-30)
    return s.check(what, got, want, RTOL, ATOL_OF_MAX * peak)


def w4a16(s, shape_name, n, k, m, zm=GK_W4_SYMMETRIC, dt=GK_BF16):
    work = "w4a16 %s %s g%d" % ("f16" if dt == GK_F16 else "bf16", ZEROS[zm], GROUP)
    if not s.wants(work):
        return
    torch = s.torch
    F = torch.nn.functional
    tdt = torch.float16 if dt == GK_F16 else torch.bfloat16
    gk = s.gk
    groups = k // GROUP
    notes = {}

    # the workspace the manual asks for, shared by the input sets (note ws_MiB); 0 is a valid answer
    # (no partials), and also what gk_w4_workspace_bytes returns on an error
    ws_bytes = gk.w4_workspace_bytes(m, n, k)
    workspace = torch.empty(max(ws_bytes, 1), dtype=torch.uint8, device="cuda")
    ws_ptr = workspace.data_ptr() if ws_bytes else None
    notes["ws_MiB"] = ws_bytes / 1048576.0
    plan = gk.w4_plan_for(m, n, k, GROUP, zm, ws_bytes)
    if plan.dequant:
        notes["gk_plan"] = "dequantize + gk_gemm"
    elif plan.config >= 0:
        tile = gk.w4_config_info(plan.config).name.decode().replace("gk_w4_bf16_", "")
        notes["gk_plan"] = "%s, %d warps, %s" % (tile, plan.warps, "%d slots" % plan.slots if plan.slots > 1
                                                 else "whole pairs")
    packed_bytes = gk.w4_packed_bytes(n, k, GROUP, zm)

    int4_reason = []  # why torch's int4 column could not run (first reason)
    want_int4 = dt == GK_BF16
    if not want_int4:
        int4_reason.append("bf16 activations only")
    elif not (hasattr(torch.ops.aten, "_weight_int4pack_mm") and hasattr(torch.ops.aten, "_convert_weight_to_int4pack")):
        int4_reason.append("torch %s lacks aten._weight_int4pack_mm" % torch.__version__)
        want_int4 = False

    def make():
        t = {"q": torch.randint(0, 256, (n, k // 2), dtype=torch.uint8, device="cuda"),
             "scales": ((torch.rand(groups, n, device="cuda") + 0.5) * 1e-2).to(tdt)}
        if zm == GK_W4_ZEROS_INT4:
            t["zeros"] = torch.randint(0, 256, (groups, n // 2), dtype=torch.uint8, device="cuda")
        elif zm == GK_W4_ZEROS_FLOAT:
            t["zeros"] = (torch.rand(groups, n, device="cuda") * 8.0 + 4.0).to(tdt)
        t["packed"] = torch.empty(packed_bytes, dtype=torch.uint8, device="cuda")
        gk.w4_prepack(t["packed"].data_ptr(), dt, t["q"].data_ptr(), t["scales"].data_ptr(), dt,
                      t["zeros"].data_ptr() if "zeros" in t else None, n, k, GROUP, zm, s.stream)
        t["w"] = GkW4Weight(packed=t["packed"].data_ptr(), n=n, k=k, group=GROUP, zero_mode=zm, dtype=dt)
        t["wd"] = torch.full((n, k), float("nan"), dtype=tdt, device="cuda")  # F.linear's weight
        gk.w4_dequant(t["wd"].data_ptr(), k, ctypes.byref(t["w"]), s.stream)
        t["x"] = torch.randn(m, k, dtype=tdt, device="cuda")
        t["y"] = torch.full((m, n), float("nan"), dtype=tdt, device="cuda")
        t["int4"] = None
        if want_int4:
            try:
                t["int4"], t["sz"] = int4pack_of(torch, t, zm, n, k)
            except Exception as e:  # this torch refuses the conversion
                if not int4_reason:
                    int4_reason.append("_convert_weight_to_int4pack: %s" % (str(e).splitlines() or [""])[0][:160])
        return t

    def gk_call(t):
        fn = gk.w4_gemm_f16 if dt == GK_F16 else gk.w4_gemm_bf16
        fn(t["y"].data_ptr(), dt, n, t["x"].data_ptr(), k, ctypes.byref(t["w"]), None, 0, None, m, 1.0, 0.0,
           GK_ACT_NONE, ws_ptr, ws_bytes, s.stream)

    def ref(t):
        return F.linear(t["x"], t["wd"])

    def torch_int4(t):
        if t["int4"] is None:
            raise RuntimeError(int4_reason[0] if int4_reason else "no int4-packed weight")
        return torch.ops.aten._weight_int4pack_mm(t["x"], t["int4"], GROUP, t["sz"])

    others = {"torch_int4": torch_int4 if want_int4 else None}

    def check(t, want):
        ok = dequant_check(s, t, zm, n, k, notes)
        ok = check_y(s, "gk y vs F.linear", t["y"], want, notes, "gk_err") and ok
        if others["torch_int4"] is not None:
            try:
                got = torch_int4(t)
                torch.cuda.synchronize()
                if not check_y(s, "torch int4 y vs F.linear", got, want, notes, "torch_int4_err"):
                    raise RuntimeError("its result differs from F.linear's")
            except Exception as e:  # left out of the timing, with the reason
                if not int4_reason:
                    int4_reason.append("%s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0][:160]))
                others["torch_int4"] = None
        if others["torch_int4"] is None:
            notes["torch_int4"] = "n/a (%s)" % (int4_reason[0] if int4_reason else "not run")
        return ok

    ledger = gk.w4_ledger(m, n, k, GROUP, zm, dt, dt, 0)
    weight_bytes = gk.w4_ledger(0, n, k, GROUP, zm, dt, dt, 0).bytes  # codes and scale / zero records
    shape = "%s M=%d N=%d K=%d" % (shape_name, m, n, k)
    # the smallest call's bytes (gk's): what a set adds to the traffic between two uses of another
    s.measure(work, shape, ledger.bytes, make, gk_call, ref, check, bytes_min=ledger.bytes, flops=2.0 * m * n * k,
              others=others, notes=notes)
    row = s.rows[-1]
    read = {"gk": weight_bytes, "torch": 2.0 * n * k, "torch_int4": n * k / 2.0 + groups * n * 4.0}
    for name, nbytes in read.items():
        if row.get(name + "_us"):
            row[name + "_pct_copy_weights"] = 100.0 * nbytes / (row[name + "_us"] * 1e-6) / s.copy_bytes_per_s
    if row.get("gk_us"):
        print("  %% of the copy roof on the weight bytes: %s" % ", ".join(
            "%s %.1f" % (key[:-len("_pct_copy_weights")], v) for key, v in row.items() if key.endswith("_pct_copy_weights")))


def run_cases(s):
    for name, n, k in SHAPES:
        for m in MS:
            w4a16(s, name, n, k, m)
    name, n, k = SHAPES[0]
    w4a16(s, name, n, k, 1, zm=GK_W4_ZEROS_INT4)
    w4a16(s, name, n, k, 1, zm=GK_W4_ZEROS_FLOAT)
    w4a16(s, name, n, k, 1, dt=GK_F16)


if __name__ == "__main__":
    compare_common.main("compare_quant", __doc__, run_cases, dry_check=gk_ctypes.check_layouts)
