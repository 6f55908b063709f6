// Every gk_reduce.cuh launcher as one untyped call, so host and GPU tests cover them all.
#ifndef GK_REDUCE_CASES_H
#define GK_REDUCE_CASES_H

#include "gk/gk_reduce.cuh"

struct RdArgs {
    void *out = nullptr;
    int64_t ldo = 0;
    const void *x = nullptr;
    int64_t ldx = 0;
    const void *w = nullptr, *b = nullptr;
    void *res_out = nullptr;
    const void *res = nullptr;
    int64_t ldr = 0;
    float *scales = nullptr;
    int64_t rows = 0, cols = 0;
    float eps = 1e-5f, scale = 1.0f;
};

typedef cudaError_t (*RdCall)(const RdArgs &a);

#define RD_CALLS(T, tag)                                                                                        \
    static cudaError_t rd_rmsnorm_##tag(const RdArgs &a)                                                        \
    { return gk_rmsnorm_##tag((T *)a.out, a.ldo, (const T *)a.x, a.ldx, (const T *)a.w, a.rows, a.cols, a.eps, 0); } \
    static cudaError_t rd_layernorm_##tag(const RdArgs &a)                                                      \
    {                                                                                                           \
        return gk_layernorm_##tag((T *)a.out, a.ldo, (const T *)a.x, a.ldx, (const T *)a.w, (const T *)a.b,    \
                                  a.rows, a.cols, a.eps, 0);                                                    \
    }                                                                                                           \
    static cudaError_t rd_softmax_##tag(const RdArgs &a)                                                        \
    { return gk_softmax_##tag((T *)a.out, a.ldo, (const T *)a.x, a.ldx, a.rows, a.cols, a.scale, 0); }          \
    static cudaError_t rd_log_softmax_##tag(const RdArgs &a)                                                    \
    { return gk_log_softmax_##tag((T *)a.out, a.ldo, (const T *)a.x, a.ldx, a.rows, a.cols, a.scale, 0); }      \
    static cudaError_t rd_residual_rmsnorm_##tag(const RdArgs &a)                                               \
    {                                                                                                           \
        return gk_residual_rmsnorm_##tag((T *)a.out, a.ldo, (T *)a.res_out, (const T *)a.res, a.ldr,          \
                                         (const T *)a.x, a.ldx, (const T *)a.w, a.rows, a.cols, a.eps, 0);     \
    }                                                                                                           \
    static cudaError_t rd_rmsnorm_quant_##tag(const RdArgs &a)                                                  \
    {                                                                                                           \
        return gk_rmsnorm_quant_e4m3_##tag((gk_e4m3 *)a.out, a.ldo, a.scales, (const T *)a.x, a.ldx,           \
                                           (const T *)a.w, a.rows, a.cols, a.eps, 0);                           \
    }                                                                                                           \
    static cudaError_t rd_quant_##tag(const RdArgs &a)                                                          \
    { return gk_quant_e4m3_##tag((gk_e4m3 *)a.out, a.ldo, a.scales, (const T *)a.x, a.ldx, a.rows, a.cols, 0); }

RD_CALLS(float, f32)
RD_CALLS(gk_bf16, bf16)
RD_CALLS(gk_f16, f16)

struct RdCase {
    const char *name;
    int op, dt;
    RdCall call;
};

#define RD_CASES(tag, dt)                                                                 \
    {"rmsnorm_" #tag, GK_RD_RMSNORM, dt, rd_rmsnorm_##tag},                               \
    {"layernorm_" #tag, GK_RD_LAYERNORM, dt, rd_layernorm_##tag},                         \
    {"softmax_" #tag, GK_RD_SOFTMAX, dt, rd_softmax_##tag},                               \
    {"log_softmax_" #tag, GK_RD_LOG_SOFTMAX, dt, rd_log_softmax_##tag},                   \
    {"residual_rmsnorm_" #tag, GK_RD_RESIDUAL_RMSNORM, dt, rd_residual_rmsnorm_##tag},    \
    {"rmsnorm_quant_e4m3_" #tag, GK_RD_RMSNORM_QUANT, dt, rd_rmsnorm_quant_##tag},        \
    {"quant_e4m3_" #tag, GK_RD_QUANT, dt, rd_quant_##tag}

static const RdCase kRdCases[] = {RD_CASES(f32, GK_F32), RD_CASES(bf16, GK_BF16), RD_CASES(f16, GK_F16)};
static const int kNumRdCases = sizeof(kRdCases) / sizeof(kRdCases[0]);

static inline bool rd_is_quant(int op) { return op == GK_RD_RMSNORM_QUANT || op == GK_RD_QUANT; }

#endif // GK_REDUCE_CASES_H
