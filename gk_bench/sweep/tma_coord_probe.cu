// TMA box start coordinates: one cp.async.bulk.tensor.2d of a 64 x 16 bf16 box (128-byte
// swizzle) at given coordinates of a given 2-D tensor map, reporting whether the launch faults.
// On the H200 an inner coordinate that is not a multiple of 8 values (16 bytes) is an illegal
// instruction, whatever the map's strides: TMA cannot start a box row off a 16-byte boundary,
// so rows of an operand whose leading dimension is not a multiple of 8 cannot be read in place
// (log gk_bench/results/2026-11-30/tma_coord_probe.txt, in the tree at commit 4b6de40). Plain nvcc:
//   nvcc -std=c++17 -O2 -gencode arch=compute_90a,code=sm_90a -I. gk_bench/sweep/tma_coord_probe.cu -o tma_coord_probe
//   ./tma_coord_probe INNER OUTER STRIDE_BYTES C0 C1
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"
#include <cstdio>
#include <cstring>
__global__ void probe(const __grid_constant__ CUtensorMap m, int c0, int c1, unsigned short *out)
{
    __shared__ __align__(1024) unsigned short s[64 * 16];
    __shared__ __align__(8) unsigned long long bar;
    if (threadIdx.x == 0) { gk_mbar_init(&bar, 1); gk_mbar_init_fence(); }
    __syncthreads();
    if (threadIdx.x == 0) {
        gk_mbar_arrive_expect_tx(&bar, sizeof s);
        gk_tma_load_2d(s, &m, &bar, c0, c1);
    }
    gk_mbar_wait(&bar, 0);
    for (int i = threadIdx.x; i < 64 * 16; i += blockDim.x) out[i] = s[i];
}
int main(int argc, char **argv)
{
    int64_t inner = atoll(argv[1]), outer = atoll(argv[2]), stride = atoll(argv[3]); int c0 = atoi(argv[4]), c1 = atoi(argv[5]);
    void *x; unsigned short *out; cudaMalloc(&x, 1 << 26); cudaMalloc(&out, 4096);
    CUtensorMap m;
    cudaError_t e = gk_gemm_tensor_map("probe", &m, x, GK_BF16, outer, inner, stride / 2, 16); /* rows, cols, ld */
    if (e) { printf("encode: %s\n", gk_failure_reason()); return 1; }
    probe<<<1, 128>>>(m, c0, c1, out);
    e = cudaDeviceSynchronize();
    printf("inner %lld outer %lld stride %lld coords %d %d: %s\n", (long long)inner, (long long)outer, (long long)stride, c0, c1, cudaGetErrorString(e));
    return 0;
}
