// Quick GPU self-check of the bf16 reduce ops against a double CPU reference, for the shapes the
// sweep times and a few ragged ones (every kernel variant, cluster splits included), with a NaN
// row and an all -inf row. Plain nvcc: nvcc -std=c++17 -O3 -arch=sm_90 -I. reduce_check.cu
#define GK_IMPLEMENTATION
#include "gk/gk_reduce.cuh"

#include <cmath>

#include "gk_bench/sweep/sweep_util.h"

static float bf(gk_bf16 v) { return gk_bf16_to_f32(v); }

int main()
{
    const int64_t shapes[][2] = {{2048, 8192}, {4096, 4096}, {65536, 128}, {1024, 65536}, {64, 262144},
                                 {100, 40000}, {7, 300000}, {33, 70001}, {5, 24576}, {300, 13}};
    const char *names[] = {"rmsnorm", "layernorm", "softmax", "residual_rmsnorm", "rmsnorm_quant", "quant"};
    size_t maxn = (size_t)1 << 28;
    gk_bf16 *x, *o, *r, *w, *b;
    float *sc;
    CK(cudaMalloc(&x, maxn));
    CK(cudaMalloc(&o, maxn));
    CK(cudaMalloc(&r, maxn));
    CK(cudaMalloc(&w, 1 << 20));
    CK(cudaMalloc(&b, 1 << 20));
    CK(cudaMalloc(&sc, 1 << 20));
    int failures = 0;
    for (const auto &s : shapes) {
        const int64_t R = s[0], C = s[1], n = R * C;
        std::vector<gk_bf16> hx(n), hw(C), hb(C), hr(n), ho(n), hro(n);
        std::vector<float> hs(R);
        unsigned st = 12345u + (unsigned)C;
        auto rnd = [&] { st = st * 1664525u + 1013904223u; return ((st >> 8) & 0xffff) / 65536.0f * 4.0f - 2.0f; };
        for (auto &v : hx) v = gk_f32_to_bf16(rnd());
        for (auto &v : hw) v = gk_f32_to_bf16(rnd());
        for (auto &v : hb) v = gk_f32_to_bf16(rnd());
        for (auto &v : hr) v = gk_f32_to_bf16(rnd());
        if (R > 3) {
            hx[1 * C + C / 3] = gk_f32_to_bf16(NAN);
            for (int64_t j = 0; j < C; j++) hx[2 * C + j] = gk_f32_to_bf16(-INFINITY);
        }
        CK(cudaMemcpy(x, hx.data(), n * 2, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(w, hw.data(), C * 2, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(b, hb.data(), C * 2, cudaMemcpyHostToDevice));
        for (int k = 0; k < 6; k++) {
            CK(cudaMemcpy(r, hr.data(), n * 2, cudaMemcpyHostToDevice));
            CK(cudaMemset(o, 0xff, n * 2));
            cudaError_t e;
            switch (k) {
            case 0: e = gk_rmsnorm_bf16(o, C, x, C, w, R, C, 1e-5f, 0); break;
            case 1: e = gk_layernorm_bf16(o, C, x, C, w, b, R, C, 1e-5f, 0); break;
            case 2: e = gk_softmax_bf16(o, C, x, C, R, C, 1.0f, 0); break;
            case 3: e = gk_residual_rmsnorm_bf16(o, C, r, r, C, x, C, w, R, C, 1e-5f, 0); break;
            case 4: e = gk_rmsnorm_quant_e4m3_bf16((gk_e4m3 *)o, C, sc, x, C, w, R, C, 1e-5f, 0); break;
            default: e = gk_quant_e4m3_bf16((gk_e4m3 *)o, C, sc, x, C, R, C, 0); break;
            }
            CK(e);
            CK(cudaDeviceSynchronize());
            const int quant = k >= 4;
            CK(cudaMemcpy(ho.data(), o, n * (quant ? 1 : 2), cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(hro.data(), r, n * 2, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(hs.data(), sc, R * 4, cudaMemcpyDeviceToHost));
            const unsigned char *q8 = (const unsigned char *)ho.data();
            long bad = 0;
            double worst = 0;
            std::vector<double> in(C), y(C);
            for (int64_t i = 0; i < R; i++) {
                const int special = R > 3 && (i == 1 || i == 2);
                if (special && k != 2 && i == 2) continue; // -inf rows: softmax only
                for (int64_t j = 0; j < C; j++) {
                    in[j] = bf(hx[i * C + j]);
                    if (k == 3) {
                        in[j] = bf(gk_f32_to_bf16((float)(bf(hr[i * C + j]) + in[j])));
                        if (!special && bf(hro[i * C + j]) != (float)in[j]) bad++;
                    }
                }
                double s1 = 0, s2 = 0, m = -INFINITY;
                for (int64_t j = 0; j < C; j++) { s1 += in[j]; s2 += in[j] * in[j]; m = std::fmax(m, in[j]); }
                const double mean = s1 / C, var = s2 / C - mean * mean;
                double se = 0;
                for (int64_t j = 0; j < C; j++) se += std::exp(in[j] - m);
                double amax = 0;
                for (int64_t j = 0; j < C; j++) {
                    switch (k) {
                    case 1: y[j] = (in[j] - mean) / std::sqrt(var + 1e-5) * bf(hw[j]) + bf(hb[j]); break;
                    case 2: y[j] = m == -INFINITY ? 0.0 : std::exp(in[j] - m) / se; break;
                    case 5: y[j] = in[j]; break;
                    default: y[j] = in[j] / std::sqrt(s2 / C + 1e-5) * bf(hw[j]);
                    }
                    if (!std::isnan(y[j])) amax = std::fmax(amax, std::fabs(y[j]));
                }
                const double qs = amax > 0 ? amax / 448 : 1;
                for (int64_t j = 0; j < C; j++) {
                    double g;
                    if (quant) g = gk_e4m3_to_f32((gk_e4m3)q8[i * C + j]) * hs[i];
                    else g = bf(ho[i * C + j]);
                    // quantization alone mixes no values: only the NaN itself stays NaN
                    const int want_nan = i == 1 && R > 3 && (k != 5 || j == C / 3);
                    if (want_nan) { bad += !std::isnan(g); continue; }
                    const double err = std::fabs(g - y[j]);
                    const double tol = quant ? 0.125 * std::fabs(y[j]) + qs * 0x1p-9 : 1e-3 + 1.6e-2 * std::fabs(y[j]);
                    if (!(err <= tol)) bad++;
                    if (std::fabs(y[j]) > 1e-3) worst = std::fmax(worst, err / std::fabs(y[j]));
                }
            }
            if (bad) failures++;
            printf("%-17s %6lldx%-7lld %s (worst rel %.2e, %ld bad)\n", names[k], (long long)R, (long long)C, bad ? "FAIL" : "ok", worst, bad);
        }
    }
    printf(failures ? "CHECK FAILED\n" : "all ok\n");
    return failures != 0;
}
