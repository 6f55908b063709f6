/* gk_elementwise.cuh - gk elementwise v0.1: vector add, axpby, residual add, SwiGLU, tanh-GELU
   and casts, for fp32, bf16 and fp16, at the memory-bandwidth limit.

   Needs gk_core.cuh (same folder). In ONE .cu file of your program:
       #define GK_IMPLEMENTATION      (or GK_ELEMENTWISE_IMPLEMENTATION for this header alone)
       #include "gk_elementwise.cuh"
   Other files include it without the define and see the declarations. GK_STATIC makes every
   launcher static, for programs of one translation unit.

   PUBLIC FUNCTIONS (T in f32, bf16, f16; pointers to device memory; n elements; the stream
   is used as given; nothing is allocated or synchronized; math is fp32, rounded once to T)
     gk_add_T(out, a, b, n, stream)                   out = a + b
     gk_axpby_T(out, alpha, x, beta, y, n, stream)    out = alpha * x + beta * y
     gk_residual_add_T(residual, x, n, stream)        residual += x  (in place)
     gk_residual_add_f32_bf16(residual, x, n, stream) fp32 residual stream += bf16 branch
     gk_swiglu_T(out, gate, up, n, stream)            out = silu(gate) * up, silu(g) = g / (1 + e^-g)
     gk_swiglu_packed_T(out, ldo, x, ldx, rows, d, stream)
                                                      out[r][c] = silu(x[r][c]) * x[r][d + c],
                                                      0 <= c < d: gate and up are the two halves
                                                      of each row of x (row strides in elements)
     gk_gelu_tanh_T(out, x, n, stream)                0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
     gk_cast_A_to_B(out, in, n, stream)               A, B in f32, bf16, f16, A != B
     gk_elementwise_ledger(op, dt_out, dt_in, n_in, n)   bytes and FLOPs of one call

   ARGUMENTS AND ERRORS
     n == 0 (rows == 0 or d == 0) is a no-op returning cudaSuccess; pointers are not inspected
     then, so empty framework tensors (whose data pointer may be null) pass. Null pointers,
     negative sizes, sizes whose bytes pass 2^63, pointers not aligned to their element size,
     strides smaller than a row, and outputs that partially overlap an input return
     cudaErrorInvalidValue before any launch; gk_failure_reason() names the function and the
     argument. An output identical to a same-dtype input (in place) is allowed.

   HOW IT RUNS
     One grid-stride kernel per op and dtype: 256 threads, 64-bit indices (safe past 2^31
     elements), the grid enough blocks to cover the work once, capped at GK_EW_BLOCKS_PER_SM
     blocks per multiprocessor (gk_grid_size). The body moves chunks of 16 bytes of the widest
     dtype (8 of a narrower one: a bf16 -> f32 cast reads 8 bytes and writes 16 per chunk),
     GK_EW_UNROLL chunks in flight per thread. Pointers need not be aligned: a scalar head runs
     until every pointer reaches a cache line (or, failing that, a chunk boundary) together, a
     scalar tail finishes; when the pointers' offsets can never line up (say a at +4 bytes, b at
     +8), the whole call runs scalar, GK_EW_SCALAR_BATCH elements in flight per thread.
     gk_swiglu_packed splits each block into teams of threads per row, so narrow rows still
     fill the block; it is vectorized when x, out, d, ldx and ldo are 16-byte multiples.

   CONFIG MACROS (figures: % of copy bandwidth on an H200, gk_bench/RESULTS.md)
     GK_EW_THREADS        threads per block, default 256
     GK_EW_UNROLL         chunks per thread in flight, default 4 (at most 8): the best all-round
                          (the scalar path 98.9, against 92.3 at 2 and 83.6 at 8)
     GK_EW_SCALAR_BATCH   scalar elements per thread in flight on the scalar path, default 8
     GK_EW_STREAMING      0 (default): default caching; 1: .cs (evict-first) loads and stores,
                          which cost 4-7% on every case
     GK_EW_BLOCKS_PER_SM  grid cap in blocks per multiprocessor, default 1024: one pass over the
                          data below 2^27 chunks (add f32 103, one resident wave looping 92-98);
                          past it, threads loop

   THE LEDGER
     bytes = n * (sizeof(out) + n_in * sizeof(in)); flops = n * (1 add, 3 axpby, 1 residual,
     6 swiglu, 9 gelu, 0 cast), counting exp and tanh as one operation. Every op here is
     memory-bound by two orders of magnitude, so the floor is bytes / copy bandwidth.

   DROP-IN EXAMPLE
       #define GK_IMPLEMENTATION
       #include "gk_elementwise.cuh"
       float *a, *b, *c; int64_t n = 1 << 20;
       cudaMalloc(&a, n * 4); cudaMalloc(&b, n * 4); cudaMalloc(&c, n * 4);
       ... fill a and b ...
       if (gk_add_f32(c, a, b, n, 0) != cudaSuccess)
           fprintf(stderr, "%s\n", gk_failure_reason());
       cudaStreamSynchronize(0);
*/
#include "gk_core.cuh"

#ifndef GK_ELEMENTWISE_CUH
#define GK_ELEMENTWISE_CUH

#ifndef GK_EW_THREADS
#define GK_EW_THREADS 256
#endif
#ifndef GK_EW_UNROLL
#define GK_EW_UNROLL 4
#endif
#if GK_EW_UNROLL < 1 || GK_EW_UNROLL > 8
#error "GK_EW_UNROLL must be 1..8: it sizes the per-thread register arrays"
#endif
#ifndef GK_EW_SCALAR_BATCH
#define GK_EW_SCALAR_BATCH 8
#endif
#ifndef GK_EW_STREAMING
#define GK_EW_STREAMING 0
#endif
#ifndef GK_EW_BLOCKS_PER_SM
#define GK_EW_BLOCKS_PER_SM 1024
#endif

typedef enum gk_ew_op {
    GK_EW_ADD = 0,
    GK_EW_AXPBY = 1,
    GK_EW_RESIDUAL_ADD = 2,
    GK_EW_SWIGLU = 3,
    GK_EW_GELU_TANH = 4,
    GK_EW_CAST = 5
} gk_ew_op;

/* ---------------------------------------------------------------- public API */

GK_EXTERN_C_BEGIN

GK_DECL cudaError_t gk_add_f32(float *out, const float *a, const float *b, int64_t n, cudaStream_t stream);
GK_DECL cudaError_t gk_add_bf16(gk_bf16 *out, const gk_bf16 *a, const gk_bf16 *b, int64_t n, cudaStream_t stream);
GK_DECL cudaError_t gk_add_f16(gk_f16 *out, const gk_f16 *a, const gk_f16 *b, int64_t n, cudaStream_t stream);

GK_DECL cudaError_t gk_axpby_f32(float *out, float alpha, const float *x, float beta, const float *y,
                                 int64_t n, cudaStream_t stream);
GK_DECL cudaError_t gk_axpby_bf16(gk_bf16 *out, float alpha, const gk_bf16 *x, float beta, const gk_bf16 *y,
                                  int64_t n, cudaStream_t stream);
GK_DECL cudaError_t gk_axpby_f16(gk_f16 *out, float alpha, const gk_f16 *x, float beta, const gk_f16 *y,
                                 int64_t n, cudaStream_t stream);

GK_DECL cudaError_t gk_residual_add_f32(float *residual, const float *x, int64_t n, cudaStream_t stream);
GK_DECL cudaError_t gk_residual_add_bf16(gk_bf16 *residual, const gk_bf16 *x, int64_t n, cudaStream_t stream);
GK_DECL cudaError_t gk_residual_add_f16(gk_f16 *residual, const gk_f16 *x, int64_t n, cudaStream_t stream);
GK_DECL cudaError_t gk_residual_add_f32_bf16(float *residual, const gk_bf16 *x, int64_t n, cudaStream_t stream);

GK_DECL cudaError_t gk_swiglu_f32(float *out, const float *gate, const float *up, int64_t n, cudaStream_t stream);
GK_DECL cudaError_t gk_swiglu_bf16(gk_bf16 *out, const gk_bf16 *gate, const gk_bf16 *up, int64_t n,
                                   cudaStream_t stream);
GK_DECL cudaError_t gk_swiglu_f16(gk_f16 *out, const gk_f16 *gate, const gk_f16 *up, int64_t n, cudaStream_t stream);

GK_DECL cudaError_t gk_swiglu_packed_f32(float *out, int64_t ldo, const float *x, int64_t ldx, int64_t rows,
                                         int64_t d, cudaStream_t stream);
GK_DECL cudaError_t gk_swiglu_packed_bf16(gk_bf16 *out, int64_t ldo, const gk_bf16 *x, int64_t ldx, int64_t rows,
                                          int64_t d, cudaStream_t stream);
GK_DECL cudaError_t gk_swiglu_packed_f16(gk_f16 *out, int64_t ldo, const gk_f16 *x, int64_t ldx, int64_t rows,
                                         int64_t d, cudaStream_t stream);

GK_DECL cudaError_t gk_gelu_tanh_f32(float *out, const float *x, int64_t n, cudaStream_t stream);
GK_DECL cudaError_t gk_gelu_tanh_bf16(gk_bf16 *out, const gk_bf16 *x, int64_t n, cudaStream_t stream);
GK_DECL cudaError_t gk_gelu_tanh_f16(gk_f16 *out, const gk_f16 *x, int64_t n, cudaStream_t stream);

GK_DECL cudaError_t gk_cast_f32_to_bf16(gk_bf16 *out, const float *in, int64_t n, cudaStream_t stream);
GK_DECL cudaError_t gk_cast_f32_to_f16(gk_f16 *out, const float *in, int64_t n, cudaStream_t stream);
GK_DECL cudaError_t gk_cast_bf16_to_f32(float *out, const gk_bf16 *in, int64_t n, cudaStream_t stream);
GK_DECL cudaError_t gk_cast_f16_to_f32(float *out, const gk_f16 *in, int64_t n, cudaStream_t stream);
GK_DECL cudaError_t gk_cast_bf16_to_f16(gk_f16 *out, const gk_bf16 *in, int64_t n, cudaStream_t stream);
GK_DECL cudaError_t gk_cast_f16_to_bf16(gk_bf16 *out, const gk_f16 *in, int64_t n, cudaStream_t stream);

/* Fewest bytes and the FLOPs of one call over n output elements with n_in inputs of dt_in. */
GK_DECL gk_ledger gk_elementwise_ledger(int op, int dt_out, int dt_in, int n_in, int64_t n);
GK_EXTERN_C_END

/* FLOPs per element of each op (exp and tanh count as one). */
GK_HD int gk_elementwise_flops_per_elem(int op)
{
    switch (op) {
    case GK_EW_ADD: return 1;
    case GK_EW_AXPBY: return 3;
    case GK_EW_RESIDUAL_ADD: return 1;
    case GK_EW_SWIGLU: return 6;     /* neg, exp, add, div, mul, and the product with up */
    case GK_EW_GELU_TANH: return 9;  /* cube (2), fma, scale, add, tanh, add, 2 muls */
    default: return 0;
    }
}

#ifdef __CUDACC__

/* ---------------------------------------------------------------- device building blocks */

/* Kernel arguments, by value. Elements [0, head) and [head + nvec * vec, n) run scalar. */
typedef struct gk_ew_args {
    void *out;
    const void *in0;
    const void *in1; /* unused by unary ops */
    float alpha, beta;
    int64_t n;
    int64_t head; /* elements before every pointer sits on a 16-byte boundary */
    int64_t nvec; /* chunks of vec elements in the vector body */
} gk_ew_args;

/* Elements per chunk: 16 bytes of the widest dtype, so every access instruction of a warp
   covers one contiguous span (512 bytes wide, 256 narrow); chunks of the narrowest dtype stride
   a wider operand's warp accesses by 32 bytes (bf16 -> f32 casts at 62% of copy bandwidth). */
GK_HD int gk_ew_vec(int dt_out, int dt0, int dt1)
{
    int s = gk_dtype_size(dt_out);
    if (gk_dtype_size(dt0) > s) s = gk_dtype_size(dt0);
    if (dt1 >= 0 && gk_dtype_size(dt1) > s) s = gk_dtype_size(dt1);
    return 16 / s;
}

/* A chunk is vec elements: 16 bytes of the widest dtype, 8 of a narrower one. It stays packed
   in registers (uint4; .x and .y for 8 bytes) while in flight and is widened to fp32 only when
   used: half the live registers of loading straight into floats, so more warps fit. */
GK_DEV uint4 gk_ew_load_chunk(const void *p, int64_t i, int dt, int vec)
{
    const char *q = (const char *)p + i * gk_dtype_size(dt);
    if (vec * gk_dtype_size(dt) == 16) return GK_EW_STREAMING ? gk_ld16_cs(q) : gk_ld16(q);
    uint2 h = GK_EW_STREAMING ? gk_ld8_cs(q) : gk_ld8(q);
    return make_uint4(h.x, h.y, 0u, 0u);
}

GK_DEV void gk_ew_store_chunk(void *p, int64_t i, int dt, int vec, const float *s)
{
    char *q = (char *)p + i * gk_dtype_size(dt);
    const uint4 u = gk_pack_f32(s, dt, vec);
    if (vec * gk_dtype_size(dt) == 16) {
        if (GK_EW_STREAMING) gk_st16_cs(q, u);
        else gk_st16(q, u);
    } else {
        if (GK_EW_STREAMING) gk_st8_cs(q, make_uint2(u.x, u.y));
        else gk_st8(q, make_uint2(u.x, u.y));
    }
}

GK_DEV float gk_ew_apply(int op, float x, float y, float alpha, float beta)
{
    switch (op) {
    case GK_EW_ADD:
    case GK_EW_RESIDUAL_ADD: return x + y;
    case GK_EW_AXPBY: return alpha * x + beta * y;
    case GK_EW_SWIGLU: return gk_silu(x) * y;
    case GK_EW_GELU_TANH: return gk_gelu_tanh(x);
    default: return x; /* GK_EW_CAST */
    }
}

/* The whole flat kernel. op and the dtypes are literals after inlining, so the switches fold
   away and the register arrays keep only the slots used. */
GK_DEV void gk_ew_run(const gk_ew_args a, int op, int dt_out, int dt0, int dt1, int unroll)
{
    const int vec = gk_ew_vec(dt_out, dt0, dt1);
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t tail0 = a.head + a.nvec * vec;
    const int64_t nscalar = a.head + (a.n - tail0);

    /* Scalar elements: the head and tail, or everything when the pointers never line up.
       Batches of GK_EW_SCALAR_BATCH loads per thread keep enough bytes in flight. */
    for (int64_t i0 = tid; i0 < nscalar; i0 += stride * GK_EW_SCALAR_BATCH) {
        float x[GK_EW_SCALAR_BATCH], y[GK_EW_SCALAR_BATCH];
#pragma unroll
        for (int u = 0; u < GK_EW_SCALAR_BATCH; u++) {
            int64_t i = i0 + u * stride, e = i < a.head ? i : tail0 + (i - a.head);
            if (i < nscalar) {
                x[u] = gk_load1_f32(a.in0, e, dt0);
                y[u] = dt1 >= 0 ? gk_load1_f32(a.in1, e, dt1) : 0.0f;
            }
        }
#pragma unroll
        for (int u = 0; u < GK_EW_SCALAR_BATCH; u++) {
            int64_t i = i0 + u * stride, e = i < a.head ? i : tail0 + (i - a.head);
            if (i < nscalar) gk_store1_f32(a.out, e, dt_out, gk_ew_apply(op, x[u], y[u], a.alpha, a.beta));
        }
    }

    for (int64_t c0 = tid; c0 < a.nvec; c0 += stride * unroll) {
        uint4 rx[GK_EW_UNROLL], ry[GK_EW_UNROLL];
        /* all loads of the batch first: unroll * (1 or 2) requests in flight */
#pragma unroll
        for (int u = 0; u < unroll; u++) {
            int64_t c = c0 + u * stride;
            if (c < a.nvec) {
                rx[u] = gk_ew_load_chunk(a.in0, a.head + c * vec, dt0, vec);
                if (dt1 >= 0) ry[u] = gk_ew_load_chunk(a.in1, a.head + c * vec, dt1, vec);
            }
        }
#pragma unroll
        for (int u = 0; u < unroll; u++) {
            int64_t c = c0 + u * stride;
            if (c < a.nvec) {
                float x[8], y[8];
                gk_unpack_f32(rx[u], dt0, vec, x);
                if (dt1 >= 0) gk_unpack_f32(ry[u], dt1, vec, y);
#pragma unroll
                for (int k = 0; k < vec; k++)
                    x[k] = gk_ew_apply(op, x[k], dt1 >= 0 ? y[k] : 0.0f, a.alpha, a.beta);
                gk_ew_store_chunk(a.out, a.head + c * vec, dt_out, vec, x);
            }
        }
    }
}

/* Row-wise kernel arguments (gk_swiglu_packed): gate and up are two halves of each input row. */
typedef struct gk_ew_rows_args {
    void *out;
    const void *in;
    int64_t ldo, ldx; /* row strides in elements */
    int64_t rows, d;
    int team;         /* threads per row: a power of two dividing the block */
    int vectorized;   /* d, ldo, ldx and both pointers are 16-byte multiples */
} gk_ew_rows_args;

GK_DEV void gk_ew_rows_run(const gk_ew_rows_args a, int op, int dt_out, int dt_in, int unroll)
{
    const int vec = gk_ew_vec(dt_out, dt_in, -1);
    const int tx = threadIdx.x % a.team, ty = threadIdx.x / a.team;
    const int64_t rows_per_block = blockDim.x / a.team;
    const int64_t rstride = (int64_t)gridDim.y * rows_per_block;
    const int64_t cpr = a.vectorized ? a.d / vec : a.d; /* chunks per row */
    const int64_t cstride = (int64_t)gridDim.x * a.team;
    const int64_t r_first = (int64_t)blockIdx.y * rows_per_block + ty;
    const int64_t c_first = (int64_t)blockIdx.x * a.team + tx;

    if (!a.vectorized) {
        for (int64_t r = r_first; r < a.rows; r += rstride)
            for (int64_t c = c_first; c < cpr; c += cstride) {
                const int64_t xi = r * a.ldx + c;
                float g = gk_load1_f32(a.in, xi, dt_in), u = gk_load1_f32(a.in, xi + a.d, dt_in);
                gk_store1_f32(a.out, r * a.ldo + c, dt_out, gk_ew_apply(op, g, u, 0.0f, 0.0f));
            }
        return;
    }
    for (int64_t r0 = r_first; r0 < a.rows; r0 += rstride * unroll)
        for (int64_t c = c_first; c < cpr; c += cstride) {
            uint4 rg[GK_EW_UNROLL], ru[GK_EW_UNROLL];
#pragma unroll
            for (int k = 0; k < unroll; k++) {
                int64_t r = r0 + k * rstride;
                if (r < a.rows) {
                    rg[k] = gk_ew_load_chunk(a.in, r * a.ldx + c * vec, dt_in, vec);
                    ru[k] = gk_ew_load_chunk(a.in, r * a.ldx + a.d + c * vec, dt_in, vec);
                }
            }
#pragma unroll
            for (int k = 0; k < unroll; k++) {
                int64_t r = r0 + k * rstride;
                if (r < a.rows) {
                    float g[8], u[8];
                    gk_unpack_f32(rg[k], dt_in, vec, g);
                    gk_unpack_f32(ru[k], dt_in, vec, u);
#pragma unroll
                    for (int j = 0; j < vec; j++) g[j] = gk_ew_apply(op, g[j], u[j], 0.0f, 0.0f);
                    gk_ew_store_chunk(a.out, r * a.ldo + c * vec, dt_out, vec, g);
                }
            }
        }
}

/* ---------------------------------------------------------------- generator macros */

/* One flat kernel, name##_kernel, and its untyped launcher name##_launch. dt_in1 is -1 for
   unary ops. */
#define GK_DEFINE_ELEMENTWISE(name, op, dt_out, dt_in0, dt_in1)                                      \
    static __global__ void __launch_bounds__(GK_EW_THREADS) name##_kernel(gk_ew_args a)              \
    {                                                                                                 \
        gk_ew_run(a, op, dt_out, dt_in0, dt_in1, GK_EW_UNROLL);                                      \
    }                                                                                                 \
    static cudaError_t name##_launch(const char *fn, const char *n_out, const char *n_in0,           \
                                     const char *n_in1, void *out, const void *in0, const void *in1,  \
                                     float alpha, float beta, int64_t n, cudaStream_t stream)        \
    {                                                                                                 \
        const char *names[4] = {fn, n_out, n_in0, n_in1};                                             \
        return gk_ew_launch(names, name##_kernel, dt_out, dt_in0, dt_in1, out, in0, in1, alpha, beta, \
                            n, stream);                                                               \
    }

/* One row-wise kernel (gate and up as halves of each row), name##_kernel and name##_launch. */
#define GK_DEFINE_ELEMENTWISE_ROWS(name, op, dt_out, dt_in)                                          \
    static __global__ void __launch_bounds__(GK_EW_THREADS) name##_kernel(gk_ew_rows_args a)         \
    {                                                                                                 \
        gk_ew_rows_run(a, op, dt_out, dt_in, GK_EW_UNROLL);                                          \
    }                                                                                                 \
    static cudaError_t name##_launch(const char *fn, void *out, int64_t ldo, const void *x,          \
                                     int64_t ldx, int64_t rows, int64_t d, cudaStream_t stream)      \
    {                                                                                                 \
        return gk_ew_rows_launch(fn, name##_kernel, dt_out, dt_in, out, ldo, x, ldx, rows, d, stream);  \
    }

#endif /* __CUDACC__ */

#endif /* GK_ELEMENTWISE_CUH */

/* ================================================================ implementation */

#if (defined(GK_IMPLEMENTATION) || defined(GK_ELEMENTWISE_IMPLEMENTATION)) && !defined(GK_ELEMENTWISE_IMPLEMENTED)
#define GK_ELEMENTWISE_IMPLEMENTED

/* The scalar head: the fewest elements after which every pointer sits on a boundary of
   `lines` chunks (a chunk is vec elements: 16 bytes of the widest dtype, 8 of a narrower one),
   trying 8 chunks (128 bytes, a cache line) first, then 4, 2, 1; -1 if even 1 is impossible.
   Line alignment matters: starts 16-byte aligned but off the 128-byte line ran add_f32 at 81%
   of copy bandwidth, against 97% on the line. */
static int64_t gk_ew_head(int vec, const void *out, int dt_out, const void *in0, int dt0, const void *in1, int dt1)
{
    for (int lines = 8; lines >= 1; lines >>= 1)
        for (int h = 0; h < vec * lines; h++) {
            const int64_t m = (int64_t)vec * lines;
            if ((uintptr_t)((const char *)out + (int64_t)h * gk_dtype_size(dt_out)) % (m * gk_dtype_size(dt_out))) continue;
            if ((uintptr_t)((const char *)in0 + (int64_t)h * gk_dtype_size(dt0)) % (m * gk_dtype_size(dt0))) continue;
            if (dt1 >= 0 && (uintptr_t)((const char *)in1 + (int64_t)h * gk_dtype_size(dt1)) % (m * gk_dtype_size(dt1)))
                continue;
            return h;
        }
    return -1;
}

/* names: the public function and its out, in0 and in1 arguments, for failure reasons. */
static cudaError_t gk_ew_launch_checked(const char *const *names, void (*kernel)(gk_ew_args), int dt_out, int dt0,
                                        int dt1, void *out, const void *in0, const void *in1, float alpha, float beta,
                                        int64_t n, cudaStream_t stream)
{
    const char *fn = names[0];
    GK_TRY(gk_check_nonneg(fn, "n", n));
    if (n == 0) return cudaSuccess;
    int64_t bytes = 0;
    GK_TRY(gk_check_span(fn, "n", 1, n, n, 4, &bytes)); /* every operand's bytes fit int64 */
    GK_TRY(gk_check_ptr(fn, names[1], out));
    GK_TRY(gk_check_ptr(fn, names[2], in0));
    if (dt1 >= 0) GK_TRY(gk_check_ptr(fn, names[3], in1));
    GK_TRY(gk_check_elem_aligned(fn, names[1], out, gk_dtype_size(dt_out)));
    GK_TRY(gk_check_elem_aligned(fn, names[2], in0, gk_dtype_size(dt0)));
    if (dt1 >= 0) GK_TRY(gk_check_elem_aligned(fn, names[3], in1, gk_dtype_size(dt1)));
    const int64_t ob = n * gk_dtype_size(dt_out);
    GK_TRY(gk_check_overlap(fn, names[1], out, ob, names[2], in0, n * gk_dtype_size(dt0)));
    if (dt1 >= 0) GK_TRY(gk_check_overlap(fn, names[1], out, ob, names[3], in1, n * gk_dtype_size(dt1)));

    gk_ew_args a;
    a.out = out;
    a.in0 = in0;
    a.in1 = in1;
    a.alpha = alpha;
    a.beta = beta;
    a.n = n;
    const int vec = gk_ew_vec(dt_out, dt0, dt1);
    a.head = gk_ew_head(vec, out, dt_out, in0, dt0, in1, dt1);
    if (a.head < 0 || a.head > n) a.head = 0, a.nvec = 0; /* offsets never line up: all scalar */
    else a.nvec = (n - a.head) / vec;

    const int64_t scalar = gk_ceil_div(n - a.nvec * vec, GK_EW_SCALAR_BATCH);
    const int64_t items = gk_ceil_div(a.nvec, GK_EW_UNROLL);
    int grid = 1;
    GK_TRY(gk_grid_size(items > scalar ? items : scalar, GK_EW_THREADS, GK_EW_BLOCKS_PER_SM, &grid));
    kernel<<<grid, GK_EW_THREADS, 0, stream>>>(a);
    return gk_check_launch(fn);
}

static cudaError_t gk_ew_launch(const char *const *names, void (*kernel)(gk_ew_args), int dt_out, int dt0, int dt1,
                                void *out, const void *in0, const void *in1, float alpha, float beta, int64_t n,
                                cudaStream_t stream)
{
    gk__begin();
    return gk__end(names[0], gk_ew_launch_checked(names, kernel, dt_out, dt0, dt1, out, in0, in1, alpha, beta, n, stream));
}

static int gk_ew_pow2_at_least(int64_t v, int cap)
{
    int t = 1;
    while (t < v && t < cap) t <<= 1;
    return t;
}

static cudaError_t gk_ew_rows_launch_checked(const char *fn, void (*kernel)(gk_ew_rows_args), int dt_out, int dt_in,
                                             void *out, int64_t ldo, const void *x, int64_t ldx, int64_t rows,
                                             int64_t d, cudaStream_t stream)
{
    GK_TRY(gk_check_nonneg(fn, "rows", rows));
    GK_TRY(gk_check_nonneg(fn, "d", d));
    if (rows == 0 || d == 0) return cudaSuccess;
    GK_TRY(gk_check_ptr(fn, "out", out));
    GK_TRY(gk_check_ptr(fn, "x", x));
    const int so = gk_dtype_size(dt_out), si = gk_dtype_size(dt_in);
    GK_TRY(gk_check_elem_aligned(fn, "out", out, so));
    GK_TRY(gk_check_elem_aligned(fn, "x", x, si));
    if (d > INT64_MAX / 4) return gk__fail(cudaErrorInvalidValue, fn, "'d' is %lld, past 2^63 bytes a row", (long long)d);
    if (ldx < 2 * d)
        return gk__fail(cudaErrorInvalidValue, fn, "'ldx' is %lld; a row of x holds 2*d = %lld elements",
                        (long long)ldx, (long long)(2 * d));
    if (ldo < d)
        return gk__fail(cudaErrorInvalidValue, fn, "'ldo' is %lld; a row of out holds d = %lld elements",
                        (long long)ldo, (long long)d);
    int64_t out_bytes = 0, x_bytes = 0;
    GK_TRY(gk_check_span(fn, "out", rows, d, ldo, so, &out_bytes));
    GK_TRY(gk_check_span(fn, "x", rows, 2 * d, ldx, si, &x_bytes));
    GK_TRY(gk_check_overlap(fn, "out", out, out_bytes, "x", x, x_bytes));

    gk_ew_rows_args a;
    a.out = out;
    a.in = x;
    a.ldo = ldo;
    a.ldx = ldx;
    a.rows = rows;
    a.d = d;
    const int vec = gk_ew_vec(dt_out, dt_in, -1);
    a.vectorized = gk_is_aligned(out, vec * so) && gk_is_aligned(x, vec * si) && d % vec == 0 && ldo % vec == 0 &&
                   ldx % vec == 0;
    const int64_t cpr = a.vectorized ? d / vec : d;
    a.team = gk_ew_pow2_at_least(cpr, GK_EW_THREADS);
    const int64_t rows_per_block = GK_EW_THREADS / a.team;

    int wave = 1;
    GK_TRY(gk_grid_size((int64_t)1 << 40, 1, GK_EW_BLOCKS_PER_SM, &wave)); /* the grid cap */
    int64_t gx = gk_ceil_div(cpr, a.team);
    if (gx > wave) gx = wave;
    int64_t gy = gk_ceil_div(rows, rows_per_block * (a.vectorized ? GK_EW_UNROLL : 1));
    int64_t gy_cap = wave / gx > 0 ? wave / gx : 1;
    if (gy > gy_cap) gy = gy_cap;
    if (gy > 65535) gy = 65535;
    dim3 grid((unsigned)gx, (unsigned)gy);
    kernel<<<grid, GK_EW_THREADS, 0, stream>>>(a);
    return gk_check_launch(fn);
}

static cudaError_t gk_ew_rows_launch(const char *fn, void (*kernel)(gk_ew_rows_args), int dt_out, int dt_in,
                                     void *out, int64_t ldo, const void *x, int64_t ldx, int64_t rows, int64_t d,
                                     cudaStream_t stream)
{
    gk__begin();
    return gk__end(fn, gk_ew_rows_launch_checked(fn, kernel, dt_out, dt_in, out, ldo, x, ldx, rows, d, stream));
}

/* The shipped kernels: one per op and dtype combination. */
GK_DEFINE_ELEMENTWISE(gk_ew_add_f32, GK_EW_ADD, GK_F32, GK_F32, GK_F32)
GK_DEFINE_ELEMENTWISE(gk_ew_add_bf16, GK_EW_ADD, GK_BF16, GK_BF16, GK_BF16)
GK_DEFINE_ELEMENTWISE(gk_ew_add_f16, GK_EW_ADD, GK_F16, GK_F16, GK_F16)
GK_DEFINE_ELEMENTWISE(gk_ew_axpby_f32, GK_EW_AXPBY, GK_F32, GK_F32, GK_F32)
GK_DEFINE_ELEMENTWISE(gk_ew_axpby_bf16, GK_EW_AXPBY, GK_BF16, GK_BF16, GK_BF16)
GK_DEFINE_ELEMENTWISE(gk_ew_axpby_f16, GK_EW_AXPBY, GK_F16, GK_F16, GK_F16)
GK_DEFINE_ELEMENTWISE(gk_ew_residual_f32_bf16, GK_EW_RESIDUAL_ADD, GK_F32, GK_F32, GK_BF16)
GK_DEFINE_ELEMENTWISE(gk_ew_swiglu_f32, GK_EW_SWIGLU, GK_F32, GK_F32, GK_F32)
GK_DEFINE_ELEMENTWISE(gk_ew_swiglu_bf16, GK_EW_SWIGLU, GK_BF16, GK_BF16, GK_BF16)
GK_DEFINE_ELEMENTWISE(gk_ew_swiglu_f16, GK_EW_SWIGLU, GK_F16, GK_F16, GK_F16)
GK_DEFINE_ELEMENTWISE(gk_ew_gelu_f32, GK_EW_GELU_TANH, GK_F32, GK_F32, -1)
GK_DEFINE_ELEMENTWISE(gk_ew_gelu_bf16, GK_EW_GELU_TANH, GK_BF16, GK_BF16, -1)
GK_DEFINE_ELEMENTWISE(gk_ew_gelu_f16, GK_EW_GELU_TANH, GK_F16, GK_F16, -1)
GK_DEFINE_ELEMENTWISE(gk_ew_cast_f32_bf16, GK_EW_CAST, GK_BF16, GK_F32, -1)
GK_DEFINE_ELEMENTWISE(gk_ew_cast_f32_f16, GK_EW_CAST, GK_F16, GK_F32, -1)
GK_DEFINE_ELEMENTWISE(gk_ew_cast_bf16_f32, GK_EW_CAST, GK_F32, GK_BF16, -1)
GK_DEFINE_ELEMENTWISE(gk_ew_cast_f16_f32, GK_EW_CAST, GK_F32, GK_F16, -1)
GK_DEFINE_ELEMENTWISE(gk_ew_cast_bf16_f16, GK_EW_CAST, GK_F16, GK_BF16, -1)
GK_DEFINE_ELEMENTWISE(gk_ew_cast_f16_bf16, GK_EW_CAST, GK_BF16, GK_F16, -1)
GK_DEFINE_ELEMENTWISE_ROWS(gk_ew_swiglu_packed_f32, GK_EW_SWIGLU, GK_F32, GK_F32)
GK_DEFINE_ELEMENTWISE_ROWS(gk_ew_swiglu_packed_bf16, GK_EW_SWIGLU, GK_BF16, GK_BF16)
GK_DEFINE_ELEMENTWISE_ROWS(gk_ew_swiglu_packed_f16, GK_EW_SWIGLU, GK_F16, GK_F16)

/* Residual add is add with out == a; it has its own names because in place is its contract. */

GK_EXTERN_C_BEGIN

GK_IMPL gk_ledger gk_elementwise_ledger(int op, int dt_out, int dt_in, int n_in, int64_t n)
{
    gk_ledger l;
    l.bytes = (double)n * (gk_dtype_size(dt_out) + n_in * gk_dtype_size(dt_in));
    l.flops = (double)n * gk_elementwise_flops_per_elem(op);
    return l;
}

GK_IMPL cudaError_t gk_add_f32(float *out, const float *a, const float *b, int64_t n, cudaStream_t s)
{ return gk_ew_add_f32_launch("gk_add_f32", "out", "a", "b", out, a, b, 0.0f, 0.0f, n, s); }
GK_IMPL cudaError_t gk_add_bf16(gk_bf16 *out, const gk_bf16 *a, const gk_bf16 *b, int64_t n, cudaStream_t s)
{ return gk_ew_add_bf16_launch("gk_add_bf16", "out", "a", "b", out, a, b, 0.0f, 0.0f, n, s); }
GK_IMPL cudaError_t gk_add_f16(gk_f16 *out, const gk_f16 *a, const gk_f16 *b, int64_t n, cudaStream_t s)
{ return gk_ew_add_f16_launch("gk_add_f16", "out", "a", "b", out, a, b, 0.0f, 0.0f, n, s); }

GK_IMPL cudaError_t gk_axpby_f32(float *out, float alpha, const float *x, float beta, const float *y, int64_t n,
                                    cudaStream_t s)
{ return gk_ew_axpby_f32_launch("gk_axpby_f32", "out", "x", "y", out, x, y, alpha, beta, n, s); }
GK_IMPL cudaError_t gk_axpby_bf16(gk_bf16 *out, float alpha, const gk_bf16 *x, float beta, const gk_bf16 *y,
                                     int64_t n, cudaStream_t s)
{ return gk_ew_axpby_bf16_launch("gk_axpby_bf16", "out", "x", "y", out, x, y, alpha, beta, n, s); }
GK_IMPL cudaError_t gk_axpby_f16(gk_f16 *out, float alpha, const gk_f16 *x, float beta, const gk_f16 *y,
                                    int64_t n, cudaStream_t s)
{ return gk_ew_axpby_f16_launch("gk_axpby_f16", "out", "x", "y", out, x, y, alpha, beta, n, s); }

GK_IMPL cudaError_t gk_residual_add_f32(float *residual, const float *x, int64_t n, cudaStream_t s)
{ return gk_ew_add_f32_launch("gk_residual_add_f32", "residual", "residual", "x", residual, residual, x, 0.0f, 0.0f, n, s); }
GK_IMPL cudaError_t gk_residual_add_bf16(gk_bf16 *residual, const gk_bf16 *x, int64_t n, cudaStream_t s)
{ return gk_ew_add_bf16_launch("gk_residual_add_bf16", "residual", "residual", "x", residual, residual, x, 0.0f, 0.0f, n, s); }
GK_IMPL cudaError_t gk_residual_add_f16(gk_f16 *residual, const gk_f16 *x, int64_t n, cudaStream_t s)
{ return gk_ew_add_f16_launch("gk_residual_add_f16", "residual", "residual", "x", residual, residual, x, 0.0f, 0.0f, n, s); }
GK_IMPL cudaError_t gk_residual_add_f32_bf16(float *residual, const gk_bf16 *x, int64_t n, cudaStream_t s)
{ return gk_ew_residual_f32_bf16_launch("gk_residual_add_f32_bf16", "residual", "residual", "x", residual, residual, x, 0.0f, 0.0f, n, s); }

GK_IMPL cudaError_t gk_swiglu_f32(float *out, const float *gate, const float *up, int64_t n, cudaStream_t s)
{ return gk_ew_swiglu_f32_launch("gk_swiglu_f32", "out", "gate", "up", out, gate, up, 0.0f, 0.0f, n, s); }
GK_IMPL cudaError_t gk_swiglu_bf16(gk_bf16 *out, const gk_bf16 *gate, const gk_bf16 *up, int64_t n,
                                      cudaStream_t s)
{ return gk_ew_swiglu_bf16_launch("gk_swiglu_bf16", "out", "gate", "up", out, gate, up, 0.0f, 0.0f, n, s); }
GK_IMPL cudaError_t gk_swiglu_f16(gk_f16 *out, const gk_f16 *gate, const gk_f16 *up, int64_t n, cudaStream_t s)
{ return gk_ew_swiglu_f16_launch("gk_swiglu_f16", "out", "gate", "up", out, gate, up, 0.0f, 0.0f, n, s); }

GK_IMPL cudaError_t gk_swiglu_packed_f32(float *out, int64_t ldo, const float *x, int64_t ldx, int64_t rows,
                                            int64_t d, cudaStream_t s)
{ return gk_ew_swiglu_packed_f32_launch("gk_swiglu_packed_f32", out, ldo, x, ldx, rows, d, s); }
GK_IMPL cudaError_t gk_swiglu_packed_bf16(gk_bf16 *out, int64_t ldo, const gk_bf16 *x, int64_t ldx, int64_t rows,
                                             int64_t d, cudaStream_t s)
{ return gk_ew_swiglu_packed_bf16_launch("gk_swiglu_packed_bf16", out, ldo, x, ldx, rows, d, s); }
GK_IMPL cudaError_t gk_swiglu_packed_f16(gk_f16 *out, int64_t ldo, const gk_f16 *x, int64_t ldx, int64_t rows,
                                            int64_t d, cudaStream_t s)
{ return gk_ew_swiglu_packed_f16_launch("gk_swiglu_packed_f16", out, ldo, x, ldx, rows, d, s); }

GK_IMPL cudaError_t gk_gelu_tanh_f32(float *out, const float *x, int64_t n, cudaStream_t s)
{ return gk_ew_gelu_f32_launch("gk_gelu_tanh_f32", "out", "x", "", out, x, 0, 0.0f, 0.0f, n, s); }
GK_IMPL cudaError_t gk_gelu_tanh_bf16(gk_bf16 *out, const gk_bf16 *x, int64_t n, cudaStream_t s)
{ return gk_ew_gelu_bf16_launch("gk_gelu_tanh_bf16", "out", "x", "", out, x, 0, 0.0f, 0.0f, n, s); }
GK_IMPL cudaError_t gk_gelu_tanh_f16(gk_f16 *out, const gk_f16 *x, int64_t n, cudaStream_t s)
{ return gk_ew_gelu_f16_launch("gk_gelu_tanh_f16", "out", "x", "", out, x, 0, 0.0f, 0.0f, n, s); }

GK_IMPL cudaError_t gk_cast_f32_to_bf16(gk_bf16 *out, const float *in, int64_t n, cudaStream_t s)
{ return gk_ew_cast_f32_bf16_launch("gk_cast_f32_to_bf16", "out", "in", "", out, in, 0, 0.0f, 0.0f, n, s); }
GK_IMPL cudaError_t gk_cast_f32_to_f16(gk_f16 *out, const float *in, int64_t n, cudaStream_t s)
{ return gk_ew_cast_f32_f16_launch("gk_cast_f32_to_f16", "out", "in", "", out, in, 0, 0.0f, 0.0f, n, s); }
GK_IMPL cudaError_t gk_cast_bf16_to_f32(float *out, const gk_bf16 *in, int64_t n, cudaStream_t s)
{ return gk_ew_cast_bf16_f32_launch("gk_cast_bf16_to_f32", "out", "in", "", out, in, 0, 0.0f, 0.0f, n, s); }
GK_IMPL cudaError_t gk_cast_f16_to_f32(float *out, const gk_f16 *in, int64_t n, cudaStream_t s)
{ return gk_ew_cast_f16_f32_launch("gk_cast_f16_to_f32", "out", "in", "", out, in, 0, 0.0f, 0.0f, n, s); }
GK_IMPL cudaError_t gk_cast_bf16_to_f16(gk_f16 *out, const gk_bf16 *in, int64_t n, cudaStream_t s)
{ return gk_ew_cast_bf16_f16_launch("gk_cast_bf16_to_f16", "out", "in", "", out, in, 0, 0.0f, 0.0f, n, s); }
GK_IMPL cudaError_t gk_cast_f16_to_bf16(gk_bf16 *out, const gk_f16 *in, int64_t n, cudaStream_t s)
{ return gk_ew_cast_f16_bf16_launch("gk_cast_f16_to_bf16", "out", "in", "", out, in, 0, 0.0f, 0.0f, n, s); }

GK_EXTERN_C_END

#endif /* elementwise implementation */
