// Contract probe for gk_mma.cuh: every wrapper instantiated, so the PTX shows each instruction.
#include "gk/gk_mma.cuh"

__global__ void gk_probe_mma(const unsigned *ab, const float *c, float *d)
{
    unsigned a[4] = {ab[0], ab[1], ab[2], ab[3]}, b[2] = {ab[4], ab[5]};
    float acc[4] = {c[0], c[1], c[2], c[3]}, out[4];
    gk_mma_m16n8k16_bf16(out, a, b, acc);
    gk_mma_m16n8k16_f16(acc, a, b, out);
    for (int i = 0; i < 4; i++) d[threadIdx.x * 4 + i] = acc[i];
}

// The fp8 MMA: the instruction on compute capability 8.9 and later (sm_90 builds: ptxas lowers it to
// e4m3 -> f16 conversions and f16 MMAs), a trap before.
__global__ void gk_probe_fp8_mma(const unsigned *ab, const float *c, float *d)
{
    unsigned a[4] = {ab[0], ab[1], ab[2], ab[3]}, b[2] = {ab[4], ab[5]};
    float acc[4] = {c[0], c[1], c[2], c[3]}, out[4];
    gk_mma_m16n8k32_e4m3(out, a, b, acc);
    for (int i = 0; i < 4; i++) d[threadIdx.x * 4 + i] = out[i];
}

__global__ void gk_probe_ldmatrix_cp_async(const int4 *g, unsigned *out)
{
    __shared__ __align__(128) unsigned char tile[32 * 128];
    const int lane = threadIdx.x & 31;
    gk_cp_async_16(tile + gk_swizzle_offset(lane / 8, lane % 8, 128), g + lane, 16);
    gk_cp_async_16(tile + 1024 + 16 * lane, g + 32 + lane, lane & 15);
    gk_cp_async_commit();
    gk_cp_async_wait_1();
    gk_cp_async_wait_0();
    __syncthreads();
    unsigned r[16];
    const void *row = tile + gk_swizzle_offset(lane & 7, lane >> 3, 128);
    gk_ldmatrix_x1(r, row);
    gk_ldmatrix_x2(r + 1, row);
    gk_ldmatrix_x4(r + 3, row);
    gk_ldmatrix_x1_trans(r + 7, row);
    gk_ldmatrix_x2_trans(r + 8, row);
    gk_ldmatrix_x4_trans(r + 10, row);
    unsigned s = 0;
    for (int i = 0; i < 14; i++) s ^= r[i];
    out[threadIdx.x] = s;
}
