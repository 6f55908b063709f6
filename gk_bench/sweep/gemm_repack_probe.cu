// The odd shape's repack (4095 x 4093 and 4093 x 4097 bf16 operands to 16-byte aligned rows,
// gk_gemm.cuh's gk_gemm_pack_launch) against cudaMemcpy of the same bytes and the driver's 2D
// copy of the same rows, each timed after the sweeps' memset flush; the repacked rows checked
// against a host copy, padding included:
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. gk_bench/sweep/gemm_repack_probe.cu
// (The logs gemm_repack_probe*.txt of 2026-11-30, in the tree at commit 298b7c8, came from an
// earlier form of this file, which also held the candidate kernels; git log has it.)
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"

#include "gk_bench/sweep/sweep_util.h"

#include <cstring>

int main()
{
    const int64_t M = 4095, N = 4097, K = 4093;
    const SweepGemmBuffers m = sweep_gemm_buffers((size_t)256 << 20);
    const void *a = m.a, *b = m.b;
    int64_t lda = K, ldb = N;
    char *ws = m.ws;
    gk_gemm_pack_job j[2];
    j[0] = gk_gemm_pack_job_of(&ws, &a, &lda, M, K, gk_gemm_pack_bytes(M, K, 0));
    j[1] = gk_gemm_pack_job_of(&ws, &b, &ldb, K, N, gk_gemm_pack_bytes(K, N, 0));
    const size_t ws_bytes = (size_t)(ws - m.ws);
    const double bytes = 2.0 * (M * K + K * N) * 2; /* read + write, unpadded */

    CK(cudaMemset(m.ws, 0x5a, ws_bytes));
    CK(gk_gemm_pack_launch("probe", j[0], j[1], (int64_t)1 << 30, 0));
    CK(cudaDeviceSynchronize());
    int bad = 0;
    for (int q = 0; q < 2 && !bad; q++) {
        const int64_t rows = j[q].rows, cols = j[q].cols, ld = j[q].ld, ldp = j[q].ldp;
        std::vector<unsigned short> src((size_t)((rows - 1) * ld + cols)), got((size_t)(rows * ldp));
        CK(cudaMemcpy(src.data(), j[q].src, src.size() * 2, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(got.data(), j[q].dst, got.size() * 2, cudaMemcpyDeviceToHost));
        for (int64_t r = 0; r < rows && !bad; r++)
            for (int64_t c = 0; c < ldp; c++)
                if (got[r * ldp + c] != (c < cols ? src[r * ld + c] : 0)) {
                    printf("MISMATCH operand %d row %lld col %lld\n", q, (long long)r, (long long)c);
                    bad = 1;
                    break;
                }
    }
    const double t_pack = median_s([&] { return gk_gemm_pack_launch("probe", j[0], j[1], (int64_t)1 << 30, 0); });
    const double t_2d = median_s([&] {
        cudaError_t e = cudaMemcpy2DAsync(j[0].dst, j[0].ldp * 2, m.a, K * 2, K * 2, M, cudaMemcpyDeviceToDevice);
        return e != cudaSuccess ? e : cudaMemcpy2DAsync(j[1].dst, j[1].ldp * 2, m.b, N * 2, N * 2, K, cudaMemcpyDeviceToDevice);
    });
    const double t_copy = median_s([&] { return cudaMemcpyAsync(m.d, m.a, (size_t)(bytes / 2), cudaMemcpyDeviceToDevice); });
    printf("repack both operands, %.1f MB read + written (%zu bytes of workspace): %s\n", bytes * 1e-6, ws_bytes,
           bad ? "WRONG" : "every value and padding zero as the host copy");
    printf("  gk_gemm_pack_launch        %7.1f us  %6.0f GB/s\n", t_pack * 1e6, bytes / t_pack * 1e-9);
    printf("  cudaMemcpy2DAsync x 2      %7.1f us  %6.0f GB/s\n", t_2d * 1e6, bytes / t_2d * 1e-9);
    printf("  cudaMemcpyAsync same bytes %7.1f us  %6.0f GB/s\n", t_copy * 1e6, bytes / t_copy * 1e-9);
    return bad;
}
