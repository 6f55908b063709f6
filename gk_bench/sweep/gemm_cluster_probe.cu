// The 128 x 256 persistent wgmma tile alone and in 2-block clusters sharing B (configurations
// wg128x256x64_s4_pt and _ptc): how many clusters of the latter the GPU holds at once, and both
// timed after the sweeps' memset flush on a few shapes.
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. gk_bench/sweep/gemm_cluster_probe.cu
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"

#include "gk_bench/sweep/sweep_util.h"

int main()
{
    const SweepGemmBuffers m = sweep_gemm_buffers((size_t)8192 * 8192 * 2);
    const int pt = config_named("wg128x256x64_s4_pt"), ptc = config_named("wg128x256x64_s4_ptc");
    const gk_gemm_config f = gk_gemm_config_info(ptc);
    for (int layout = 0; layout < 4; layout++) {
        const void *kern = (const void *)gk_gemm_wg_kernel_table[0][ptc - GK_GEMM_NMMA][layout];
        CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, f.smem_bytes));
        cudaLaunchAttribute attr;
        const cudaLaunchConfig_t lc = gk_cluster_launch_config(&attr, 2, f.threads, f.smem_bytes, 2, 0);
        int count = 0;
        CK(cudaOccupancyMaxActiveClusters(&count, kern, &lc));
        printf("layout %d: %d clusters of 2 blocks (%d threads, %d bytes of shared memory) resident at once\n", layout,
               count, f.threads, f.smem_bytes);
    }
    const struct {
        int64_t m, n, k;
        int tb;
    } rows[] = {{4096, 4096, 4096, 1}, {4096, 4096, 4096, 0}, {8192, 8192, 8192, 1}, {256, 10240, 8192, 1},
                {512, 10240, 8192, 1}, {2048, 4096, 4096, 1}};
    for (const auto &r : rows)
        for (int c : {pt, ptc}) {
            const double t = median_s([&] {
                return gk_gemm_ex(c, 1, GK_BF16, m.d, GK_BF16, r.n, m.a, r.k, 0, m.b, r.tb ? r.k : r.n, r.tb, NULL, 0,
                                  NULL, r.m, r.n, r.k, 1.0f, 0.0f, GK_ACT_NONE, NULL, 0, 0);
            });
            printf("%-22s %lldx%lldx%lld %s: %8.1f us %6.1f TFLOP/s\n", gk_gemm_config_info(c).name + 13,
                   (long long)r.m, (long long)r.n, (long long)r.k, r.tb ? "NT" : "NN", t * 1e6,
                   2.0 * r.m * r.n * r.k / t * 1e-12);
        }
    return 0;
}
