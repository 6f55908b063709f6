#!/usr/bin/env python3
"""gk_paged.cuh against what a PyTorch user calls for the same step, bf16, in one process (timing
rules: compare_common.py): gk_rope_append_bf16 (RoPE on q and k, k and v written into a paged KV
cache, one kernel) against the eager Hugging Face sequence, and gk_paged_decode_bf16 (split-K decode
attention over the paged cache) against F.scaled_dot_product_attention on a contiguous cache.

ROPE + CACHE APPEND ("rope+append" rows)

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

DECODE ATTENTION ("decode" rows)

  The step: Hq 32, Hkv 8, D 128 (and D 64, D 256 at B 16 L 4096), q [B, nq, Hq, D] random N(0, 1),
  nq 1 (plain decode) or 4 (the 4 last positions of each sequence, causal among themselves:
  speculative decoding), over a paged cache [num_blocks, 16, Hkv, D] whose blocks a shuffled
  permutation hands out (a sequence's pages scattered), the same shapes as //gk_bench:paged:
      B 1  L 32768      B 16 L 4096      B 64 L 2048
      B 32 L 1-32768    lengths uniform in [1, 32768], the C++ bench's draw (std::mt19937_64)
  on a bf16 cache, and on an e4m3 cache (stored = 16 x N(0, 1) values, k_scale = v_scale = 1/16);
  nq 4 on the four bf16-cache shapes.
  torch:  F.scaled_dot_product_attention(q, k, v, attn_mask=..., enable_gqa=True) on a contiguous
          bf16 cache [B, Hkv, L, D] holding the same values (for an fp8 row, the e4m3 values times
          their scale: torch's bf16 SDPA against gk's fp8 cache, twice the bytes on torch's side),
          q as a [B, Hq, nq, D] view of gk's q; SDPA picks its backend (the torch_kernels note names
          the kernels it ran, through torch.profiler). The mask: none for nq 1; for nq 4 a boolean
          [nq, L] mask, bottom-right aligned (torch's is_causal is top-left aligned). Mixed lengths:
          the torch column is ONE call on the batch padded to the longest sequence ([B, Hkv, 32768, D],
          zeros past each length) with a boolean [B, 1, nq, Lmax] mask of the padding (and the causal
          part for nq 4): what a padded-batch generation loop does, reading the padding too; note
          per_seq times a Python loop of B calls, each on its sequence's own length (views, no mask
          for nq 1). For nq 4 and one length, note lower_right times torch's
          causal_lower_right(nq, L) bias instead of the mask tensor, where this torch runs it. The
          contiguous caches and masks are built once per input set, outside the timed calls. A torch
          without enable_gqa gets k and v repeat_interleave'd to Hq heads once per set instead (note
          gqa).
  gk:     gk_paged_decode_bf16 (the dispatcher) on the paged cache, block table int32 [B, ceil(Lmax /
          16)], lengths int32 (and host_seq_lens, so the key splits follow the real lengths), the
          workspace gk_paged_decode_plan_for asks for (note gk_plan: its configuration and splits), lse
          not asked for (torch's call returns none), no error flag.

gk's out and lse are checked first against fp32 math on the same cache values (softmax(q k^T /
sqrt(D)) v per sequence, with the causal part for nq 4): out within 1e-2 + 2e-2 |ref| (both sides
round out to bf16 and P to 16 bits: compare_attention.py's tolerance), lse within 4e-3; gk's out
must come out bit-identical from a second call that also writes lse and passes an error flag, which
must stay 0. torch's output is checked against the same reference (notes gk_err, torch_err and
lse_err: the largest differences), and a further torch version that fails or differs is left out
of the timing. % copy: gk_paged_decode_ledger's bytes (k and v rows of every key in the cache's
dtype, q and out, the lengths) over the time, against the copy roof; gk_GBps, torch_GBps, ...: the
same bytes over each time (for torch an effective rate: it moves more). torch/gk above 1: gk is
faster.

    python3 compare_paged.py --lib lib/libgk.so --out OUT [--reps N] [--only WORK] [--dry-run]
"""

import ctypes
import math

import compare_common
import gk_ctypes
from gk_ctypes import GK_BF16, GK_E4M3, Gk, GkError, GkPagedDecodeParams, GkRopeAppendParams

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


# ---------------------------------------------------------------------- decode attention

DECODE_SHAPES = [  # (B, L, mixed): every sequence L tokens, or (mixed) lengths uniform in [1, L]
    (1, 32768, False),
    (16, 4096, False),
    (64, 2048, False),
    (32, 32768, True),
]
FP8_SCALE = 1.0 / 16  # k_scale and v_scale of the e4m3 cache: stored = 16 x N(0, 1) values, within e4m3's range
# out: q, k, v ~ N(0, 1) (logits ~ N(0, 1) after the scale), out a weighted mean of v; both round
# it to bf16 (2^-9 relative) and P to 16 bits before P V: compare_attention.py's tolerance. lse is
# fp32 on gk's side.
DECODE_RTOL, DECODE_ATOL, LSE_ATOL = 2e-2, 1e-2, 4e-3


def mt19937_64(seed):
    """std::mt19937_64's outputs (the C++ bench draws its mixed lengths with it, so both draw the same)."""
    mask, n, m = (1 << 64) - 1, 312, 156
    mt = [seed & mask]
    for i in range(1, n):
        mt.append((6364136223846793005 * (mt[-1] ^ (mt[-1] >> 62)) + i) & mask)
    idx = n
    while True:
        if idx == n:
            for i in range(n):
                x = (mt[i] & 0xFFFFFFFF80000000) | (mt[(i + 1) % n] & 0x7FFFFFFF)
                mt[i] = mt[(i + m) % n] ^ (x >> 1) ^ (0xB5026F5AA96619E9 if x & 1 else 0)
            idx = 0
        y = mt[idx]
        idx += 1
        y ^= (y >> 29) & 0x5555555555555555
        y ^= (y << 17) & 0x71D67FFFEDA60000
        y ^= (y << 37) & 0xFFF7EEE000000000
        y ^= y >> 43
        yield y & mask


def decode_lengths(batch, max_len, mixed, nq):
    """The sequences' lengths, as paged_bench.cu draws them: max_len each, or (mixed) uniform in
    [1, max_len] from std::mt19937_64(0xdec0de5eed), at least nq."""
    if not mixed:
        return [max_len] * batch
    g = mt19937_64(0xdec0de5eed)
    return [max(nq, next(g) % max_len + 1) for _ in range(batch)]


def kernels_of(s, fn):
    """The CUDA kernels one call of fn launches (names shortened), through torch.profiler: which
    SDPA backend torch picked. None where the profiler is not usable."""
    torch = s.torch
    try:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        names = []
        for e in prof.events():
            if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA and e.name not in names:
                names.append(e.name)
        short = [n.split("(")[0].split("<")[0].replace("void ", "")[:48] for n in names
                 if not n.startswith("Memset") and not n.startswith("Memcpy")]
        return " + ".join(short[:4]) + (" + %d more" % (len(short) - 4) if len(short) > 4 else "") or None
    except Exception:  # an old torch, no CUPTI: the note is left out
        return None


def sdpa_gqa_works(s):
    """Whether this torch's SDPA takes enable_gqa=True with a boolean mask (torch 2.5 and newer)."""
    torch = s.torch
    try:
        q, k = s.randn(1, 4, 2, 64), s.randn(1, 2, 8, 64)
        mask = torch.ones(2, 8, dtype=torch.bool, device="cuda")
        torch.nn.functional.scaled_dot_product_attention(q, k, k, attn_mask=mask, enable_gqa=True)
        torch.cuda.synchronize()
        return True
    except (TypeError, RuntimeError):
        return False


def decode(s, batch, max_len, mixed, nq, d, cache):
    work = "decode bf16 kv %s nq%d" % (cache, nq)
    if not s.wants(work):
        return
    torch = s.torch
    F = torch.nn.functional
    bf16 = torch.bfloat16
    fp8 = cache == "e4m3"
    lname = "1-%d" % max_len if mixed else str(max_len)
    shape = "B%d L%s Hq%d Hkv%d D%d" % (batch, lname, HQ, HKV, d)
    if fp8 and not hasattr(torch, "float8_e4m3fn"):
        print("  %s %s: torch %s has no float8_e4m3fn: row skipped" % (work, shape, torch.__version__))
        return
    group = HQ // HKV
    lens = decode_lengths(batch, max_len, mixed, nq)
    lmax = max(lens)
    nblk = [-(-n // BLOCK) for n in lens]
    max_blocks, num_blocks = -(-lmax // BLOCK), sum(nblk)

    # the block table: a shuffled permutation of the cache's blocks, 0 past a sequence's blocks
    gen = torch.Generator().manual_seed(0xb10c7ab1e + batch * 131 + max_len)
    perm = torch.randperm(num_blocks, generator=gen).to(torch.int32)
    table_h = torch.zeros(batch, max_blocks, dtype=torch.int32)
    at = 0
    for b, n in enumerate(nblk):
        table_h[b, :n] = perm[at:at + n]
        at += n
    table = table_h.cuda()
    index = table.long()
    seq_lens = torch.tensor(lens, dtype=torch.int32, device="cuda")
    host_lens = (ctypes.c_int * batch)(*lens)  # alive as long as params points at it
    flag = torch.zeros(1, dtype=torch.int32, device="cuda")
    cache_dt = GK_E4M3 if fp8 else GK_BF16

    params = s.gk.paged_decode_params_dense(batch, HQ, HKV, d, nq, table.data_ptr(), max_blocks, seq_lens.data_ptr(),
                                            lmax)
    params.host_seq_lens = ctypes.cast(host_lens, ctypes.c_void_p).value
    checked = GkPagedDecodeParams.from_buffer_copy(params)  # the checked call: with the error flag
    checked.error_flag = flag.data_ptr()

    def cache_of(k_cache, v_cache):
        kv = s.gk.paged_kv_dense(k_cache, v_cache, cache_dt, num_blocks, BLOCK, HKV, d)
        if fp8:
            kv.k_scale = kv.v_scale = FP8_SCALE
        return kv

    plan = s.gk.paged_decode_plan_for(ctypes.byref(params), ctypes.byref(cache_of(None, None)))
    notes = {}
    if plan.config >= 0:
        notes["gk_plan"] = "%s, %d split%s" % (s.gk.paged_decode_config_info(plan.config).name.decode(), plan.splits,
                                               "" if plan.splits == 1 else "s")
    ws_bytes = plan.workspace_bytes if plan.config >= 0 else 0
    workspace = torch.empty(max(ws_bytes, 1), dtype=torch.uint8, device="cuda")  # 512-byte aligned
    ws_ptr = workspace.data_ptr() if ws_bytes else None
    bytes_min = s.gk.paged_decode_ledger(ctypes.byref(params), GK_BF16, cache_dt, host_lens).bytes

    # torch's masks (True: the key is seen): query i of a sequence of length L sits at L - nq + i
    keys = torch.arange(lmax, device="cuda")
    lens_t = torch.tensor(lens, device="cuda")
    qi = torch.arange(nq, device="cuda")
    if mixed:  # one padded call: [B, 1, nq, Lmax], the padding masked
        mask = (keys[None, None, :] <= (lens_t[:, None] - nq + qi[None, :])[:, :, None])[:, None]
    elif nq > 1:  # the last nq positions, causal among themselves (bottom-right aligned)
        mask = keys[None, :] <= (lmax - nq + qi)[:, None]
    else:
        mask = None
    seq_masks = [keys[None, :n] <= (n - nq + qi)[:, None] if nq > 1 else None for n in lens]
    gqa = sdpa_gqa_works(s)
    notes["gqa"] = "enable_gqa" if gqa else "repeat_interleave"

    def make():
        t = {}
        if fp8:
            t["k_cache"] = (torch.randn(num_blocks, BLOCK, HKV, d, device="cuda") / FP8_SCALE).to(torch.float8_e4m3fn)
            t["v_cache"] = (torch.randn(num_blocks, BLOCK, HKV, d, device="cuda") / FP8_SCALE).to(torch.float8_e4m3fn)
            k_val, v_val = t["k_cache"].to(bf16) * FP8_SCALE, t["v_cache"].to(bf16) * FP8_SCALE  # exact in bf16
        else:
            t["k_cache"], t["v_cache"] = s.randn(num_blocks, BLOCK, HKV, d), s.randn(num_blocks, BLOCK, HKV, d)
            k_val, v_val = t["k_cache"], t["v_cache"]

        def gather(c):  # the same values, contiguous: [B, Hkv, Lmax, D], zero past each length
            g = c[index].reshape(batch, max_blocks * BLOCK, HKV, d)[:, :lmax]
            if mixed:
                g = g.masked_fill((keys[None, :] >= lens_t[:, None])[:, :, None, None], 0.0)
            return g.permute(0, 2, 1, 3).contiguous()

        t["k"], t["v"] = gather(k_val), gather(v_val)
        del k_val, v_val
        if not gqa:  # torch without enable_gqa: k and v repeated to Hq heads once per set, outside the timing
            t["k"] = t["k"].repeat_interleave(group, dim=1)
            t["v"] = t["v"].repeat_interleave(group, dim=1)
        t["q"] = s.randn(batch, nq, HQ, d)
        t["out"] = s.nan(batch, nq, HQ, d)
        t["lse"] = torch.full((batch, HQ, nq), float("nan"), dtype=torch.float32, device="cuda")
        t["cache"] = cache_of(t["k_cache"].data_ptr(), t["v_cache"].data_ptr())
        return t

    def sdpa(q, k, v, m):
        if gqa:
            return F.scaled_dot_product_attention(q, k, v, attn_mask=m, enable_gqa=True)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m)

    def gk(t):
        s.gk.paged_decode_bf16(t["out"].data_ptr(), None, t["q"].data_ptr(), ctypes.byref(t["cache"]),
                               ctypes.byref(params), ws_ptr, ws_bytes, s.stream)

    def ref(t):  # one call on the padded batch: [B, Hq, nq, D]
        return sdpa(t["q"].transpose(1, 2), t["k"], t["v"], mask)

    def per_seq(t):  # a call a sequence on its own length: B launches
        return [sdpa(t["q"][b:b + 1].transpose(1, 2), t["k"][b:b + 1, :, :n], t["v"][b:b + 1, :, :n], seq_masks[b])
                for b, n in enumerate(lens)]

    def lower_right(t):  # the bottom-right causal mask as torch's CausalBias, no mask tensor
        from torch.nn.attention.bias import causal_lower_right
        return sdpa(t["q"].transpose(1, 2), t["k"], t["v"], causal_lower_right(nq, lmax))

    others = {}
    if mixed:
        others["per_seq"] = per_seq
    elif nq > 1:
        others["lower_right"] = lower_right

    def reference(t):
        """out [B, Hq, nq, D] and lse [B, Hq, nq] in fp32 from the same values, sequence by sequence."""
        outs, lses = [], []
        row_q = qi.repeat(group)  # rows of a kv head's group: head r of the group, query i at r nq + i
        for b, n in enumerate(lens):
            k = t["k"][b, ::group if not gqa else 1, :n].float()  # [Hkv, L, D]
            v = t["v"][b, ::group if not gqa else 1, :n].float()
            q = t["q"][b].float().permute(1, 0, 2).reshape(HKV, group * nq, d)
            sc = (q @ k.transpose(-1, -2)) / math.sqrt(d)
            sc = sc.masked_fill(~(keys[None, :n] <= (n - nq + row_q)[:, None]), float("-inf"))
            lses.append(torch.logsumexp(sc, dim=-1).reshape(HQ, nq))
            outs.append((torch.softmax(sc, dim=-1) @ v).reshape(HQ, nq, d))
        return torch.stack(outs), torch.stack(lses)

    def check(t, want):
        first = t["out"].clone()
        s.gk.paged_decode_bf16(t["out"].data_ptr(), t["lse"].data_ptr(), t["q"].data_ptr(), ctypes.byref(t["cache"]),
                               ctypes.byref(checked), ws_ptr, ws_bytes, s.stream)
        torch.cuda.synchronize()
        r_out, r_lse = reference(t)
        got = t["out"].transpose(1, 2)
        notes["gk_err"] = (got.float() - r_out).abs().max().item()
        notes["lse_err"] = (t["lse"] - r_lse).abs().max().item()
        ok = s.check("gk out vs fp32", got, r_out, DECODE_RTOL, DECODE_ATOL)
        ok = s.check("gk lse vs fp32", t["lse"], r_lse, 0.0, LSE_ATOL) and ok
        if not torch.equal(first.view(torch.int16), t["out"].view(torch.int16)):
            print("  MISMATCH: gk's out differs between two calls (with and without lse)")
            ok = False
        if int(flag.item()):
            print("  MISMATCH: gk's error flag is %d (a block id or a length refused on the device)" % int(flag.item()))
            ok = False
        notes["torch_err"] = (want.float() - r_out).abs().max().item()
        ok = s.check("torch SDPA out vs fp32", want, r_out, DECODE_RTOL, DECODE_ATOL) and ok
        notes["torch_kernels"] = kernels_of(s, lambda: ref(t))
        for name, fn in list(others.items()):  # a version that fails or is wrong is left out of the timing
            try:
                o = fn(t)
                o = torch.cat(o) if isinstance(o, list) else o
                if not s.check("torch %s out vs fp32" % name, o, r_out, DECODE_RTOL, DECODE_ATOL):
                    raise RuntimeError("its result differs from the fp32 reference")
            except Exception as e:
                print("  %s column skipped: %s: %s" % (name, type(e).__name__, (str(e).splitlines() or [""])[0][:200]))
                others[name] = None
        return ok

    es = 1 if fp8 else 2
    set_bytes = (2 * num_blocks * BLOCK * HKV * d * es + 2 * batch * (HQ if not gqa else HKV) * lmax * d * 2 +
                 2 * batch * nq * HQ * d * 2)
    s.measure(work, shape, set_bytes, make, gk, ref, check, bytes_min=bytes_min, others=others, notes=notes)
    row = s.rows[-1]
    if row.get("gk_us"):  # GB/s on gk's ledger bytes (torch moves more: bf16 for an fp8 cache, the padding)
        for name in ["gk", "torch"] + [n for n in others if others[n] is not None]:
            if row.get(name + "_us"):
                row[name + "_GBps"] = bytes_min / (row[name + "_us"] * 1e-6) * 1e-9
        print("  GB/s on gk's ledger bytes (%.1f MB): %s" % (bytes_min * 1e-6, ", ".join(
            "%s %.0f" % (k[:-5], v) for k, v in row.items() if k.endswith("_GBps"))))


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


def check_decode_pointers(path):
    """Problems of gk_paged_decode_bf16's pointer arguments as this script passes them (out, lse, q,
    the workspace) and of gk_paged_decode_ex's integer ones (config, splits, dtype): each in turn made
    the one bad argument must be the one the refusal names (refused before any CUDA call)."""
    problems = []
    gk = Gk(path)
    nq, max_len = 4, 4096
    p = gk.paged_decode_params_dense(16, HQ, HKV, D, nq, 0x7f0001000000, max_len // BLOCK, 0x7f0001100000, max_len)
    cache = gk.paged_kv_dense(0x7f0002000000, 0x7f0003000000, GK_BF16, 16 * max_len // BLOCK, BLOCK, HKV, D)
    ptrs = {"out": 0x7f0004000000, "lse": 0x7f0005000000, "q": 0x7f0006000000}
    ws = 0x7f0007000010  # 16 bytes past a 256-byte boundary: refused last, after every other check passed

    def expect(what, needle, call):
        try:
            call()
            problems.append("%s: not refused" % what)
        except GkError as e:
            if needle not in str(e):
                problems.append("%s: refused for another reason (the argument order differs?): %s" % (what, e))

    for bad, value, needle in (("out", None, "'out' is a null pointer"), ("q", None, "'q' is a null pointer"),
                               ("lse", ptrs["lse"] + 2, "'lse'")):
        args = dict(ptrs, **{bad: value})
        expect("gk_paged_decode_bf16 with %s %s" % (bad, "NULL" if value is None else "misaligned"), needle,
               lambda: gk.paged_decode_bf16(args["out"], args["lse"], args["q"], ctypes.byref(cache), ctypes.byref(p),
                                            ws, 1 << 20, None))
    expect("gk_paged_decode_bf16 with the workspace misaligned", "workspace",
           lambda: gk.paged_decode_bf16(ptrs["out"], ptrs["lse"], ptrs["q"], ctypes.byref(cache), ctypes.byref(p), ws,
                                        1 << 20, None))
    n = gk.paged_decode_config_count()
    for what, config, splits, dtype, needle in (("config", n, 0, GK_BF16, "configuration %d is not one of" % n),
                                                ("splits", -1, 100000, GK_BF16, "splits is 100000"),
                                                ("dtype", -1, 0, GK_E4M3, "dtype e4m3: bf16 or f16")):
        expect("gk_paged_decode_ex with a bad %s" % what, needle,
               lambda: gk.paged_decode_ex(config, splits, dtype, ptrs["out"], ptrs["lse"], ptrs["q"],
                                          ctypes.byref(cache), ctypes.byref(p), ws, 1 << 20, None))
    return problems


def dry_check(path):
    return gk_ctypes.check_layouts(path) + check_launcher_pointers(path) + check_decode_pointers(path)


def run_cases(s):
    for tokens, what, positions_text, max_position in CASES:
        rope_append(s, tokens, what, positions_text, max_position)
    for nq, cache in ((1, "bf16"), (1, "e4m3"), (4, "bf16")):
        for batch, max_len, mixed in DECODE_SHAPES:
            decode(s, batch, max_len, mixed, nq, D, cache)
    for d in (64, 256):
        decode(s, 16, 4096, False, 1, d, "bf16")


if __name__ == "__main__":
    compare_common.main("compare_paged", __doc__, run_cases, dry_check=dry_check)
