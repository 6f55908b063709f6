// Contract probe for gk_core.cuh: the header compiles alone, and its device building blocks,
// instantiated in these kernels, compile to the promised instructions with no stack or spills.
#include "gk/gk_core.cuh"

__global__ void gk_probe_reductions(const float *in, float *out)
{
    __shared__ float scratch[32];
    float v = in[blockIdx.x * blockDim.x + threadIdx.x];
    float s = gk_block_sum(gk_warp_sum(v), scratch);
    float m = gk_block_max(gk_warp_max(v), scratch);
    if (threadIdx.x == 0) out[blockIdx.x] = s + m;
}

__global__ void gk_probe_vector_memory(const void *in, void *out, void *out2)
{
    const int64_t i = 16 * ((int64_t)blockIdx.x * blockDim.x + threadIdx.x);
    uint4 a = gk_ld16_nc((const char *)in + i);
    uint4 b = gk_ld16_cs((const char *)in + i + 16);
    gk_st16((char *)out + i, a);
    gk_st16_cs((char *)out2 + i, b);
}

__global__ void gk_probe_conversions(const float *in, gk_bf16 *b, gk_f16 *h, gk_e4m3 *e4, gk_e5m2 *e5)
{
    int i = threadIdx.x;
    float v = in[i];
    b[i] = gk_f32_to_bf16(v);
    h[i] = gk_f32_to_f16(v);
    e4[i] = gk_f32_to_e4m3(v);
    e5[i] = gk_f32_to_e5m2(gk_e4m3_to_f32(e4[i]) + gk_bf16_to_f32(b[i]));
}
