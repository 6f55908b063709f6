#!/usr/bin/env python3
"""gk_attention_fwd_bf16 against PyTorch's scaled_dot_product_attention on its cuDNN and its
FlashAttention-2 backends, bf16, in one process (timing rules: compare_common.py).

  out = softmax(q k^T / sqrt(D)) v, full and causal (Sq = Sk here, so torch's top-left causal mask
  and gk's bottom-right one are the same mask), q, k, v and out [B, H, S, D] tensors:
      B 4  Hq 32 Hkv 32 S 4096  D 128
      B 16 Hq 16 Hkv 16 S 1024  D 64
      B 2  Hq 16 Hkv 16 S 16384 D 128
      B 4  Hq 16 Hkv 16 S 4096  D 256
      B 4  Hq 32 Hkv 8  S 4096  D 128   (GQA)
  torch:  F.scaled_dot_product_attention(q, k, v, is_causal=...) under
          torch.nn.attention.sdpa_kernel(SDPBackend.CUDNN_ATTENTION): the "torch" columns;
          the same under SDPBackend.FLASH_ATTENTION (FlashAttention-2): the fa2_* notes.
          GQA through enable_gqa=True where the backend takes it; else k and v repeat_interleave'd
          to Hq heads once per input set, outside the timed call (the gqa_* notes say which). A
          backend that cannot run a shape at all is left out of its row (the note says why).
  gk:     gk_attention_fwd_bf16 on the same tensors: their [B, H, S, D] strides go into
          gk_attention_params (no copies), lse not asked for (torch's inference call returns none),
          the workspace gk_attention_workspace_bytes asks for.

gk_mma: gk's mma.sync kernel forced (gk_attention_ex, the first mma.sync configuration built for
D or more), timed with the others; fa2_over_gk_mma is FlashAttention-2's time over it.

gk's output is checked against each backend's first (|gk - torch| <= 1e-2 + 2e-2 |torch|; the
notes give the largest |gk - torch| as cudnn_err and fa2_err), then the three take turns under
CUDA events. torch/gk is cuDNN's time over gk's (= gk's TFLOP/s over cuDNN's: above 1 gk is
faster), fa2_over_gk the same for FlashAttention-2; TFLOP/s from gk_attention_ledger (the causal
rows count the visible half).

    python3 compare_attention.py --lib lib/libgk.so --out OUT [--reps N] [--only WORK] [--dry-run]
"""

import ctypes

import compare_common
from gk_ctypes import GK_BF16, check_layouts

SHAPES = [  # (B, Hq, Hkv, S, D)
    (4, 32, 32, 4096, 128),
    (16, 16, 16, 1024, 64),
    (2, 16, 16, 16384, 128),
    (4, 16, 16, 4096, 256),
    (4, 32, 8, 4096, 128),
]
# q, k, v ~ N(0, 1): logits ~ N(0, 1) after the scale, out a weighted mean of v (O(1) at most).
# Both sides round an fp32 result to bf16 (2^-9 relative) and round P to bf16 before P V (2^-9 of
# sum p |v|): a few 1e-3 apart.
RTOL, ATOL = 2e-2, 1e-2


def backend_call(s, backend, causal, gqa):
    """A function of (q, k, v) calling SDPA on one backend, or raising where it cannot."""
    torch = s.torch
    F = torch.nn.functional
    from torch.nn.attention import sdpa_kernel

    def call(q, k, v):
        with sdpa_kernel(backend):
            if gqa:
                return F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal), enable_gqa=True)
            return F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))

    return call


def probe(s, backend, b, hq, hkv, seq, d, causal):
    """How this backend runs the shape: (function of a set, GQA mode or None, why not). Probed on one
    batch and at most 512 positions of the shape's heads and D."""
    torch = s.torch
    sq = min(seq, 512)
    q = s.randn(1, hq, sq, d)
    k, v = s.randn(1, hkv, sq, d), s.randn(1, hkv, sq, d)
    modes = ["enable_gqa", "repeat_interleave"] if hkv != hq else [None]
    why = ""
    for mode in modes:
        try:
            call = backend_call(s, backend, causal, mode == "enable_gqa")
            if mode == "repeat_interleave":
                kk, vv = k.repeat_interleave(hq // hkv, dim=1), v.repeat_interleave(hq // hkv, dim=1)
            else:
                kk, vv = k, v
            call(q, kk, vv)
            torch.cuda.synchronize()
            if mode == "repeat_interleave":
                return (lambda t: call(t["q"], t["k_rep"], t["v_rep"])), mode, ""
            return (lambda t: call(t["q"], t["k"], t["v"])), mode, ""
        except Exception as e:  # torch: "No available kernel", an unsupported head dim, ...
            why = "%s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0][:160])
    return None, None, why


def attention(s, b, hq, hkv, seq, d, causal):
    work = "attention bf16 %s%s" % ("causal" if causal else "full", " GQA" if hkv != hq else "")
    if not s.wants(work):
        return
    torch = s.torch
    from torch.nn.attention import SDPBackend

    backends = {}  # name: (function of a set or None, GQA mode, why not)
    for name, attr in (("cudnn", "CUDNN_ATTENTION"), ("fa2", "FLASH_ATTENTION")):
        backend = getattr(SDPBackend, attr, None)
        if backend is None:
            backends[name] = (None, None, "torch %s has no SDPBackend.%s" % (torch.__version__, attr))
        else:
            backends[name] = probe(s, backend, b, hq, hkv, seq, d, causal)
    notes = {}
    for name, (fn, mode, why) in backends.items():
        if fn is None:
            notes[name] = "cannot run: " + why
            print("  %s cannot run B %d Hq %d Hkv %d S %d D %d: %s" % (name, b, hq, hkv, seq, d, why))
        elif mode:
            notes["gqa_" + name] = mode
    runnable = [name for name in ("cudnn", "fa2") if backends[name][0] is not None]
    shape = "B%d Hq%d Hkv%d S%d D%d" % (b, hq, hkv, seq, d)
    if not runnable:
        print("  %s %s: neither cuDNN nor FlashAttention-2 runs it here: row skipped" % (work, shape))
        return
    ref_name = runnable[0]  # the "torch" columns: cuDNN where it runs
    work += " (torch = %s)" % ("cuDNN" if ref_name == "cudnn" else "FA2; cuDNN cannot")

    params = s.gk.attention_params_dense(b, hq, hkv, d, seq, seq)
    params.causal = causal
    # [B, H, S, D] tensors: batch, head and row strides in elements (the same for every set)
    params.q_batch_stride, params.q_head_stride, params.q_row_stride = hq * seq * d, seq * d, d
    params.out_batch_stride, params.out_head_stride, params.out_row_stride = hq * seq * d, seq * d, d
    params.k_batch_stride, params.k_head_stride, params.k_row_stride = hkv * seq * d, seq * d, d
    params.v_batch_stride, params.v_head_stride, params.v_row_stride = hkv * seq * d, seq * d, d
    pp = ctypes.byref(params)
    ws_bytes = s.gk.attention_workspace_bytes(pp)
    workspace = torch.empty(max(ws_bytes, 1), dtype=torch.uint8, device="cuda")
    ws_ptr = workspace.data_ptr() if ws_bytes else None
    flops = s.gk.attention_ledger(pp, GK_BF16).flops
    repeat = any(mode == "repeat_interleave" for _, mode, _ in backends.values())

    def make():
        t = {"q": s.randn(b, hq, seq, d), "k": s.randn(b, hkv, seq, d), "v": s.randn(b, hkv, seq, d),
             "out": s.nan(b, hq, seq, d)}
        if repeat:
            t["k_rep"] = t["k"].repeat_interleave(hq // hkv, dim=1)
            t["v_rep"] = t["v"].repeat_interleave(hq // hkv, dim=1)
        for key in ("q", "k", "v", "out"):  # the strides params holds
            want = (t[key].shape[1] * seq * d, seq * d, d, 1)
            assert t[key].stride() == want, "%s strides %s, want %s" % (key, t[key].stride(), want)
        return t

    def gk(t):
        s.gk.attention_fwd_bf16(t["out"].data_ptr(), t["q"].data_ptr(), t["k"].data_ptr(), t["v"].data_ptr(),
                                None, pp, ws_ptr, ws_bytes, s.stream)

    # gk's mma.sync kernel (sm_80 and newer) forced, for its own ratio to FlashAttention-2: the first
    # mma.sync configuration built for D or more (what the dispatcher runs where wgmma cannot)
    mma = [c for c in range(s.gk.attention_config_count())
           if not s.gk.attention_config_info(c).wgmma and s.gk.attention_config_info(c).head_dim >= d]
    mma_cfg = min(mma, key=lambda c: s.gk.attention_config_info(c).head_dim) if mma else None

    def gk_mma(t):
        s.gk.attention_ex(mma_cfg, 1, GK_BF16, t["out"].data_ptr(), t["q"].data_ptr(), t["k"].data_ptr(),
                          t["v"].data_ptr(), None, pp, None, 0, s.stream)

    def check(t, want):
        ok = True
        for name in runnable:
            got = want if name == ref_name else backends[name][0](t)
            notes[name + "_err"] = (t["out"].float() - got.float()).abs().max().item()
            ok = s.check("attention out vs %s" % name, t["out"], got, RTOL, ATOL) and ok
        return ok

    set_bytes = (2 * b * hq * seq * d + 2 * b * hkv * seq * d + (2 * b * hq * seq * d if repeat else 0)) * 2
    others = {name: backends[name][0] for name in ("cudnn", "fa2") if name != ref_name}
    if mma_cfg is not None:
        others["gk_mma"] = gk_mma
        notes["gk_mma_config"] = s.gk.attention_config_info(mma_cfg).name.decode()
    s.measure(work, shape, set_bytes, make, gk, backends[ref_name][0], check, flops=flops, others=others,
              notes=notes)
    row = s.rows[-1]
    if row.get("gk_mma_us") and row.get("fa2_us"):  # the mma.sync kernel against FlashAttention-2
        row["fa2_over_gk_mma"] = row["fa2_us"] / row["gk_mma_us"]
        print("  gk mma.sync (%s): %.1f us, %.1f TFLOP/s, FA2 / gk mma.sync %.3f" %
              (notes["gk_mma_config"], row["gk_mma_us"], row.get("gk_mma_tflops", 0.0), row["fa2_over_gk_mma"]))


def run_cases(s):
    for causal in (0, 1):
        for b, hq, hkv, seq, d in SHAPES:
            attention(s, b, hq, hkv, seq, d, causal)


if __name__ == "__main__":
    compare_common.main("compare_attention", __doc__, run_cases, dry_check=check_layouts)
