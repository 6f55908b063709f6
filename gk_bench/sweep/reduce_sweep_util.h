// Shared by the reduce sweeps: the bf16 buffers every op runs on, and one launch of an op.
// Include after gk_reduce.cuh and sweep_util.h.
#ifndef GK_REDUCE_SWEEP_UTIL_H
#define GK_REDUCE_SWEEP_UTIL_H

#include <cstring>

struct RdBuffers {
    char *x, *r, *o, *w, *b; // x, residual, out: 1 GiB each; weight, bias: 1 MiB
    float *scales;
};

// The sweeps' ops, by name, in the order they print.
static const int rd_ops[] = {GK_RD_RMSNORM, GK_RD_LAYERNORM, GK_RD_SOFTMAX, GK_RD_RESIDUAL_RMSNORM,
                             GK_RD_RMSNORM_QUANT, GK_RD_QUANT};
static const char *const rd_names[] = {"rmsnorm", "layernorm", "softmax", "residual_rmsnorm", "rmsnorm_quant", "quant"};

static int rd_op_by_name(const char *name)
{
    for (int k = 0; k < 6; k++)
        if (!strcmp(name, rd_names[k])) return rd_ops[k];
    return -1;
}

static RdBuffers rd_buffers()
{
    const size_t G = (size_t)1 << 30;
    RdBuffers m;
    CK(cudaMalloc(&m.x, G));
    CK(cudaMalloc(&m.r, G));
    CK(cudaMalloc(&m.o, G));
    CK(cudaMalloc(&m.w, 1 << 20));
    CK(cudaMalloc(&m.b, 1 << 20));
    CK(cudaMalloc(&m.scales, 1 << 20));
    fill<<<2048, 256>>>((unsigned *)m.x, G / 4, 1);
    fill<<<2048, 256>>>((unsigned *)m.r, G / 4, 2);
    fill<<<256, 256>>>((unsigned *)m.w, (1 << 20) / 4, 3);
    fill<<<256, 256>>>((unsigned *)m.b, (1 << 20) / 4, 4);
    CK(cudaDeviceSynchronize());
    return m;
}

// One bf16 call of op on [R, C] rows of the buffers (residual forms update r in place).
static cudaError_t rd_launch_bf16(int op, const RdBuffers &m, int64_t R, int64_t C)
{
#ifdef RD_SWEEP_NO_WEIGHTS /* probe: the norms without weight and bias reads */
    const gk_bf16 *x = (const gk_bf16 *)m.x, *w = NULL, *b = NULL;
#else
    const gk_bf16 *x = (const gk_bf16 *)m.x, *w = (const gk_bf16 *)m.w, *b = (const gk_bf16 *)m.b;
#endif
    gk_bf16 *o = (gk_bf16 *)m.o, *r = (gk_bf16 *)m.r;
    switch (op) {
    case GK_RD_RMSNORM: return gk_rmsnorm_bf16(o, C, x, C, w, R, C, 1e-6f, 0);
    case GK_RD_LAYERNORM: return gk_layernorm_bf16(o, C, x, C, w, b, R, C, 1e-6f, 0);
    case GK_RD_SOFTMAX: return gk_softmax_bf16(o, C, x, C, R, C, 1.0f, 0);
    case GK_RD_RESIDUAL_RMSNORM: return gk_residual_rmsnorm_bf16(o, C, r, r, C, x, C, w, R, C, 1e-6f, 0);
    case GK_RD_RMSNORM_QUANT: return gk_rmsnorm_quant_e4m3_bf16((gk_e4m3 *)m.o, C, m.scales, x, C, w, R, C, 1e-6f, 0);
    default: return gk_quant_e4m3_bf16((gk_e4m3 *)m.o, C, m.scales, x, C, R, C, 0);
    }
}

#endif // GK_REDUCE_SWEEP_UTIL_H
