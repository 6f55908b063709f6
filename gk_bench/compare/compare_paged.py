#!/usr/bin/env python3
"""gk_rope_append_bf16 (gk_paged.cuh: RoPE on q and k, k and v written into a paged KV cache, one
kernel) against the eager PyTorch sequence a user writes today for the same step, bf16, in one
process (timing rules: compare_common.py).

  The step: Hq 32, Hkv 8, D 128 (Llama-3-8B's heads), NeoX rotary over all 128 dims, theta 500000
  with Llama-3.1 frequency scaling (factor 8, low 1, high 4, original 8192); q [T, Hq, D], k and v
  [T, Hkv, D]; a bf16 cache [num_blocks, 16, Hkv, D] for k and one for v holding 2T slots (rounded
  up to whole 16-token blocks); slots: the first T of a random permutation of the cache's slots
  (int64); positions int32:
      T 4096   a prefill: positions 0 .. 4095
      T 16     a decode step of 16 sequences: positions random in [0, 8192)
  torch:  Hugging Face's Llama sequence: inv_freq with the Llama-3.1 scaling (HF's
          _compute_llama3_parameters, computed once, outside the timed call); per step cos and sin
          from the positions in fp32 (freqs = positions x inv_freq, emb = cat(freqs, freqs)), cast
          to bf16 as LlamaRotaryEmbedding returns them; then q * cos + rotate_half(q) * sin and the
          same for k IN BF16 (apply_rotary_pos_emb: every product and sum rounded to bf16), a new
          q; then k_cache.view(-1, Hkv, D).index_copy_(0, slots, k_rot), v likewise.
          Further torch versions, timed in the same turns (notes <name>_us, <name>_over_gk):
            index_put   the same with k_cache.view(-1, Hkv, D)[slots] = k_rot (and v)
            cs_given    cos and sin computed outside the timed call (HF computes them once per
                        forward for all layers): the rotation and the cache writes only
            compile     torch.compile of the whole step, where it works on the host (else skipped)
  gk:     gk_rope_append_bf16 with q_out = q (in place), the same positions and slots, cos and sin
          formed by the kernel (angle in double, finished in fp32), the cache built by
          gk_paged_kv_dense on the same [num_blocks, 16, Hkv, D] layout, an error flag passed.

gk's results are checked against torch's first: q_out and k in their cache slots within
(2^-7 + P 2^-21) (|x| + |rotate_half(x)|) + 1e-3 of torch's, P the largest position (torch rounds
cos, sin, both products and their sum to bf16, each 2^-9 relative, and its fp32 angle, position
times an fp32 inv_freq, is off by a few fp32 ulps of the angle; gk rounds its fp32 result once;
notes q_err and k_err give the largest |gk - torch|), v in its slots bit-exact, exactly the slots named written (the rest of gk's
cache stays NaN), and the error flag 0. % copy: gk_rope_append_ledger's bytes (q read and written,
k and v read, k and v written to the cache, positions and slots read) over the time, against the
copy roof. torch/gk above 1: gk is faster.

    python3 compare_paged.py --lib lib/libgk.so --out OUT [--reps N] [--only WORK] [--dry-run]
"""

import ctypes
import math

import compare_common
import gk_ctypes
from gk_ctypes import GK_BF16, Gk, GkError, GkRopeAppendParams

HQ, HKV, D, BLOCK = 32, 8, 128, 16
THETA = 500000.0
FACTOR, LOW, HIGH, ORIGINAL = 8.0, 1.0, 4.0, 8192  # Llama-3.1 scaling
CASES = [  # (T, what, the positions, the largest position)
    (4096, "prefill", "0 .. 4095", 4095),
    (16, "decode", "random in [0, 8192)", 8191),
]


def rope_params(s):
    """gk's rope: NeoX over all D dims, theta, Llama-3.1 scaling."""
    r = s.gk.rope_default(D, THETA)
    r.factor, r.low_freq_factor, r.high_freq_factor, r.original_max_position = FACTOR, LOW, HIGH, ORIGINAL
    return r


def llama3_inv_freq(torch):
    """inv_freq as Hugging Face's _compute_llama3_parameters computes it (fp32, on the CPU)."""
    inv_freq = 1.0 / (THETA ** (torch.arange(0, D, 2, dtype=torch.int64).float() / D))
    low_wavelen, high_wavelen = ORIGINAL / LOW, ORIGINAL / HIGH
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = torch.where(wavelen > low_wavelen, inv_freq / FACTOR, inv_freq)
    smooth = (ORIGINAL / wavelen - LOW) / (HIGH - LOW)
    smoothed = (1 - smooth) * inv_freq_llama / FACTOR + smooth * inv_freq_llama
    is_medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
    return torch.where(is_medium, smoothed, inv_freq_llama)


def check_rotated(s, what, got, want, x, max_position, notes, key):
    """|got - want| <= (2^-7 + max_position 2^-21) (|x| + |rotate_half(x)|) + 1e-3 for every element
    (NaN fails): x the rotated input, max_position the largest position (torch's fp32 angle)."""
    torch = s.torch
    g, w, xf = got.float(), want.float(), x.float()
    rel = 2.0 ** -7 + max_position * 2.0 ** -21
    bound = (xf.abs() + torch.cat((xf[..., D // 2:], xf[..., :D // 2]), dim=-1).abs()) * rel + 1e-3
    diff = (g - w).abs()
    notes[key] = diff.max().item()
    bad = ~(diff <= bound)
    nbad = int(bad.sum().item())
    if nbad == 0:
        return True
    print("  MISMATCH %s: %d of %d elements outside |gk - torch| <= %.3g (|x| + |rotate_half(x)|) + 1e-3" %
          (what, nbad, bad.numel(), rel))
    where = bad.flatten().nonzero()[:5].flatten().tolist()
    for i in where:
        print("    element %d: gk %r, torch %r, bound %r" % (i, g.flatten()[i].item(), w.flatten()[i].item(),
                                                           bound.flatten()[i].item()))
    return False


def rope_append(s, tokens, what, positions_text, max_position):
    work = "rope+append bf16 %s" % what
    if not s.wants(work):  # before torch.compile is tried
        return
    torch = s.torch
    bf16 = torch.bfloat16
    num_slots = -(-2 * tokens // BLOCK) * BLOCK
    num_blocks = num_slots // BLOCK
    inv_freq = llama3_inv_freq(torch).cuda()
    rope = rope_params(s)
    rp = ctypes.byref(rope)

    def rotate_half(x):
        return torch.cat((-x[..., D // 2:], x[..., :D // 2]), dim=-1)

    def cos_sin(pos):
        # LlamaRotaryEmbedding.forward: fp32 (autocast off), then the activations' dtype
        freqs = pos.float()[:, None] * inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(bf16)[:, None, :], emb.sin().to(bf16)[:, None, :]

    def rotate_and_write(q, k, v, cos, sin, slots, k_cache, v_cache, index_put=False):
        q_rot = q * cos + rotate_half(q) * sin  # apply_rotary_pos_emb, in bf16
        k_rot = k * cos + rotate_half(k) * sin
        if index_put:
            k_cache.view(-1, HKV, D)[slots] = k_rot
            v_cache.view(-1, HKV, D)[slots] = v
        else:
            k_cache.view(-1, HKV, D).index_copy_(0, slots, k_rot)
            v_cache.view(-1, HKV, D).index_copy_(0, slots, v)
        return q_rot

    def step(q, k, v, pos, slots, k_cache, v_cache):
        cos, sin = cos_sin(pos)
        return rotate_and_write(q, k, v, cos, sin, slots, k_cache, v_cache)

    def make():
        if tokens == 4096:
            pos = torch.arange(tokens, dtype=torch.int32, device="cuda")
        else:
            pos = torch.randint(0, 8192, (tokens,), dtype=torch.int32, device="cuda")
        t = {"q": s.randn(tokens, HQ, D), "k": s.randn(tokens, HKV, D), "v": s.randn(tokens, HKV, D), "pos": pos,
             "slots": torch.randperm(num_slots, device="cuda")[:tokens].contiguous(),
             "k_cache": s.nan(num_blocks, BLOCK, HKV, D), "v_cache": s.nan(num_blocks, BLOCK, HKV, D),
             "k_cache_t": s.nan(num_blocks, BLOCK, HKV, D), "v_cache_t": s.nan(num_blocks, BLOCK, HKV, D),
             "flag": torch.zeros(1, dtype=torch.int32, device="cuda")}
        t["q_src"] = t["q"].clone()  # gk rotates q in place; torch reads q_src
        t["cos"], t["sin"] = cos_sin(pos)  # for the cs_given version
        p = GkRopeAppendParams()
        p.tokens, p.heads_q, p.heads_kv, p.head_dim = tokens, HQ, HKV, D
        p.q_token_stride = p.q_out_token_stride = HQ * D
        p.q_head_stride = p.q_out_head_stride = D
        p.k_token_stride = p.v_token_stride = HKV * D
        p.k_head_stride = p.v_head_stride = D
        p.positions, p.positions_int64 = t["pos"].data_ptr(), 0
        p.slot_mapping, p.error_flag = t["slots"].data_ptr(), t["flag"].data_ptr()
        t["params"] = p
        t["cache"] = s.gk.paged_kv_dense(t["k_cache"].data_ptr(), t["v_cache"].data_ptr(), GK_BF16, num_blocks,
                                         BLOCK, HKV, D)
        for key in ("q", "k", "v", "k_cache", "v_cache"):  # the strides params and the cache hold
            assert t[key].is_contiguous(), key
        return t

    def gk(t):
        s.gk.rope_append_bf16(t["q"].data_ptr(), t["q"].data_ptr(), t["k"].data_ptr(), t["v"].data_ptr(),
                              ctypes.byref(t["params"]), rp, ctypes.byref(t["cache"]), s.stream)

    def ref(t):
        return step(t["q_src"], t["k"], t["v"], t["pos"], t["slots"], t["k_cache_t"], t["v_cache_t"])

    def index_put(t):
        cos, sin = cos_sin(t["pos"])
        return rotate_and_write(t["q_src"], t["k"], t["v"], cos, sin, t["slots"], t["k_cache_t"], t["v_cache_t"],
                                index_put=True)

    def cs_given(t):
        return rotate_and_write(t["q_src"], t["k"], t["v"], t["cos"], t["sin"], t["slots"], t["k_cache_t"],
                                t["v_cache_t"])

    notes = {}

    def check(t, q_rot):
        ok = check_rotated(s, "q_out", t["q"], q_rot, t["q_src"], max_position, notes, "q_err")
        slots = t["slots"]
        k_gk, k_t = t["k_cache"].view(-1, HKV, D)[slots], t["k_cache_t"].view(-1, HKV, D)[slots]
        ok = check_rotated(s, "k in its cache slots", k_gk, k_t, t["k"], max_position, notes, "k_err") and ok
        ok = s.check("v in its cache slots", t["v_cache"].view(-1, HKV, D)[slots], t["v"], 0.0, 0.0) and ok
        unwritten = (num_slots - tokens) * HKV * D
        for name in ("k_cache", "v_cache"):
            nan = int(t[name].isnan().sum().item())
            if nan != unwritten:
                print("  MISMATCH %s: %d entries NaN, want %d (the slots not in slot_mapping, untouched)" %
                      (name, nan, unwritten))
                ok = False
        flag = int(t["flag"].item())
        if flag:
            print("  MISMATCH: gk's error flag is %d (a slot refused on the device)" % flag)
            ok = False
        return ok

    # torch.compile of the step, where it works on this host (it needs Triton and a C compiler)
    compiled = None
    try:
        fn = torch.compile(step, dynamic=False)
        probe = make()
        got = fn(probe["q_src"], probe["k"], probe["v"], probe["pos"], probe["slots"], probe["k_cache_t"],
                 probe["v_cache_t"])
        want = step(probe["q_src"], probe["k"], probe["v"], probe["pos"], probe["slots"], probe["k_cache"],
                    probe["v_cache"])
        sl = probe["slots"]
        scratch = {}
        if not (check_rotated(s, "torch.compile q", got, want, probe["q_src"], max_position, scratch, "q") and
                check_rotated(s, "torch.compile k slots", probe["k_cache_t"].view(-1, HKV, D)[sl],
                              probe["k_cache"].view(-1, HKV, D)[sl], probe["k"], max_position, scratch, "k") and
                s.check("torch.compile v slots", probe["v_cache_t"].view(-1, HKV, D)[sl], probe["v"], 0.0, 0.0)):
            raise RuntimeError("torch.compile's result differs from eager torch's")
        del probe, got, want
        compiled = lambda t: fn(t["q_src"], t["k"], t["v"], t["pos"], t["slots"], t["k_cache_t"],  # noqa: E731
                                t["v_cache_t"])
    except Exception as e:
        print("  torch.compile column skipped: %s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0][:300]))

    ledger_params = GkRopeAppendParams()
    ledger_params.tokens, ledger_params.heads_q, ledger_params.heads_kv, ledger_params.head_dim = tokens, HQ, HKV, D
    bytes_min = s.gk.rope_append_ledger(ctypes.byref(ledger_params), GK_BF16, GK_BF16).bytes
    set_bytes = (2 * tokens * HQ * D + 2 * tokens * HKV * D + 4 * num_slots * HKV * D + 2 * tokens * D) * 2
    shape = "T%d Hq%d Hkv%d D%d, %d slots" % (tokens, HQ, HKV, D, num_slots)
    notes["positions"] = positions_text
    s.measure(work, shape, set_bytes, make, gk, ref, check, bytes_min=bytes_min,
              others={"index_put": index_put, "cs_given": cs_given, "compile": compiled}, notes=notes)


# ---------------------------------------------------------------------- the dry run's checks

def check_launcher_pointers(path):
    """Problems (a list of strings) of gk_rope_append_bf16's pointer arguments as this script passes
    them (q_out, q, k, v): each left NULL in turn must be the one the refusal names (refused before
    any CUDA call). gk_ctypes.check_layouts checks the struct mirrors."""
    problems = []
    gk = Gk(path)
    p = GkRopeAppendParams(tokens=4, heads_q=HQ, heads_kv=HKV, head_dim=D, q_token_stride=HQ * D, q_head_stride=D,
                           k_token_stride=HKV * D, k_head_stride=D, v_token_stride=HKV * D, v_head_stride=D,
                           q_out_token_stride=HQ * D, q_out_head_stride=D, positions=0x7f0001000000,
                           slot_mapping=0x7f0001100000)
    cache = gk.paged_kv_dense(0x7f0002000000, 0x7f0003000000, GK_BF16, 4, BLOCK, HKV, D)
    rope = gk.rope_default(D, THETA)
    ptrs = {"q_out": 0x7f0004000000, "q": 0x7f0005000000, "k": 0x7f0006000000, "v": 0x7f0007000000}
    for null in ptrs:
        args = [None if name == null else value for name, value in ptrs.items()]
        try:
            gk.rope_append_bf16(*args, ctypes.byref(p), ctypes.byref(rope), ctypes.byref(cache), None)
            problems.append("gk_rope_append_bf16 with %s NULL: not refused" % null)
        except GkError as e:
            if "'%s' is a null pointer" % null not in str(e):
                problems.append("gk_rope_append_bf16 with %s NULL: refused for another reason (the argument order "
                                "differs?): %s" % (null, e))
    return problems


def dry_check(path):
    return gk_ctypes.check_layouts(path) + check_launcher_pointers(path)


def run_cases(s):
    for tokens, what, positions_text, max_position in CASES:
        rope_append(s, tokens, what, positions_text, max_position)


if __name__ == "__main__":
    compare_common.main("compare_paged", __doc__, run_cases, dry_check=dry_check)
