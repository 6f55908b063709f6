// //gk_bench:paged - gk_paged.cuh's fused RoPE + paged-cache append against the copy bandwidth,
// and its split-K decode attention over the paged cache against the read bandwidth, both
// measured in this process.
//
// THE APPEND ROWS. The step: q [T][Hq][D] rotated in place (q_out = q), k [T][Hkv][D] rotated and
// v copied into a paged cache [num_blocks][16][Hkv][D] at slot_mapping[t].
// Row names are rope_append_bf16_kv_<cache>/<rope>/t<T>_hq<Hq>_hkv<Hkv>_d<D>:
//   cache    bf16 (the tokens' dtype) or e4m3 (fp8, k_scale 1/32 and v_scale 1/64: powers of two,
//            so stored = value / scale is exact before the rounding to fp8)
//   rope     NeoX style, rotary_dim = D = 128, theta 500000, with Llama-3.1 frequency scaling
//            (factor 8, low 1, high 4, original 8192: "llama3.1") or without ("plain"); cos and sin
//            formed by the kernel (no table)
//   T        4096 (a prefill chunk) and 256, 16, 1 (decode-sized steps); Hq 32, Hkv 8, D 128
//            (Llama-3-8B's heads)
// Inputs: q, k, v uniform in [-2, 2); positions int32, uniform in [0, 131072) (Llama-3.1's
// context); slot_mapping int64, the first T of a shuffled permutation of the cache's slots; the
// cache holds 2T slots rounded up to whole 16-token blocks, so half its slots stay unwritten.
//   ledger    gk_rope_append_ledger: q read and written, k and v read, k and v written to the
//             cache (in the cache's dtype), positions and slots read
//   roof      bytes / copy bandwidth (the best of cudaMemcpy and a tuned copy kernel: gk_bench.h);
//             bound_us and pct_roof as every memory-bound gk bench prints them
//   baseline  vs_base = the time cudaMemcpy D2D takes to move the same bytes (half the ledger's
//             bytes copied, so as many bytes read plus written), measured in this row the same
//             way (L2 flushed, median) / the row's time: at T = 1 both are launch-bound
// Every row runs once untimed and is checked before it is timed, with the cache poisoned (0xff:
// NaN in bf16 and in e4m3) and an error flag passed: the flag stays 0; q_out is finite
// everywhere; exactly the T * Hkv * D cache entries of k and of v that slot_mapping names turn
// finite (every slot written, nothing else touched); and a few tokens (first, second, middle,
// last and 4 random ones) are recomputed on the CPU in double from the same bf16 inputs, with the
// frequencies (Llama-3.1 scaling included) computed here, not by gk: every q head, and the k and v
// rows read back from their cache slots. bf16 outputs within 1e-4 + 2^-8 |ref| (one rounding to
// bf16 is 2^-9 relative), v in a bf16 cache bit-exact, fp8 within scale 2^-10 + 2^-4 |ref| (half an
// e4m3 step) of the CPU's value. counter err: the largest |gk - CPU| over the sampled values (fp8
// ones decoded and times their scale). A row that fails says MISMATCH, is not timed, and after all
// rows ran the binary lists those rows and exits with status 1.
//
// THE DECODE ROWS. gk_paged_decode_bf16 (the dispatcher, with the workspace
// gk_paged_decode_plan_for asks for): q [B][nq][Hq][D] bf16 against a paged cache of 16-token
// blocks, out [B][nq][Hq][D] bf16; lse not asked for and no error flag (what a serving step
// passes). Row names are decode_bf16_kv_<cache>/nq<nq>/b<B>_l<L>_hq<Hq>_hkv<Hkv>_d<D>:
//   cache    bf16, or e4m3 (fp8; stored values uniform in [-8, 8), k_scale 1/4 and v_scale 1/8:
//            k in [-2, 2) and v in [-1, 1) as in the bf16 cache)
//   L        every sequence's length (the new tokens included): B 1 L 32768, B 16 L 4096,
//            B 64 L 2048; "1-32768": B 32 with lengths uniform in [1, 32768] (fixed seed, the same
//            for every row; at least nq); Hq 32, Hkv 8 (Llama-3-8B's heads), D 128, and D 64 and
//            D 256 at B 16 L 4096
//   nq       1 (plain decode) and 4 (the 4 last positions of each sequence, causal among
//            themselves: speculative decoding) on the four bf16 shapes
// Inputs: q and k uniform in [-2, 2), v in [-1, 1) (logits of standard deviation about 1.3); the
// cache holds exactly the blocks the sequences use, handed out by a shuffled permutation of the
// cache's blocks (the pages of a sequence are scattered); block table int32 [B][ceil(max L / 16)]
// (0 past a sequence's blocks, as vLLM pads it), lengths int32; host_seq_lens given (the
// dispatcher splits the keys by the real lengths). The whole cache is larger than L2 in every row
// (B 1 L 32768: 134 MB of bf16 k and v), and L2 is flushed before every timed call anyway.
//   ledger    gk_paged_decode_ledger with the host lengths: the k and v rows read (each key once
//             for its kv head's Hq / Hkv query heads), q and out, the lengths; FLOPs 4 Hq D per
//             visible (query, key) pair
//   roof      the read roof: a read-only kernel (a grid-stride sum of 16-byte loads on the
//             read-only path, 4 or 8 in flight a thread, one resident wave, the sums of its warps
//             written) over a buffer of the row's ledger bytes, the faster of the two, timed in the
//             row the same way (L2 flushed, median). Counters read_GBps (its rate: the roof for
//             this row), pct_read (100 x its time / the row's time: the percentage of the read
//             roof reached); vs_base is the same fraction as a ratio. bound_us and pct_roof are
//             every gk bench's: against the copy roof (read + write) and the mma.sync ceiling.
//             Row read_kernel/1GiB gives the read roof at 1 GiB.
//   counters  config and splits: what gk_paged_decode_plan_for says the dispatcher runs (the
//             label names the configuration, the keys a split and the workspace); err and
//             lse_err: the check's largest errors
// Every row runs once untimed with lse and an error flag and is checked before it is timed: out
// and lse start as NaN and must all be written (finite), the flag stays 0, and the sequences
// first, last, longest, shortest and one random are recomputed on the CPU in double from the same
// bf16 (or decoded e4m3 times its scale) values, gathered through the block table read back here,
// for query heads 0, Hq - 1 and one random, every query token: out within 1/256 + |ref| / 128
// (out rounded to bf16, P to 16 bits before P V, |v| < 1), lse within 4e-3. The plan's
// configuration and splits are then run through gk_paged_decode_ex and must give the same bits
// (the label says so). A refusal, a mismatch or an unwritten output fails the row (MISMATCH, not
// timed) and the run (exit status 1).
// A subset: --benchmark_filter=<regex on the row name>, e.g. 'kv_e4m3', 'llama3.1', '/t4096_', '^decode',
// 'decode.*nq4', '_l1-32768_'.
// gk_paged.cuh's implementation and gk_core.cuh's only: gk_paged.cuh includes gk_attention.cuh,
// whose kernels GK_IMPLEMENTATION would compile too.
#define GK_CORE_IMPLEMENTATION
#define GK_PAGED_IMPLEMENTATION
#include "gk/gk_paged.cuh"
#include "gk_bench/gk_bench.h"

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

// ------------------------------------------------------------------ one step

struct PgCase {
    std::string name;
    int tokens, hq, hkv, d;
    int cache_dt; // GK_BF16 or GK_E4M3
    bool llama31; // Llama-3.1 frequency scaling
};

static const int kBlockSize = 16, kMaxPosition = 131072;
static const float kTheta = 500000.0f, kKScale = 1.0f / 32, kVScale = 1.0f / 64;

static gk_rope rope_of(const PgCase &c)
{
    gk_rope r = gk_rope_default(c.d, kTheta);
    if (c.llama31) {
        r.factor = 8.0f;
        r.low_freq_factor = 1.0f;
        r.high_freq_factor = 4.0f;
        r.original_max_position = 8192;
    }
    return r;
}

static int num_slots_of(const PgCase &c) { return (int)gk_round_up(2 * (int64_t)c.tokens, kBlockSize); }

// ------------------------------------------------------------------ CPU reference (double)

// bf16 and e4m3 decoded from their bits here, not through gk's conversions.
static double bf16_bits_to_double(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static double e4m3_bits_to_double(uint8_t b)
{
    const int s = b >> 7, e = (b >> 3) & 15, m = b & 7;
    if (e == 15 && m == 7) return NAN;
    const double v = e == 0 ? m * std::ldexp(1.0, -9) : (1.0 + m / 8.0) * std::ldexp(1.0, e - 7);
    return s ? -v : v;
}

// The rotary frequency of pair j, with Llama-3.1's scaling as Meta's reference (apply_scaling)
// and Hugging Face's _compute_llama3_parameters write it.
static double ref_freq(const PgCase &c, int j)
{
    const double f = std::pow((double)kTheta, -2.0 * j / c.d);
    if (!c.llama31) return f;
    const double factor = 8, low = 1, high = 4, old = 8192;
    const double wavelen = 2 * M_PI / f;
    if (wavelen < old / high) return f;
    if (wavelen > old / low) return f / factor;
    const double smooth = (old / wavelen - low) / (high - low);
    return (1 - smooth) * f / factor + smooth * f;
}

// One head row rotated, NeoX style over all D dims: pairs (j, j + D / 2).
static void ref_rope(const PgCase &c, int64_t pos, const uint16_t *x, double *y)
{
    const int h = c.d / 2;
    for (int j = 0; j < h; j++) {
        const double a = (double)pos * ref_freq(c, j), cs = std::cos(a), sn = std::sin(a);
        const double x1 = bf16_bits_to_double(x[j]), x2 = bf16_bits_to_double(x[j + h]);
        y[j] = x1 * cs - x2 * sn;
        y[j + h] = x2 * cs + x1 * sn;
    }
}

// ------------------------------------------------------------------ checks


struct Bufs {
    gk_bf16 *q, *k, *v;
    void *k_cache, *v_cache;
    int *positions, *error_flag;
    int64_t *slots;
    std::vector<int> pos_h;
    std::vector<int64_t> slots_h;
    int num_slots;
};

// Arena buffers for one step: q, k, v random, the cache poisoned, positions and slots from the host.
static Bufs setup(const PgCase &c)
{
    gk_bench_arena_reset();
    Bufs f;
    const int64_t nq = (int64_t)c.tokens * c.hq * c.d, nkv = (int64_t)c.tokens * c.hkv * c.d;
    f.num_slots = num_slots_of(c);
    const int64_t ncache = (int64_t)f.num_slots * c.hkv * c.d;
    const int es = gk_dtype_size(c.cache_dt);
    f.q = (gk_bf16 *)gk_bench_alloc(nq * 2, false);
    f.k = (gk_bf16 *)gk_bench_alloc(nkv * 2, false);
    f.v = (gk_bf16 *)gk_bench_alloc(nkv * 2, false);
    f.k_cache = gk_bench_alloc(ncache * es);
    f.v_cache = gk_bench_alloc(ncache * es);
    f.positions = (int *)gk_bench_alloc(c.tokens * sizeof(int), false);
    f.slots = (int64_t *)gk_bench_alloc(c.tokens * sizeof(int64_t), false);
    f.error_flag = (int *)gk_bench_alloc(sizeof(int), false);
    gk_bench_fill_random(f.q, GK_BF16, nq, -2.0f, 2.0f);
    gk_bench_fill_random(f.k, GK_BF16, nkv, -2.0f, 2.0f);
    gk_bench_fill_random(f.v, GK_BF16, nkv, -2.0f, 2.0f);
    std::mt19937_64 rng(0x9a9edull + (uint64_t)c.tokens * 31 + (uint64_t)c.cache_dt * 7 + c.llama31);
    std::vector<int64_t> perm(f.num_slots);
    for (int i = 0; i < f.num_slots; i++) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    f.slots_h.assign(perm.begin(), perm.begin() + c.tokens);
    f.pos_h.resize(c.tokens);
    for (int t = 0; t < c.tokens; t++) f.pos_h[t] = (int)(rng() % kMaxPosition);
    GK_BENCH_CUDA(cudaMemcpy(f.positions, f.pos_h.data(), c.tokens * sizeof(int), cudaMemcpyHostToDevice));
    GK_BENCH_CUDA(cudaMemcpy(f.slots, f.slots_h.data(), c.tokens * sizeof(int64_t), cudaMemcpyHostToDevice));
    GK_BENCH_CUDA(cudaMemset(f.error_flag, 0, sizeof(int)));
    return f;
}

static gk_rope_append_params params_of(const PgCase &c, const Bufs &f, bool with_flag)
{
    gk_rope_append_params p;
    memset(&p, 0, sizeof p);
    p.tokens = c.tokens;
    p.heads_q = c.hq;
    p.heads_kv = c.hkv;
    p.head_dim = c.d;
    p.q_token_stride = p.q_out_token_stride = (int64_t)c.hq * c.d;
    p.q_head_stride = p.q_out_head_stride = c.d;
    p.k_token_stride = p.v_token_stride = (int64_t)c.hkv * c.d;
    p.k_head_stride = p.v_head_stride = c.d;
    p.positions = f.positions;
    p.positions_int64 = 0;
    p.slot_mapping = f.slots;
    p.error_flag = with_flag ? f.error_flag : NULL;
    return p;
}

static gk_paged_kv cache_of(const PgCase &c, const Bufs &f)
{
    gk_paged_kv kv = gk_paged_kv_dense(f.k_cache, f.v_cache, c.cache_dt, f.num_slots / kBlockSize, kBlockSize, c.hkv, c.d);
    if (c.cache_dt == GK_E4M3) {
        kv.k_scale = kKScale;
        kv.v_scale = kVScale;
    }
    return kv;
}

static const double kAtol = 1e-4, kRtol = 1.0 / 256;              // bf16: one rounding is 2^-9 relative
static const double kFp8Atol = 1.0 / 1024, kFp8Rtol = 1.0 / 16 * 1.001; // e4m3: half a step (subnormal / normal)

struct Check {
    double max_err = 0;
    int tokens = 0;
    std::string first_miss;
};

// One value against the CPU: got (already decoded and scaled) within tolerance of ref.
static void compare(Check *chk, const char *what, int t, int h, int d, double got, double ref, double atol, double rtol)
{
    const double err = std::fabs(got - ref);
    if (!(err <= chk->max_err)) chk->max_err = err; // NaN sticks
    if (!(err <= atol + rtol * std::fabs(ref)) && chk->first_miss.empty()) {
        char buf[200];
        snprintf(buf, sizeof buf, "%s of token %d, head %d, dim %d: gk %.6g, CPU %.6g", what, t, h, d, got, ref);
        chk->first_miss = buf;
    }
}

// The sampled tokens: first, second, middle, last and 4 random ones.
static std::vector<int> sample_tokens(const PgCase &c)
{
    std::vector<int> ts = {0, 1, c.tokens / 2, c.tokens - 1};
    uint32_t z = 0x2545f491u ^ (uint32_t)(c.tokens * 131 + c.cache_dt * 17 + c.llama31);
    for (int i = 0; i < 4; i++) {
        z = z * 1664525u + 1013904223u;
        ts.push_back((int)((z >> 8) % (uint32_t)c.tokens));
    }
    std::sort(ts.begin(), ts.end());
    ts.erase(std::unique(ts.begin(), ts.end()), ts.end());
    while (!ts.empty() && ts.back() >= c.tokens) ts.pop_back();
    return ts;
}

// Runs the step once (q rotated in place, the sampled tokens' q rows read before the call) and
// checks it; *why_failed says what is wrong (empty: nothing).
static Check run_and_check(const PgCase &c, const Bufs &f, std::string *why_failed)
{
    Check chk;
    const std::vector<int> ts = sample_tokens(c);
    const int qrow = c.hq * c.d, kvrow = c.hkv * c.d, es = gk_dtype_size(c.cache_dt);
    std::vector<uint16_t> q_before((size_t)ts.size() * qrow);
    for (size_t i = 0; i < ts.size(); i++)
        GK_BENCH_CUDA(cudaMemcpy(&q_before[i * qrow], f.q + (int64_t)ts[i] * qrow, qrow * 2, cudaMemcpyDeviceToHost));

    const gk_rope_append_params p = params_of(c, f, true);
    const gk_rope r = rope_of(c);
    const gk_paged_kv kv = cache_of(c, f);
    const cudaError_t e = gk_rope_append_bf16(f.q, f.q, f.k, f.v, &p, &r, &kv, 0);
    if (e != cudaSuccess) {
        *why_failed = std::string(cudaGetErrorString(e)) + ": " + gk_failure_reason();
        return chk;
    }
    GK_BENCH_CUDA(cudaDeviceSynchronize());

    std::string why;
    char buf[256];
    int flag = 0;
    GK_BENCH_CUDA(cudaMemcpy(&flag, f.error_flag, sizeof flag, cudaMemcpyDeviceToHost));
    if (flag) why += "the error flag is set (a slot or position refused on the device); ";
    const int64_t nq = (int64_t)c.tokens * qrow, ncache = (int64_t)f.num_slots * kvrow;
    const int64_t unwritten = (int64_t)(f.num_slots - c.tokens) * kvrow;
    const unsigned long long bad_q = gk_bench_count_nonfinite(f.q, GK_BF16, nq);
    const unsigned long long nf_k = gk_bench_count_nonfinite(f.k_cache, c.cache_dt, ncache);
    const unsigned long long nf_v = gk_bench_count_nonfinite(f.v_cache, c.cache_dt, ncache);
    if (bad_q) {
        snprintf(buf, sizeof buf, "%llu of %lld q_out values not finite; ", bad_q, (long long)nq);
        why += buf;
    }
    if (nf_k != (unsigned long long)unwritten || nf_v != (unsigned long long)unwritten) {
        snprintf(buf, sizeof buf, "k_cache has %llu and v_cache %llu non-finite entries, want %lld each (the unwritten "
                 "slots' poison); ", nf_k, nf_v, (long long)unwritten);
        why += buf;
    }

    std::vector<uint16_t> qo(qrow), kin(kvrow), vin(kvrow);
    std::vector<unsigned char> kc((size_t)kvrow * es), vc((size_t)kvrow * es);
    std::vector<double> y(c.d);
    for (size_t i = 0; i < ts.size(); i++) {
        const int t = ts[i];
        const int64_t pos = f.pos_h[t], slot = f.slots_h[t];
        GK_BENCH_CUDA(cudaMemcpy(qo.data(), f.q + (int64_t)t * qrow, qrow * 2, cudaMemcpyDeviceToHost));
        GK_BENCH_CUDA(cudaMemcpy(kin.data(), f.k + (int64_t)t * kvrow, kvrow * 2, cudaMemcpyDeviceToHost));
        GK_BENCH_CUDA(cudaMemcpy(vin.data(), f.v + (int64_t)t * kvrow, kvrow * 2, cudaMemcpyDeviceToHost));
        // dense blocks: slot s's row [Hkv][D] starts at s * Hkv * D elements
        GK_BENCH_CUDA(cudaMemcpy(kc.data(), (char *)f.k_cache + slot * kvrow * es, (size_t)kvrow * es, cudaMemcpyDeviceToHost));
        GK_BENCH_CUDA(cudaMemcpy(vc.data(), (char *)f.v_cache + slot * kvrow * es, (size_t)kvrow * es, cudaMemcpyDeviceToHost));
        for (int h = 0; h < c.hq; h++) {
            ref_rope(c, pos, &q_before[i * qrow + (size_t)h * c.d], y.data());
            for (int d = 0; d < c.d; d++)
                compare(&chk, "q_out", t, h, d, bf16_bits_to_double(qo[(size_t)h * c.d + d]), y[d], kAtol, kRtol);
        }
        for (int h = 0; h < c.hkv; h++) {
            ref_rope(c, pos, &kin[(size_t)h * c.d], y.data());
            for (int d = 0; d < c.d; d++) {
                const size_t at = (size_t)h * c.d + d;
                const double vref = bf16_bits_to_double(vin[at]);
                if (c.cache_dt == GK_E4M3) {
                    compare(&chk, "k_cache", t, h, d, e4m3_bits_to_double(kc[at]) * kKScale, y[d], kFp8Atol * kKScale,
                            kFp8Rtol);
                    compare(&chk, "v_cache", t, h, d, e4m3_bits_to_double(vc[at]) * kVScale, vref, kFp8Atol * kVScale,
                            kFp8Rtol);
                } else {
                    uint16_t kb, vb;
                    memcpy(&kb, &kc[at * 2], 2);
                    memcpy(&vb, &vc[at * 2], 2);
                    compare(&chk, "k_cache", t, h, d, bf16_bits_to_double(kb), y[d], kAtol, kRtol);
                    compare(&chk, "v_cache (a bit-exact copy)", t, h, d, bf16_bits_to_double(vb), vref, 0.0, 0.0);
                }
            }
        }
    }
    chk.tokens = (int)ts.size();
    if (!chk.first_miss.empty()) why += chk.first_miss;
    *why_failed = why;
    return chk;
}

// ------------------------------------------------------------------ rows

static std::vector<std::string> failed_rows; // refused, wrong or unwritten outputs: the run fails at the end

static void run_row(benchmark::State &state, PgCase c)
{
    Bufs f = setup(c);
    std::string why;
    const Check chk = run_and_check(c, f, &why);
    if (!why.empty()) {
        fprintf(stderr, "gk_bench: %s failed: %s\n", c.name.c_str(), why.c_str());
        failed_rows.push_back(c.name + " (" + why + ")");
        state.SkipWithError(("MISMATCH or error: " + why).c_str());
        return;
    }
    // timed without the error flag: what a serving step passes by default
    const gk_rope_append_params p = params_of(c, f, false);
    const gk_rope r = rope_of(c);
    const gk_paged_kv kv = cache_of(c, f);
    auto launch = [&](cudaStream_t s) { return gk_rope_append_bf16(f.q, f.q, f.k, f.v, &p, &r, &kv, s); };
    const gk_ledger l = gk_rope_append_ledger(&p, GK_BF16, c.cache_dt);
    const size_t copy_bytes = (size_t)gk_round_up((int64_t)(l.bytes / 2), 16);
    for (auto _ : state) {
        const double t = gk_bench_median_seconds(launch);
        const double base = gk_bench_copy_seconds(copy_bytes);
        gk_bench_report(state, t, l, gk_bench_device().ffma_flops_per_s, base);
        state.counters["err"] = chk.max_err;
    }
    char buf[320];
    snprintf(buf, sizeof buf,
             "q in place, cache %s (%d blocks of %d), %s; check: %d tokens vs CPU, max |err| %.2g; vs_base: cudaMemcpy "
             "of %.1f KiB (the same bytes read + written)",
             c.cache_dt == GK_E4M3 ? "e4m3 (k_scale 1/32, v_scale 1/64)" : "bf16", f.num_slots / kBlockSize, kBlockSize,
             c.llama31 ? "NeoX 128, theta 5e5, Llama-3.1 scaling (8, 1, 4, 8192)" : "NeoX 128, theta 5e5",
             chk.tokens, chk.max_err, copy_bytes / 1024.0);
    state.SetLabel(buf);
}

// ------------------------------------------------------------------ the read roof

// A read-only pass: 16-byte loads on the read-only path, a grid-stride loop, `unroll` loads in
// flight a thread before they are summed (a literal after inlining, so v stays in registers);
// each warp's sum is written (sums[global warp]), so no load can be dropped. n counts 16-byte chunks.
static __device__ __forceinline__ void pg_read_body(const uint4 *src, int64_t n, unsigned *sums, int unroll)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned acc = 0;
    for (; i + (unroll - 1) * stride < n; i += unroll * stride) {
        uint4 v[8];
#pragma unroll
        for (int u = 0; u < unroll; u++) v[u] = gk_ld16_nc(src + i + u * stride);
#pragma unroll
        for (int u = 0; u < unroll; u++) acc += v[u].x + v[u].y + v[u].z + v[u].w;
    }
    for (; i < n; i += stride) {
        const uint4 v = gk_ld16_nc(src + i);
        acc += v.x + v.y + v.z + v.w;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if ((threadIdx.x & 31) == 0) sums[((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5] = acc;
}

static __global__ void __launch_bounds__(256) pg_read4_kernel(const uint4 *src, int64_t n, unsigned *sums)
{
    pg_read_body(src, n, sums, 4);
}

static __global__ void __launch_bounds__(256) pg_read8_kernel(const uint4 *src, int64_t n, unsigned *sums)
{
    pg_read_body(src, n, sums, 8);
}

struct PgReadKernel {
    const char *name;
    void (*kernel)(const uint4 *, int64_t, unsigned *);
};
static const PgReadKernel kReadKernels[] = {
    {"read kernel: 16-byte loads, 4 in flight a thread, one resident wave", pg_read4_kernel},
    {"read kernel: 16-byte loads, 8 in flight a thread, one resident wave", pg_read8_kernel},
};
static const int kNumReadKernels = sizeof(kReadKernels) / sizeof(kReadKernels[0]);

// Reads `bytes` (a multiple of 16) at src with read kernel v: one resident wave of 256-thread blocks.
static cudaError_t pg_read_launch(int v, const void *src, size_t bytes, unsigned *sums, cudaStream_t s)
{
    static int grid[kNumReadKernels];
    if (!grid[v]) {
        int per_sm = 0;
        cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kReadKernels[v].kernel, 256, 0);
        if (e != cudaSuccess) return e;
        grid[v] = gk_bench_device().sms * (per_sm > 0 ? per_sm : 1);
    }
    kReadKernels[v].kernel<<<grid[v], 256, 0, s>>>((const uint4 *)src, (int64_t)(bytes / 16), sums);
    return cudaGetLastError();
}

struct PgRead {
    double seconds = 0; // the faster read kernel's median over `bytes`
    int kernel = -1;
};

// The read roof for `bytes`: both read kernels over a buffer of that many bytes from the arena
// (after the row's own buffers), each timed as every row is (L2 flushed, median); the faster one.
static PgRead pg_read_seconds(size_t bytes)
{
    bytes = (size_t)gk_round_up((int64_t)bytes, 16);
    const void *src = gk_bench_alloc(bytes, false); // what it holds does not matter: it is only read
    unsigned *sums = (unsigned *)gk_bench_alloc((size_t)gk_bench_device().sms * 2048 / 32 * 4 * 4, false);
    PgRead r;
    for (int v = 0; v < kNumReadKernels; v++) {
        const double t = gk_bench_median_seconds([&](cudaStream_t s) { return pg_read_launch(v, src, bytes, sums, s); });
        if (r.kernel < 0 || t < r.seconds) r.seconds = t, r.kernel = v;
    }
    return r;
}

// The read roof at 1 GiB: the rate of the faster read kernel; vs_base against cudaMemcpy's rate
// (bytes read + written), so above 1 the device reads faster than it copies.
static void read_kernel_row(benchmark::State &state)
{
    gk_bench_arena_reset();
    const size_t bytes = (size_t)1 << 30;
    const gk_ledger l = {0.0, (double)bytes};
    PgRead r;
    for (auto _ : state) {
        r = pg_read_seconds(bytes);
        gk_bench_report(state, r.seconds, l, gk_bench_device().ffma_flops_per_s,
                        (double)bytes / gk_bench_device().memcpy_bytes_per_s);
    }
    state.SetLabel(std::string("the read roof: ") + kReadKernels[r.kernel < 0 ? 0 : r.kernel].name +
                   " (the faster of 4 and 8 in flight), 1 GiB; vs_base: its rate over cudaMemcpy's (read + write)");
}

// ------------------------------------------------------------------ decode attention

struct DcCase {
    std::string name;
    int batch, max_len; // every sequence max_len tokens, or (mixed) lengths uniform in [nq, max_len]
    bool mixed;
    int hq, hkv, d, nq;
    int cache_dt; // GK_BF16 or GK_E4M3
};

static const float kDcKScale = 0.25f, kDcVScale = 0.125f; // e4m3 cache: stored in [-8, 8)

// The sequences' lengths: the same for every row of a shape (a fixed seed), at least nq.
static std::vector<int> decode_lengths(const DcCase &c)
{
    std::vector<int> lens(c.batch, c.max_len);
    if (c.mixed) {
        std::mt19937_64 rng(0xdec0de5eedull);
        for (int b = 0; b < c.batch; b++) lens[b] = std::max(c.nq, (int)(rng() % (uint64_t)c.max_len) + 1);
    }
    return lens;
}

struct DcBufs {
    gk_bf16 *q, *out;
    float *lse;
    void *k_cache, *v_cache, *ws;
    int *block_table, *seq_lens, *error_flag;
    std::vector<int> lens_h, table_h;
    int num_blocks, max_blocks, max_len;
    int64_t nq_elems, nlse;
    gk_paged_decode_plan plan;
};

static gk_paged_kv decode_cache_of(const DcCase &c, const DcBufs &f)
{
    gk_paged_kv kv = gk_paged_kv_dense(f.k_cache, f.v_cache, c.cache_dt, f.num_blocks, kBlockSize, c.hkv, c.d);
    if (c.cache_dt == GK_E4M3) {
        kv.k_scale = kDcKScale;
        kv.v_scale = kDcVScale;
    }
    return kv;
}

static gk_paged_decode_params decode_params_of(const DcCase &c, const DcBufs &f, bool with_flag)
{
    gk_paged_decode_params p = gk_paged_decode_params_dense(c.batch, c.hq, c.hkv, c.d, c.nq, f.block_table, f.max_blocks,
                                                            f.seq_lens, f.max_len);
    p.host_seq_lens = f.lens_h.data();
    p.error_flag = with_flag ? f.error_flag : NULL;
    return p;
}

// Arena buffers for one decode problem: q and the cache random, out and lse poisoned, the block
// table a shuffled permutation of the cache's blocks, the workspace the plan asks for.
static DcBufs decode_setup(const DcCase &c, std::string *why_failed)
{
    gk_bench_arena_reset();
    DcBufs f;
    f.lens_h = decode_lengths(c);
    f.max_len = *std::max_element(f.lens_h.begin(), f.lens_h.end());
    f.max_blocks = (int)gk_ceil_div(f.max_len, kBlockSize);
    f.num_blocks = 0;
    for (int l : f.lens_h) f.num_blocks += (int)gk_ceil_div(l, kBlockSize);
    std::vector<int> perm(f.num_blocks);
    for (int i = 0; i < f.num_blocks; i++) perm[i] = i;
    std::mt19937_64 rng(0xb10c7ab1eull + (uint64_t)c.batch * 131 + (uint64_t)c.max_len);
    std::shuffle(perm.begin(), perm.end(), rng);
    f.table_h.assign((size_t)c.batch * f.max_blocks, 0);
    for (int b = 0, next = 0; b < c.batch; b++)
        for (int i = 0; i < gk_ceil_div(f.lens_h[b], kBlockSize); i++) f.table_h[(size_t)b * f.max_blocks + i] = perm[next++];

    const int64_t ncache = (int64_t)f.num_blocks * kBlockSize * c.hkv * c.d;
    const int es = gk_dtype_size(c.cache_dt);
    f.nq_elems = (int64_t)c.batch * c.nq * c.hq * c.d;
    f.nlse = (int64_t)c.batch * c.hq * c.nq;
    f.q = (gk_bf16 *)gk_bench_alloc(f.nq_elems * 2, false);
    f.out = (gk_bf16 *)gk_bench_alloc(f.nq_elems * 2);
    f.lse = (float *)gk_bench_alloc(f.nlse * 4);
    f.k_cache = gk_bench_alloc(ncache * es, false);
    f.v_cache = gk_bench_alloc(ncache * es, false);
    f.block_table = (int *)gk_bench_alloc(f.table_h.size() * sizeof(int), false);
    f.seq_lens = (int *)gk_bench_alloc(c.batch * sizeof(int), false);
    f.error_flag = (int *)gk_bench_alloc(sizeof(int), false);
    gk_bench_fill_random(f.q, GK_BF16, f.nq_elems, -2.0f, 2.0f);
    if (c.cache_dt == GK_E4M3) {
        gk_bench_fill_random(f.k_cache, GK_E4M3, ncache, -8.0f, 8.0f);
        gk_bench_fill_random(f.v_cache, GK_E4M3, ncache, -8.0f, 8.0f);
    } else {
        gk_bench_fill_random(f.k_cache, GK_BF16, ncache, -2.0f, 2.0f);
        gk_bench_fill_random(f.v_cache, GK_BF16, ncache, -1.0f, 1.0f);
    }
    GK_BENCH_CUDA(cudaMemcpy(f.block_table, f.table_h.data(), f.table_h.size() * sizeof(int), cudaMemcpyHostToDevice));
    GK_BENCH_CUDA(cudaMemcpy(f.seq_lens, f.lens_h.data(), c.batch * sizeof(int), cudaMemcpyHostToDevice));
    GK_BENCH_CUDA(cudaMemset(f.error_flag, 0, sizeof(int)));
    const gk_paged_decode_params p = decode_params_of(c, f, false);
    const gk_paged_kv kv = decode_cache_of(c, f);
    f.plan = gk_paged_decode_plan_for(&p, &kv);
    if (f.plan.config < 0) *why_failed = std::string("gk_paged_decode_plan_for refused the problem: ") + gk_failure_reason();
    f.ws = f.plan.workspace_bytes ? gk_bench_alloc(f.plan.workspace_bytes, false) : nullptr;
    return f;
}

static cudaError_t decode_launch(const DcCase &c, const DcBufs &f, gk_bf16 *out, float *lse, bool with_flag,
                                 cudaStream_t s)
{
    const gk_paged_decode_params p = decode_params_of(c, f, with_flag);
    const gk_paged_kv kv = decode_cache_of(c, f);
    return gk_paged_decode_bf16(out, lse, f.q, &kv, &p, f.ws, f.ws ? f.plan.workspace_bytes : 0, s);
}

// out: bf16 rounding (2^-9 relative) and P rounded to 16 bits before P V (2^-9 of sum p |v|, |v| < 1)
static const double kDcOutAtol = 1.0 / 256, kDcOutRtol = 1.0 / 128, kDcLseAtol = 4e-3;

struct DcCheck {
    double max_err = 0, max_lse_err = 0;
    int rows = 0; // (sequence, head, query) rows compared
    std::string first_miss;
};

// The sampled sequences: first, last, longest, shortest and one random.
static std::vector<int> decode_sample_seqs(const DcCase &c, const std::vector<int> &lens)
{
    std::vector<int> bs = {0, c.batch - 1,
                           (int)(std::max_element(lens.begin(), lens.end()) - lens.begin()),
                           (int)(std::min_element(lens.begin(), lens.end()) - lens.begin()),
                           (int)((0x2545f491u ^ (uint32_t)(c.batch * 7 + c.max_len)) % (uint32_t)c.batch)};
    std::sort(bs.begin(), bs.end());
    bs.erase(std::unique(bs.begin(), bs.end()), bs.end());
    return bs;
}

// One untimed call with lse and the error flag into the poisoned out and lse, then the checks;
// *why_failed says what is wrong (empty: nothing).
static DcCheck decode_run_and_check(const DcCase &c, const DcBufs &f, std::string *why_failed)
{
    DcCheck chk;
    const cudaError_t e = decode_launch(c, f, f.out, f.lse, true, 0);
    if (e != cudaSuccess) {
        *why_failed = std::string(cudaGetErrorString(e)) + ": " + gk_failure_reason();
        return chk;
    }
    GK_BENCH_CUDA(cudaDeviceSynchronize());
    std::string why;
    char buf[320];
    int flag = 0;
    GK_BENCH_CUDA(cudaMemcpy(&flag, f.error_flag, sizeof flag, cudaMemcpyDeviceToHost));
    if (flag) why += "the error flag is set (a block id or a length refused on the device); ";
    const unsigned long long nf_out = gk_bench_count_nonfinite(f.out, GK_BF16, f.nq_elems);
    const unsigned long long nf_lse = gk_bench_count_nonfinite(f.lse, GK_F32, f.nlse);
    if (nf_out || nf_lse) { // every query sees a key (lengths >= nq): every value is finite
        snprintf(buf, sizeof buf, "%llu of %lld outputs and %llu of %lld lse not finite (NaN: never written); ", nf_out,
                 (long long)f.nq_elems, nf_lse, (long long)f.nlse);
        why += buf;
    }

    const int D = c.d, group = c.hq / c.hkv, es = gk_dtype_size(c.cache_dt), f8 = c.cache_dt == GK_E4M3;
    const size_t slot_elems = (size_t)c.hkv * D, block_elems = kBlockSize * slot_elems;
    const double scale = 1.0 / std::sqrt((double)D);
    std::vector<unsigned char> kb(block_elems * es), vb(block_elems * es);
    std::vector<uint16_t> qh((size_t)c.nq * c.hq * D), oh((size_t)c.nq * c.hq * D);
    std::vector<float> lh((size_t)c.hq * c.nq);
    for (int b : decode_sample_seqs(c, f.lens_h)) {
        const int L = f.lens_h[b], nblk = (int)gk_ceil_div(L, kBlockSize);
        const int64_t qoff = (int64_t)b * c.nq * c.hq * D;
        GK_BENCH_CUDA(cudaMemcpy(qh.data(), f.q + qoff, qh.size() * 2, cudaMemcpyDeviceToHost));
        GK_BENCH_CUDA(cudaMemcpy(oh.data(), f.out + qoff, oh.size() * 2, cudaMemcpyDeviceToHost));
        GK_BENCH_CUDA(cudaMemcpy(lh.data(), f.lse + (int64_t)b * c.hq * c.nq, lh.size() * 4, cudaMemcpyDeviceToHost));
        std::vector<int> heads = {0, c.hq - 1, (int)((b * 7u + 3u) % (unsigned)c.hq)};
        std::sort(heads.begin(), heads.end());
        heads.erase(std::unique(heads.begin(), heads.end()), heads.end());
        // the sequence's k and v rows of the kv heads needed, gathered through the block table, decoded
        std::vector<int> kvh;
        for (int h : heads)
            if (std::find(kvh.begin(), kvh.end(), h / group) == kvh.end()) kvh.push_back(h / group);
        std::vector<std::vector<double>> kd(kvh.size(), std::vector<double>((size_t)L * D)),
            vd(kvh.size(), std::vector<double>((size_t)L * D));
        for (int i = 0; i < nblk; i++) {
            const int64_t blk = f.table_h[(size_t)b * f.max_blocks + i];
            GK_BENCH_CUDA(cudaMemcpy(kb.data(), (char *)f.k_cache + blk * block_elems * es, kb.size(), cudaMemcpyDeviceToHost));
            GK_BENCH_CUDA(cudaMemcpy(vb.data(), (char *)f.v_cache + blk * block_elems * es, vb.size(), cudaMemcpyDeviceToHost));
            for (int s = 0; s < kBlockSize && i * kBlockSize + s < L; s++) {
                const int j = i * kBlockSize + s;
                for (size_t n = 0; n < kvh.size(); n++)
                    for (int d = 0; d < D; d++) {
                        const size_t at = s * slot_elems + (size_t)kvh[n] * D + d;
                        double kx, vx;
                        if (f8) {
                            kx = e4m3_bits_to_double(kb[at]) * kDcKScale;
                            vx = e4m3_bits_to_double(vb[at]) * kDcVScale;
                        } else {
                            uint16_t k16, v16;
                            memcpy(&k16, &kb[at * 2], 2);
                            memcpy(&v16, &vb[at * 2], 2);
                            kx = bf16_bits_to_double(k16);
                            vx = bf16_bits_to_double(v16);
                        }
                        kd[n][(size_t)j * D + d] = kx;
                        vd[n][(size_t)j * D + d] = vx;
                    }
            }
        }
        std::vector<double> w(L), ref(D);
        for (int h : heads) {
            const size_t n = std::find(kvh.begin(), kvh.end(), h / group) - kvh.begin();
            for (int i = 0; i < c.nq; i++) {
                const int last = L - c.nq + i; // the query's position: it sees keys 0 .. last
                const uint16_t *q = &qh[((size_t)i * c.hq + h) * D];
                double m = -INFINITY, sum = 0;
                for (int j = 0; j <= last; j++) {
                    double dot = 0;
                    for (int d = 0; d < D; d++) dot += bf16_bits_to_double(q[d]) * kd[n][(size_t)j * D + d];
                    w[j] = dot * scale;
                    m = std::max(m, w[j]);
                }
                for (int j = 0; j <= last; j++) sum += (w[j] = std::exp(w[j] - m));
                std::fill(ref.begin(), ref.end(), 0.0);
                for (int j = 0; j <= last; j++)
                    for (int d = 0; d < D; d++) ref[d] += w[j] * vd[n][(size_t)j * D + d];
                const double lse_ref = m + std::log(sum), lse_gk = lh[(size_t)h * c.nq + i];
                const double lse_err = std::fabs(lse_gk - lse_ref);
                if (!(lse_err <= chk.max_lse_err)) chk.max_lse_err = lse_err; // NaN sticks
                if (!(lse_err <= kDcLseAtol) && chk.first_miss.empty()) {
                    snprintf(buf, sizeof buf, "lse of (sequence %d of length %d, head %d, query %d): gk %.6g, CPU %.6g", b,
                             L, h, i, lse_gk, lse_ref);
                    chk.first_miss = buf;
                }
                for (int d = 0; d < D; d++) {
                    const double r = ref[d] / sum, got = bf16_bits_to_double(oh[((size_t)i * c.hq + h) * D + d]);
                    const double err = std::fabs(got - r);
                    if (!(err <= chk.max_err)) chk.max_err = err;
                    if (!(err <= kDcOutAtol + kDcOutRtol * std::fabs(r)) && chk.first_miss.empty()) {
                        snprintf(buf, sizeof buf, "out (sequence %d of length %d, head %d, query %d, dim %d): gk %.6g, CPU %.6g",
                                 b, L, h, i, d, got, r);
                        chk.first_miss = buf;
                    }
                }
                chk.rows++;
            }
        }
    }
    if (!chk.first_miss.empty()) why += chk.first_miss;
    *why_failed = why;
    return chk;
}

// The plan's configuration and split count through gk_paged_decode_ex must give the dispatcher's
// bits (f.out and f.lse from the checked call): the plan says what the dispatcher runs.
static std::string decode_plan_agrees(const DcCase &c, const DcBufs &f)
{
    gk_bf16 *out2 = (gk_bf16 *)gk_bench_alloc(f.nq_elems * 2);
    float *lse2 = (float *)gk_bench_alloc(f.nlse * 4);
    const gk_paged_decode_params p = decode_params_of(c, f, false);
    const gk_paged_kv kv = decode_cache_of(c, f);
    const cudaError_t e = gk_paged_decode_ex(f.plan.config, f.plan.splits, GK_BF16, out2, lse2, f.q, &kv, &p, f.ws,
                                             f.ws ? f.plan.workspace_bytes : 0, 0);
    if (e != cudaSuccess) return std::string("gk_paged_decode_ex with the plan's configuration and splits: ") + gk_failure_reason();
    GK_BENCH_CUDA(cudaDeviceSynchronize());
    if ((f.nq_elems * 2) % 16 || (f.nlse * 4) % 16) return ""; // the comparison takes 16-byte chunks
    const unsigned long long d_out = gk_bench_count_diff16(out2, f.out, f.nq_elems * 2);
    const unsigned long long d_lse = gk_bench_count_diff16(lse2, f.lse, f.nlse * 4);
    if (d_out || d_lse) {
        char buf[200];
        snprintf(buf, sizeof buf, "the plan's configuration %d and %d splits through gk_paged_decode_ex differ from the "
                 "dispatcher in %llu out and %llu lse 16-byte chunks", f.plan.config, f.plan.splits, d_out, d_lse);
        return buf;
    }
    return "";
}

static std::string decode_config_text(int i)
{
    const gk_paged_decode_config ci = gk_paged_decode_config_info(i);
    char buf[192];
    snprintf(buf, sizeof buf, "cfg %d %s: D %d%s, %d keys a tile, %d stages, %d threads, %d KB smem", i,
             ci.name ? ci.name : "(unknown)", ci.head_dim, ci.fp8 ? " e4m3" : "", ci.keys, ci.stages, ci.threads,
             ci.smem_bytes >> 10);
    return buf;
}

static void decode_row(benchmark::State &state, DcCase c)
{
    std::string why;
    DcBufs f = decode_setup(c, &why);
    DcCheck chk;
    if (why.empty()) chk = decode_run_and_check(c, f, &why);
    if (why.empty()) why = decode_plan_agrees(c, f);
    if (!why.empty()) {
        fprintf(stderr, "gk_bench: %s failed: %s\n", c.name.c_str(), why.c_str());
        failed_rows.push_back(c.name + " (" + why + ")");
        state.SkipWithError(("MISMATCH or error: " + why).c_str());
        return;
    }
    const gk_paged_decode_params p = decode_params_of(c, f, false);
    const gk_ledger l = gk_paged_decode_ledger(&p, GK_BF16, c.cache_dt, f.lens_h.data());
    PgRead rd;
    for (auto _ : state) {
        const double t = gk_bench_median_seconds([&](cudaStream_t s) { return decode_launch(c, f, f.out, NULL, false, s); });
        rd = pg_read_seconds((size_t)l.bytes);
        gk_bench_report(state, t, l, gk_bench_mma_ceiling(), rd.seconds);
        state.counters["read_GBps"] = gk_round_up((int64_t)l.bytes, 16) / rd.seconds * 1e-9;
        state.counters["pct_read"] = 100.0 * rd.seconds / t;
        state.counters["config"] = f.plan.config;
        state.counters["splits"] = f.plan.splits;
        state.counters["err"] = chk.max_err;
        state.counters["lse_err"] = chk.max_lse_err;
    }
    int64_t keys = 0;
    for (int len : f.lens_h) keys += len;
    char buf[640];
    snprintf(buf, sizeof buf,
             "gk_paged_decode_bf16, plan: %s, %d split%s of %d keys, workspace %.2f MiB; cache %s, %d blocks of %d "
             "shuffled, %lld keys (lengths %d .. %d); read roof %.1f GB/s (%s, %.1f MB); check: %d rows vs CPU, max "
             "|err| out %.2g, lse %.2g; the plan's configuration and splits give the same bits",
             decode_config_text(f.plan.config).c_str(), f.plan.splits, f.plan.splits == 1 ? "" : "s", f.plan.split_keys,
             f.plan.workspace_bytes / 1048576.0, c.cache_dt == GK_E4M3 ? "e4m3 (k_scale 1/4, v_scale 1/8)" : "bf16",
             f.num_blocks, kBlockSize, (long long)keys, *std::min_element(f.lens_h.begin(), f.lens_h.end()), f.max_len,
             gk_round_up((int64_t)l.bytes, 16) / rd.seconds * 1e-9, kReadKernels[rd.kernel < 0 ? 0 : rd.kernel].name,
             l.bytes * 1e-6, chk.rows, chk.max_err, chk.max_lse_err);
    state.SetLabel(buf);
}

static void register_decode(const DcCase &base, const char *lname)
{
    DcCase c = base;
    char buf[160];
    snprintf(buf, sizeof buf, "decode_bf16_kv_%s/nq%d/b%d_l%s_hq%d_hkv%d_d%d", c.cache_dt == GK_E4M3 ? "e4m3" : "bf16",
             c.nq, c.batch, lname, c.hq, c.hkv, c.d);
    c.name = buf;
    benchmark::RegisterBenchmark(c.name.c_str(), decode_row, c)->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
}

static void register_decode_rows()
{
    struct Shape {
        int batch, max_len;
        bool mixed;
        const char *lname;
    };
    const Shape shapes[] = {{1, 32768, false, "32768"}, {16, 4096, false, "4096"}, {64, 2048, false, "2048"},
                            {32, 32768, true, "1-32768"}};
    for (int nq : {1, 4})
        for (int cache_dt : {GK_BF16, GK_E4M3}) {
            if (nq > 1 && cache_dt == GK_E4M3) continue; // nq 4: the bf16 shapes
            for (const Shape &s : shapes) register_decode({"", s.batch, s.max_len, s.mixed, 32, 8, 128, nq, cache_dt}, s.lname);
        }
    for (int d : {64, 256}) register_decode({"", 16, 4096, false, 32, 8, d, 1, GK_BF16}, "4096");
}

static void register_all()
{
    gk_bench_register_copy_row();
    benchmark::RegisterBenchmark("read_kernel/1GiB", read_kernel_row)->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
    printf("gk_bench: measured ceiling: mma.sync bf16 %.1f TFLOP/s (the decode rows' FLOP side)\n",
           gk_bench_mma_ceiling() * 1e-12);
    const int tokens[] = {4096, 256, 16, 1};
    for (int cache_dt : {GK_BF16, GK_E4M3})
        for (bool llama31 : {true, false})
            for (int t : tokens) {
                PgCase c = {"", t, 32, 8, 128, cache_dt, llama31};
                char buf[160];
                snprintf(buf, sizeof buf, "rope_append_bf16_kv_%s/%s/t%d_hq%d_hkv%d_d%d",
                         cache_dt == GK_E4M3 ? "e4m3" : "bf16", llama31 ? "llama3.1" : "plain", t, c.hq, c.hkv, c.d);
                c.name = buf;
                benchmark::RegisterBenchmark(c.name.c_str(), run_row, c)
                    ->UseManualTime()
                    ->Iterations(1)
                    ->Unit(benchmark::kMicrosecond);
            }
    register_decode_rows();
}

// Every row runs; then a refused, wrong or unwritten result fails the run (exit status 1).
int main(int argc, char **argv)
{
    const int rc = gk_bench_main(argc, argv, register_all);
    if (rc != 0 || failed_rows.empty()) return rc;
    fprintf(stderr, "gk_bench: FAILED: %zu row(s) refused or differ from the CPU past the tolerance:\n",
            failed_rows.size());
    for (const std::string &r : failed_rows) fprintf(stderr, "  %s\n", r.c_str());
    return 1;
}
