// Does an operand row pitch that is 16-byte but not 128-byte aligned cost the wgmma GEMM? Times
// gk_gemm_bf16 (dispatcher) and cuBLAS on shapes whose K is not a multiple of 64, with lda = ldb =
// K (rows straddle 128-byte lines) and with lda = ldb = K rounded up to 64 (the same product,
// each row starting a line), L2 flushed before each call.
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. gk_bench/sweep/gemm_pitch_probe.cu \
//        -lcublas -o gemm_pitch_probe
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"

#include "gk_bench/sweep/sweep_util.h"
#include "gk_bench/sweep/sweep_cublas.h"

int main()
{
    const size_t bytes = (size_t)1 << 30;
    SweepGemmBuffers buf = sweep_gemm_buffers(bytes);
    const int64_t shapes[][3] = {{8976, 1824, 11240}, {1959, 10552, 552}, {342, 8480, 776}, {7613, 88, 3696},
                                 {8266, 10296, 144}, {2018, 2848, 368}, {4096, 4096, 4040}, {4096, 4096, 4096}};
    for (const auto &sh : shapes) {
        const int64_t m = sh[0], n = sh[1], k = sh[2];
        for (int64_t ld : {k, (k + 63) / 64 * 64}) {
            const gk_gemm_plan pl = gk_gemm_plan_for(m, n, k, 0, ld, 1, ld);
            const double tg = median_s([&] {
                return gk_gemm_bf16(buf.d, GK_BF16, n, (const gk_bf16 *)buf.a, ld, 0, (const gk_bf16 *)buf.b, ld, 1, NULL,
                                    0, NULL, m, n, k, 1.0f, 0.0f, GK_ACT_NONE, buf.ws, bytes, 0);
            });
            const double tc = median_s([&] { return cublas_bf16(buf.d, buf.a, ld, 0, buf.b, ld, 1, (int)m, (int)n, (int)k); });
            printf("%lldx%lldx%lld lda=ldb=%lld (%s): gk %.1f us (%s, splits %d), cuBLAS %.1f us: %.3fx\n", (long long)m,
                   (long long)n, (long long)k, (long long)ld, ld * 2 % 128 ? "rows straddle 128-byte lines" : "128-byte rows",
                   tg * 1e6, gk_gemm_config_info(pl.config).name, pl.splits, tc * 1e6, tc / tg);
        }
    }
    return 0;
}
