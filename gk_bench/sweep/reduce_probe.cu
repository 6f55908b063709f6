// One launch of each bf16 reduce op and shape named on the command line, for a profiler:
//   nvcc -std=c++17 -O3 -arch=sm_90 -I. gk_bench/sweep/reduce_probe.cu -o probe
//   ncu --clock-control none --metrics ... ./probe softmax:16384x8192 rmsnorm:4096x4096
#define GK_IMPLEMENTATION
#include "gk/gk_reduce.cuh"

#include <cstring>

#include "gk_bench/sweep/sweep_util.h"

int main(int argc, char **argv)
{
    const size_t G = (size_t)1 << 30;
    char *x, *r, *o, *w, *b;
    float *scales;
    CK(cudaMalloc(&x, G));
    CK(cudaMalloc(&r, G));
    CK(cudaMalloc(&o, G));
    CK(cudaMalloc(&w, 1 << 20));
    CK(cudaMalloc(&b, 1 << 20));
    CK(cudaMalloc(&scales, 1 << 20));
    fill<<<2048, 256>>>((unsigned *)x, G / 4, 1);
    fill<<<2048, 256>>>((unsigned *)r, G / 4, 2);
    fill<<<256, 256>>>((unsigned *)w, (1 << 20) / 4, 3);
    fill<<<256, 256>>>((unsigned *)b, (1 << 20) / 4, 4);
    CK(cudaDeviceSynchronize());
    for (int i = 1; i < argc; i++) {
        char op[64];
        long long R, C;
        if (sscanf(argv[i], "%63[a-z_]:%lldx%lld", op, &R, &C) != 3) return 2;
        const gk_bf16 *xx = (const gk_bf16 *)x, *ww = (const gk_bf16 *)w, *bb = (const gk_bf16 *)b;
        gk_bf16 *oo = (gk_bf16 *)o;
        if (!strcmp(op, "rmsnorm")) CK(gk_rmsnorm_bf16(oo, C, xx, C, ww, R, C, 1e-6f, 0));
        else if (!strcmp(op, "layernorm")) CK(gk_layernorm_bf16(oo, C, xx, C, ww, bb, R, C, 1e-6f, 0));
        else if (!strcmp(op, "softmax")) CK(gk_softmax_bf16(oo, C, xx, C, R, C, 1.0f, 0));
        else if (!strcmp(op, "residual_rmsnorm"))
            CK(gk_residual_rmsnorm_bf16(oo, C, (gk_bf16 *)r, (gk_bf16 *)r, C, xx, C, ww, R, C, 1e-6f, 0));
        else if (!strcmp(op, "rmsnorm_quant")) CK(gk_rmsnorm_quant_e4m3_bf16((gk_e4m3 *)o, C, scales, xx, C, ww, R, C, 1e-6f, 0));
        else CK(gk_quant_e4m3_bf16((gk_e4m3 *)o, C, scales, xx, C, R, C, 0));
        CK(cudaDeviceSynchronize());
    }
    return 0;
}
