// //gk_bench:paged - gk_paged.cuh's fused RoPE + paged-cache append against the copy bandwidth
// measured in this process. The step: q [T][Hq][D] rotated in place (q_out = q), k [T][Hkv][D]
// rotated and v copied into a paged cache [num_blocks][16][Hkv][D] at slot_mapping[t].
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
// A subset: --benchmark_filter=<regex on the row name>, e.g. 'kv_e4m3', 'llama3.1', '/t4096_'.
#define GK_IMPLEMENTATION
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

static void register_all()
{
    gk_bench_register_copy_row();
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
