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
    const int64_t i = 64 * ((int64_t)blockIdx.x * blockDim.x + threadIdx.x);
    const char *p = (const char *)in + i;
    uint4 a = gk_ld16_nc(p), b = gk_ld16_cs(p + 16), c = gk_ld16(p + 32);
    uint2 d = gk_ld8(p + 48), e = gk_ld8_cs(p + 56);
    gk_st16((char *)out + i, a);
    gk_st16_cs((char *)out + i + 16, b);
    gk_st16((char *)out + i + 32, c);
    gk_st8((char *)out2 + i, d);
    gk_st8_cs((char *)out2 + i + 8, e);
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
