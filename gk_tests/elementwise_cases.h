// The elementwise launchers as one table, so host and GPU tests cover every public function.
#ifndef GK_ELEMENTWISE_CASES_H
#define GK_ELEMENTWISE_CASES_H

#include "gk/gk_elementwise.cuh"

// Untyped call: out, a, b (b unused by unary ops), alpha, beta, n.
typedef cudaError_t (*EwCall)(void *out, const void *a, const void *b, float alpha, float beta, int64_t n);

struct EwCase {
    const char *name;
    int op;
    int dt_out, dt0, dt1; // dt1 = -1: unary
    bool in_place;        // residual add: out is also the first input
    EwCall call;
};

#define EW_BIN(fn, TO, T0, T1)                                                                      \
    static cudaError_t call_##fn(void *o, const void *a, const void *b, float, float, int64_t n)    \
    { return fn((TO *)o, (const T0 *)a, (const T1 *)b, n, 0); }
#define EW_AXPBY(fn, T)                                                                             \
    static cudaError_t call_##fn(void *o, const void *a, const void *b, float al, float be, int64_t n) \
    { return fn((T *)o, al, (const T *)a, be, (const T *)b, n, 0); }
#define EW_RES(fn, TO, T1)                                                                          \
    static cudaError_t call_##fn(void *o, const void *, const void *b, float, float, int64_t n)     \
    { return fn((TO *)o, (const T1 *)b, n, 0); }
#define EW_UN(fn, TO, T0)                                                                           \
    static cudaError_t call_##fn(void *o, const void *a, const void *, float, float, int64_t n)     \
    { return fn((TO *)o, (const T0 *)a, n, 0); }

EW_BIN(gk_add_f32, float, float, float)
EW_BIN(gk_add_bf16, gk_bf16, gk_bf16, gk_bf16)
EW_BIN(gk_add_f16, gk_f16, gk_f16, gk_f16)
EW_AXPBY(gk_axpby_f32, float)
EW_AXPBY(gk_axpby_bf16, gk_bf16)
EW_AXPBY(gk_axpby_f16, gk_f16)
EW_RES(gk_residual_add_f32, float, float)
EW_RES(gk_residual_add_bf16, gk_bf16, gk_bf16)
EW_RES(gk_residual_add_f16, gk_f16, gk_f16)
EW_RES(gk_residual_add_f32_bf16, float, gk_bf16)
EW_BIN(gk_swiglu_f32, float, float, float)
EW_BIN(gk_swiglu_bf16, gk_bf16, gk_bf16, gk_bf16)
EW_BIN(gk_swiglu_f16, gk_f16, gk_f16, gk_f16)
EW_UN(gk_gelu_tanh_f32, float, float)
EW_UN(gk_gelu_tanh_bf16, gk_bf16, gk_bf16)
EW_UN(gk_gelu_tanh_f16, gk_f16, gk_f16)
EW_UN(gk_cast_f32_to_bf16, gk_bf16, float)
EW_UN(gk_cast_f32_to_f16, gk_f16, float)
EW_UN(gk_cast_bf16_to_f32, float, gk_bf16)
EW_UN(gk_cast_f16_to_f32, float, gk_f16)
EW_UN(gk_cast_bf16_to_f16, gk_f16, gk_bf16)
EW_UN(gk_cast_f16_to_bf16, gk_bf16, gk_f16)

static const EwCase kEwCases[] = {
    {"add_f32", GK_EW_ADD, GK_F32, GK_F32, GK_F32, false, call_gk_add_f32},
    {"add_bf16", GK_EW_ADD, GK_BF16, GK_BF16, GK_BF16, false, call_gk_add_bf16},
    {"add_f16", GK_EW_ADD, GK_F16, GK_F16, GK_F16, false, call_gk_add_f16},
    {"axpby_f32", GK_EW_AXPBY, GK_F32, GK_F32, GK_F32, false, call_gk_axpby_f32},
    {"axpby_bf16", GK_EW_AXPBY, GK_BF16, GK_BF16, GK_BF16, false, call_gk_axpby_bf16},
    {"axpby_f16", GK_EW_AXPBY, GK_F16, GK_F16, GK_F16, false, call_gk_axpby_f16},
    {"residual_add_f32", GK_EW_RESIDUAL_ADD, GK_F32, GK_F32, GK_F32, true, call_gk_residual_add_f32},
    {"residual_add_bf16", GK_EW_RESIDUAL_ADD, GK_BF16, GK_BF16, GK_BF16, true, call_gk_residual_add_bf16},
    {"residual_add_f16", GK_EW_RESIDUAL_ADD, GK_F16, GK_F16, GK_F16, true, call_gk_residual_add_f16},
    {"residual_add_f32_bf16", GK_EW_RESIDUAL_ADD, GK_F32, GK_F32, GK_BF16, true, call_gk_residual_add_f32_bf16},
    {"swiglu_f32", GK_EW_SWIGLU, GK_F32, GK_F32, GK_F32, false, call_gk_swiglu_f32},
    {"swiglu_bf16", GK_EW_SWIGLU, GK_BF16, GK_BF16, GK_BF16, false, call_gk_swiglu_bf16},
    {"swiglu_f16", GK_EW_SWIGLU, GK_F16, GK_F16, GK_F16, false, call_gk_swiglu_f16},
    {"gelu_tanh_f32", GK_EW_GELU_TANH, GK_F32, GK_F32, -1, false, call_gk_gelu_tanh_f32},
    {"gelu_tanh_bf16", GK_EW_GELU_TANH, GK_BF16, GK_BF16, -1, false, call_gk_gelu_tanh_bf16},
    {"gelu_tanh_f16", GK_EW_GELU_TANH, GK_F16, GK_F16, -1, false, call_gk_gelu_tanh_f16},
    {"cast_f32_to_bf16", GK_EW_CAST, GK_BF16, GK_F32, -1, false, call_gk_cast_f32_to_bf16},
    {"cast_f32_to_f16", GK_EW_CAST, GK_F16, GK_F32, -1, false, call_gk_cast_f32_to_f16},
    {"cast_bf16_to_f32", GK_EW_CAST, GK_F32, GK_BF16, -1, false, call_gk_cast_bf16_to_f32},
    {"cast_f16_to_f32", GK_EW_CAST, GK_F32, GK_F16, -1, false, call_gk_cast_f16_to_f32},
    {"cast_bf16_to_f16", GK_EW_CAST, GK_F16, GK_BF16, -1, false, call_gk_cast_bf16_to_f16},
    {"cast_f16_to_bf16", GK_EW_CAST, GK_BF16, GK_F16, -1, false, call_gk_cast_f16_to_bf16},
};
static const int kNumEwCases = sizeof(kEwCases) / sizeof(kEwCases[0]);

// gk_swiglu_packed_T as one untyped call.
typedef cudaError_t (*EwPackedCall)(void *out, int64_t ldo, const void *x, int64_t ldx, int64_t rows, int64_t d);
#define EW_PACKED(fn, T)                                                                             \
    static cudaError_t call_##fn(void *o, int64_t ldo, const void *x, int64_t ldx, int64_t r, int64_t d) \
    { return fn((T *)o, ldo, (const T *)x, ldx, r, d, 0); }
EW_PACKED(gk_swiglu_packed_f32, float)
EW_PACKED(gk_swiglu_packed_bf16, gk_bf16)
EW_PACKED(gk_swiglu_packed_f16, gk_f16)

struct EwPackedCase {
    const char *name;
    int dt;
    EwPackedCall call;
};
static const EwPackedCase kEwPackedCases[] = {
    {"swiglu_packed_f32", GK_F32, call_gk_swiglu_packed_f32},
    {"swiglu_packed_bf16", GK_BF16, call_gk_swiglu_packed_bf16},
    {"swiglu_packed_f16", GK_F16, call_gk_swiglu_packed_f16},
};

#endif // GK_ELEMENTWISE_CASES_H
