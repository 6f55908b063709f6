// //gk_bench:attention - gk_attention.cuh's forward pass against the device's own ceilings, all
// measured in this process (cuDNN and FlashAttention-2 through PyTorch: compare/compare_attention.py).
// Row names are <dtype>_<mask>/b<B>_hq<Hq>_hkv<Hkv>_sq<Sq>_sk<Sk>_d<D>/<kernel>; mask full or causal
// (bottom-right aligned), q, k, v and out contiguous [B, S, H, D] (gk_attention_params_dense), lse
// written. Kernels: gk (the dispatcher, gk_attention_fwd_bf16, with the workspace
// gk_attention_workspace_bytes asks for), gk_nows (the dispatcher without a workspace: no key
// splits; decode rows), gk_cfg<i>_<tile> (gk_attention_ex, configuration i, for every i of
// gk_attention_config_count() that runs the shape's D: mma.sync ones built for D or more, wgmma
// ones built for D).
// Every row runs once untimed and is checked before it is timed: out and lse start as NaN and
// must be fully written (finite), and a few sampled query rows (first, last, tile edges, random
// batches and heads) are compared with a CPU computation in double from the same bf16 inputs
// (counter err: max |gk - CPU| over the sampled rows' outputs; lse within 4e-3). A row past the
// tolerance says MISMATCH, and after all rows ran the binary lists those rows and exits with
// status 1. The dispatcher's row also reruns every configuration for the shape and names the ones
// whose out and lse are bit-identical to its own (the kernels are deterministic): its pick.
//   ceilings  mma.sync m16n8k16 bf16 -> fp32 from registers (the peak of the mma.sync rows),
//             wgmma m64n256k16 bf16 -> fp32 from shared memory (sm_90a builds on a compute
//             capability 9.0 GPU: the peak of the wgmma rows); both gk_bench.h's, as the GEMM
//             bench measures them; copy bandwidth (the byte side: the decode rows)
//   ledger    gk_attention_ledger: FLOPs 4 B Hq D times the visible (row, key) pairs (about half
//             under the causal mask), bytes q, k, v and out once each
//   baseline  vs_base = the dispatcher's time for the same shape and mask / this row's time
// A subset: --benchmark_filter=<regex on the row name>, e.g. 'causal/', 'd256', '/gk$', 'sq16_'.
#define GK_IMPLEMENTATION
#include "gk/gk_attention.cuh"
#include "gk_bench/gk_bench.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <thread>

// ------------------------------------------------------------------ one attention problem

struct Shape {
    int b, hq, hkv, sq, sk, d;
};

static gk_attention_params params_of(const Shape &s, int causal)
{
    gk_attention_params p = gk_attention_params_dense(s.b, s.hq, s.hkv, s.d, s.sq, s.sk);
    p.causal = causal;
    return p;
}

static std::string shape_name(const Shape &s, int causal)
{
    char buf[128];
    snprintf(buf, sizeof buf, "bf16_%s/b%d_hq%d_hkv%d_sq%d_sk%d_d%d", causal ? "causal" : "full", s.b, s.hq, s.hkv, s.sq,
             s.sk, s.d);
    return buf;
}

enum Kern { K_GK, K_GK_NOWS, K_CONFIG };

struct Bufs {
    gk_bf16 *q, *k, *v, *out;
    float *lse;
    void *ws;
    size_t ws_bytes;
    int64_t nq, nkv, nlse; // elements of q (and out), of k (and v), of lse
};

// Arena buffers for one problem: q, k, v random (q and k in [-2, 2), v in [-1, 1): logits of
// standard deviation about 1.3 after the 1 / sqrt(D) scale, a softmax neither flat nor one-hot),
// out and lse poisoned (NaN), the workspace the dispatcher asks for.
static Bufs setup(const Shape &s, int causal)
{
    gk_bench_arena_reset();
    const gk_attention_params p = params_of(s, causal);
    Bufs f;
    f.nq = (int64_t)s.b * s.sq * s.hq * s.d;
    f.nkv = (int64_t)s.b * s.sk * s.hkv * s.d;
    f.nlse = (int64_t)s.b * s.hq * s.sq;
    f.q = (gk_bf16 *)gk_bench_alloc(f.nq * 2, false);
    f.k = (gk_bf16 *)gk_bench_alloc(f.nkv * 2, false);
    f.v = (gk_bf16 *)gk_bench_alloc(f.nkv * 2, false);
    f.out = (gk_bf16 *)gk_bench_alloc(f.nq * 2);
    f.lse = (float *)gk_bench_alloc(f.nlse * 4);
    f.ws_bytes = gk_attention_workspace_bytes(&p);
    f.ws = f.ws_bytes ? gk_bench_alloc(f.ws_bytes, false) : nullptr;
    gk_bench_fill_random(f.q, GK_BF16, f.nq, -2.0f, 2.0f);
    gk_bench_fill_random(f.k, GK_BF16, f.nkv, -2.0f, 2.0f);
    gk_bench_fill_random(f.v, GK_BF16, f.nkv, -1.0f, 1.0f);
    return f;
}

// One call of a row's kernel into out and lse.
static cudaError_t launch(const Shape &s, int causal, Kern kern, int config, const Bufs &f, gk_bf16 *out, float *lse,
                          cudaStream_t st)
{
    const gk_attention_params p = params_of(s, causal);
    switch (kern) {
    case K_GK: return gk_attention_fwd_bf16(out, f.q, f.k, f.v, lse, &p, f.ws, f.ws_bytes, st);
    case K_GK_NOWS: return gk_attention_fwd_bf16(out, f.q, f.k, f.v, lse, &p, NULL, 0, st);
    default: return gk_attention_ex(config, 0, GK_BF16, out, f.q, f.k, f.v, lse, &p, f.ws, f.ws_bytes, st);
    }
}

// ------------------------------------------------------------------ configurations

// A configuration's tile, from its kernel name (gk_attention_bf16_<tile>), else D, BM x BN.
static std::string config_tile(int c)
{
    const gk_attention_config i = gk_attention_config_info(c);
    const std::string prefix = "gk_attention_bf16_", name = i.name ? i.name : "";
    if (name.compare(0, prefix.size(), prefix) == 0 && name.size() > prefix.size()) return name.substr(prefix.size());
    return "d" + std::to_string(i.head_dim) + "_" + std::to_string(i.bm) + "x" + std::to_string(i.bn);
}

static std::string config_text(int c)
{
    const gk_attention_config i = gk_attention_config_info(c);
    char buf[192];
    snprintf(buf, sizeof buf, "cfg %d %s: %s, D %d, %dx%d, %d threads, %d KB smem", c, config_tile(c).c_str(),
             i.wgmma ? "wgmma" : "mma.sync", i.head_dim, i.bm, i.bn, i.threads, i.smem_bytes >> 10);
    return buf;
}

// Whether configuration c runs head dimension d (the headers' manuals: an mma.sync kernel runs
// any D up to the one it is built for, zero-padded; a wgmma kernel the D it is built for).
static bool config_runs(int c, int d)
{
    const gk_attention_config i = gk_attention_config_info(c);
    return i.name && (i.wgmma ? i.head_dim == d : i.head_dim >= d);
}

// The ceiling of the unit a configuration runs on.
static double config_peak(int c)
{
    return gk_attention_config_info(c).wgmma ? gk_bench_wgmma_ceiling() : gk_bench_mma_ceiling();
}

// ------------------------------------------------------------------ checks


// Tolerance of one output of a sampled row against the CPU in double: bf16 out rounds to 8 bits
// (2^-9 relative), and P goes to bf16 before P V (2^-9 of sum p |v| <= 2^-9, |v| < 1).
static const double kOutAtol = 1.0 / 256, kOutRtol = 1.0 / 128, kLseAtol = 4e-3;

struct Check {
    double max_err = 0, max_lse_err = 0; // over the sampled rows
    unsigned long long nonfinite_out = 0, nonfinite_lse = 0;
    std::string first_miss;               // the first output past the tolerance, if any
    bool ok() const { return first_miss.empty() && nonfinite_out == 0 && nonfinite_lse == 0; }
};

// The query rows a shape's check samples: (b, h, i).
static std::vector<int> sample_rows(const Shape &s)
{
    std::vector<int> rows; // triples
    const int is[] = {0, 1, 63, 64, 127, 128, s.sq / 2, s.sq - 1};
    uint32_t z = 0x9e3779b9u ^ (uint32_t)(s.b * 131 + s.hq * 31 + s.sq * 7 + s.d);
    for (int n = 0; n < (int)(sizeof is / sizeof is[0]); n++) {
        if (is[n] >= s.sq) continue;
        z = z * 1664525u + 1013904223u;
        int b = (int)((z >> 8) % (uint32_t)s.b), h = (int)((z >> 20) % (uint32_t)s.hq);
        if (n == 0) b = 0, h = 0;
        if (is[n] == s.sq - 1) b = s.b - 1, h = s.hq - 1;
        rows.push_back(b);
        rows.push_back(h);
        rows.push_back(is[n]);
    }
    return rows;
}

// out and lse fully written, and the sampled rows against the CPU in double.
static Check check_output(const Shape &s, int causal, const Bufs &f, const gk_bf16 *out, const float *lse)
{
    Check c;
    c.nonfinite_out = gk_bench_count_nonfinite(out, GK_BF16, f.nq);
    c.nonfinite_lse = gk_bench_count_nonfinite(lse, GK_F32, f.nlse);
    const gk_attention_params p = params_of(s, causal);
    const double scale = 1.0 / std::sqrt((double)s.d);
    const std::vector<int> rows = sample_rows(s);
    std::vector<gk_bf16> kh((size_t)s.sk * s.d), vh((size_t)s.sk * s.d), qh(s.d), oh(s.d);
    std::vector<double> w(s.sk);
    for (size_t r = 0; r < rows.size(); r += 3) {
        const int b = rows[r], h = rows[r + 1], i = rows[r + 2], hk = h / (s.hq / s.hkv);
        const int64_t qoff = b * p.q_batch_stride + (int64_t)i * p.q_row_stride + h * p.q_head_stride;
        const int64_t ooff = b * p.out_batch_stride + (int64_t)i * p.out_row_stride + h * p.out_head_stride;
        GK_BENCH_CUDA(cudaMemcpy(qh.data(), f.q + qoff, s.d * 2, cudaMemcpyDeviceToHost));
        GK_BENCH_CUDA(cudaMemcpy(oh.data(), out + ooff, s.d * 2, cudaMemcpyDeviceToHost));
        GK_BENCH_CUDA(cudaMemcpy2D(kh.data(), s.d * 2, f.k + b * p.k_batch_stride + hk * p.k_head_stride,
                                   p.k_row_stride * 2, s.d * 2, s.sk, cudaMemcpyDeviceToHost));
        GK_BENCH_CUDA(cudaMemcpy2D(vh.data(), s.d * 2, f.v + b * p.v_batch_stride + hk * p.v_head_stride,
                                   p.v_row_stride * 2, s.d * 2, s.sk, cudaMemcpyDeviceToHost));
        float lse_gk = 0;
        GK_BENCH_CUDA(cudaMemcpy(&lse_gk, lse + ((int64_t)b * s.hq + h) * s.sq + i, 4, cudaMemcpyDeviceToHost));
        // keys row i sees: j <= i + Sk - Sq under the bottom-right causal mask
        const int last = causal ? std::min(s.sk - 1, i + s.sk - s.sq) : s.sk - 1;
        double m = -INFINITY;
        for (int j = 0; j <= last; j++) {
            double dot = 0;
            for (int d = 0; d < s.d; d++) dot += (double)gk_bf16_to_f32(qh[d]) * gk_bf16_to_f32(kh[(size_t)j * s.d + d]);
            w[j] = dot * scale;
            m = std::max(m, w[j]);
        }
        double sum = 0;
        for (int j = 0; j <= last; j++) sum += (w[j] = std::exp(w[j] - m));
        const double lse_ref = last >= 0 ? m + std::log(sum) : -INFINITY;
        const double lse_err = std::fabs((double)lse_gk - lse_ref);
        if (!(lse_err <= c.max_lse_err)) c.max_lse_err = lse_err;
        if (!(lse_err <= kLseAtol) && c.first_miss.empty()) {
            char buf[160];
            snprintf(buf, sizeof buf, "lse of (b %d, h %d, row %d): gk %.6g, CPU %.6g", b, h, i, lse_gk, lse_ref);
            c.first_miss = buf;
        }
        for (int d = 0; d < s.d; d++) {
            double ref = 0;
            for (int j = 0; j <= last; j++) ref += w[j] * gk_bf16_to_f32(vh[(size_t)j * s.d + d]);
            ref = last >= 0 ? ref / sum : 0.0;
            const double got = gk_bf16_to_f32(oh[d]), err = std::fabs(got - ref);
            if (!(err <= c.max_err)) c.max_err = err; // NaN sticks
            if (!(err <= kOutAtol + kOutRtol * std::fabs(ref)) && c.first_miss.empty()) {
                char buf[160];
                snprintf(buf, sizeof buf, "out (b %d, h %d, row %d, col %d): gk %.6g, CPU %.6g", b, h, i, d, got, ref);
                c.first_miss = buf;
            }
        }
    }
    return c;
}

// ------------------------------------------------------------------ rows

struct Row {
    std::string name;
    Shape sh;
    int causal;
    Kern kern;
    int config; // K_CONFIG: the configuration timed
};

static std::map<std::string, double> gk_seconds;  // the dispatcher's time, by shape_name
static std::vector<std::string> mismatched_rows; // wrong or unwritten outputs: the run fails at the end

static std::map<std::string, std::vector<int>> picks; // by row name of the dispatcher: its bit-identical configurations

// The configurations whose out and lse are bit-identical to the dispatcher's (in f.out, f.lse) on
// this problem, each run with the dispatcher's workspace (with_ws) or none and its own choice of
// key splits; *peak: the ceiling of the unit they run on (the higher one where none matches).
static std::string dispatcher_pick(const Shape &s, int causal, const Bufs &f, bool with_ws, double *peak,
                                   std::vector<int> *same)
{
    const gk_attention_params p = params_of(s, causal);
    gk_bf16 *out2 = (gk_bf16 *)gk_bench_alloc(f.nq * 2);
    float *lse2 = (float *)gk_bench_alloc(f.nlse * 4);
    std::string text;
    double matched_peak = 0, any_peak = 0;
    for (int c = 0; c < gk_attention_config_count(); c++) {
        if (!config_runs(c, s.d)) continue;
        if (gk_attention_config_info(c).wgmma && gk_bench_wgmma_ceiling() <= 0) continue; // cannot run here
        any_peak = std::max(any_peak, config_peak(c));
        GK_BENCH_CUDA(cudaMemset(out2, 0xff, f.nq * 2));
        GK_BENCH_CUDA(cudaMemset(lse2, 0xff, f.nlse * 4));
        if (gk_attention_ex(c, 0, GK_BF16, out2, f.q, f.k, f.v, lse2, &p, with_ws ? f.ws : NULL,
                            with_ws ? f.ws_bytes : 0, 0) != cudaSuccess)
            continue; // refused: its own row says why
        GK_BENCH_CUDA(cudaDeviceSynchronize());
        if ((f.nq * 2) % 16 || (f.nlse * 4) % 16) continue; // the comparison takes 16-byte chunks
        if (gk_bench_count_diff16(out2, f.out, f.nq * 2) == 0 && gk_bench_count_diff16(lse2, f.lse, f.nlse * 4) == 0) {
            text += (text.empty() ? "" : " = ") + config_text(c);
            matched_peak = std::max(matched_peak, config_peak(c));
            same->push_back(c);
        }
    }
    *peak = matched_peak > 0 ? matched_peak : any_peak > 0 ? any_peak : gk_bench_mma_ceiling();
    return text.empty() ? "no configuration gives the same bits" : "same bits as " + text;
}

static void run_row(benchmark::State &state, Row r)
{
    const Shape &s = r.sh;
    const std::string shape = shape_name(s, r.causal);
    const gk_attention_params p = params_of(s, r.causal);
    Bufs f = setup(s, r.causal);
    const gk_attention_config ci = gk_attention_config_info(r.config);
    if (r.kern == K_CONFIG && ci.wgmma && gk_bench_wgmma_ceiling() <= 0) {
        state.SkipWithError("wgmma configuration: needs an sm_90a build on a compute capability 9.0 GPU");
        return;
    }
    // one untimed call, checked: a refusal is a failure (the row's configuration runs this D)
    const cudaError_t e = launch(s, r.causal, r.kern, r.config, f, f.out, f.lse, 0);
    if (e != cudaSuccess) {
        const std::string why = std::string(cudaGetErrorString(e)) + ": " + gk_failure_reason();
        fprintf(stderr, "gk_bench: %s failed: %s\n", r.name.c_str(), why.c_str());
        mismatched_rows.push_back(r.name + " (" + why + ")");
        state.SkipWithError(why.c_str());
        return;
    }
    GK_BENCH_CUDA(cudaDeviceSynchronize());
    const Check chk = check_output(s, r.causal, f, f.out, f.lse);

    double peak = r.kern == K_CONFIG ? config_peak(r.config) : 0;
    std::string label;
    char buf[256];
    switch (r.kern) {
    case K_GK:
        label = "gk_attention_fwd_bf16, dispatcher: " + dispatcher_pick(s, r.causal, f, true, &peak, &picks[r.name]);
        break;
    case K_GK_NOWS:
        label = "gk_attention_fwd_bf16, dispatcher without a workspace (no key splits): " +
                dispatcher_pick(s, r.causal, f, false, &peak, &picks[r.name]);
        break;
    default: {
        label = "gk_attention_ex " + config_text(r.config);
        const auto it = picks.find(shape + "/gk");
        if (it != picks.end()) // the dispatcher's row ran: whether it picked this configuration
            label += std::find(it->second.begin(), it->second.end(), r.config) != it->second.end()
                         ? ", the dispatcher's pick"
                         : ", not picked";
        break;
    }
    }
    if (r.kern != K_GK_NOWS && f.ws_bytes) {
        snprintf(buf, sizeof buf, "; workspace %.1f MiB (key splits)", f.ws_bytes / 1048576.0);
        label += buf;
    }
    const gk_ledger l = gk_attention_ledger(&p, GK_BF16);
    double t = 0;
    // 200 ms idle first, as the GEMM bench does: the H200 lowers its clock near its power limit
    // and recovers when idle, so a row timed right after a heavy one would read low
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    for (auto _ : state) {
        t = gk_bench_median_seconds([&](cudaStream_t st) { return launch(s, r.causal, r.kern, r.config, f, f.out, f.lse, st); });
        if (r.kern == K_GK) {
            gk_seconds[shape] = t;
        } else if (!gk_seconds.count(shape)) { // its dispatcher row was filtered out
            gk_seconds[shape] = gk_bench_median_seconds(
                [&](cudaStream_t st) { return launch(s, r.causal, K_GK, -1, f, f.out, f.lse, st); });
        }
        gk_bench_report(state, t, l, peak, gk_seconds[shape]);
        state.counters["err"] = chk.max_err; // every row has the same counters: one table header
    }
    snprintf(buf, sizeof buf, "; check: %zu rows vs CPU, max |err| out %.2g, lse %.2g", sample_rows(s).size() / 3,
             chk.max_err, chk.max_lse_err);
    label += buf;
    if (!chk.ok()) {
        std::string why = chk.first_miss;
        if (chk.nonfinite_out || chk.nonfinite_lse) {
            snprintf(buf, sizeof buf, "%s%llu of %lld outputs and %llu of %lld lse not finite (NaN: never written)",
                     why.empty() ? "" : "; ", chk.nonfinite_out, (long long)f.nq, chk.nonfinite_lse, (long long)f.nlse);
            why += buf;
        }
        label += ", MISMATCH vs CPU";
        fprintf(stderr, "gk_bench: %s is wrong: %s\n", r.name.c_str(), why.c_str());
        mismatched_rows.push_back(r.name + " (" + why + ")");
    }
    state.SetLabel(label);
}

static void add(const Row &r)
{
    benchmark::RegisterBenchmark(r.name.c_str(), run_row, r)->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
}

// The dispatcher's row, then one row per configuration that runs the shape's D.
static void add_shape(const Shape &s, int causal, bool no_workspace_row)
{
    const std::string base = shape_name(s, causal);
    add({base + "/gk", s, causal, K_GK, -1});
    if (no_workspace_row) add({base + "/gk_nows", s, causal, K_GK_NOWS, -1});
    for (int c = 0; c < gk_attention_config_count(); c++)
        if (config_runs(c, s.d)) add({base + "/gk_cfg" + std::to_string(c) + "_" + config_tile(c), s, causal, K_CONFIG, c});
}

static void register_all()
{
    gk_bench_register_tensor_ceilings(); // mma.sync and wgmma (gk_bench.h)
    printf("gk_bench: %d attention configurations:\n", gk_attention_config_count());
    for (int c = 0; c < gk_attention_config_count(); c++) printf("gk_bench:   %s\n", config_text(c).c_str());

    // prefill and training-forward shapes, bf16, [B, S, H, D]; full and causal
    const Shape shapes[] = {
        {4, 32, 32, 4096, 4096, 128},   // Llama-2-7B-like heads, 4 x 4K
        {16, 16, 16, 1024, 1024, 64},   // D 64, many short sequences
        {2, 16, 16, 16384, 16384, 128}, // long context
        {4, 16, 16, 4096, 4096, 256},   // D 256 (Gemma-like)
        {4, 32, 8, 4096, 4096, 128},    // GQA: Llama-3-8B heads (32 query heads on 8 kv heads)
    };
    for (int causal = 0; causal < 2; causal++)
        for (const Shape &s : shapes) add_shape(s, causal, false);
    // decode-ish: 16 queries on a 32K-token cache, GQA; the dispatcher splits the keys over blocks
    // when given a workspace (FlashDecoding), and the row without one shows what that buys
    const Shape decode = {1, 32, 8, 16, 32768, 128};
    for (int causal = 0; causal < 2; causal++) add_shape(decode, causal, true);
}

// Every row runs; then a wrong or unwritten output fails the run (exit status 1), listing the rows.
int main(int argc, char **argv)
{
    const int rc = gk_bench_main(argc, argv, register_all);
    if (rc != 0 || mismatched_rows.empty()) return rc;
    fprintf(stderr, "gk_bench: FAILED: %zu row(s) failed or differ from the CPU past the tolerance:\n",
            mismatched_rows.size());
    for (const std::string &r : mismatched_rows) fprintf(stderr, "  %s\n", r.c_str());
    return 1;
}
