/* gk_core.cuh - gk core v0.2: dtypes, errors, argument validation, 16-byte memory ops,
   warp and block reductions, grid sizing, the ledger.

   Every gk header includes this one, and it includes only CUDA's own headers and the C library.

   WHAT IS INSIDE
     dtypes       gk_bf16, gk_f16, gk_e4m3, gk_e5m2 (fp8 as raw bytes), gk_int4x2 (two signed
                  4-bit values in one byte, low nibble first); enum gk_dtype; gk_dtype_size,
                  gk_dtype_name; host+device conversions gk_<a>_to_<b> (round to nearest even;
                  fp8 saturates to the largest finite value, never inf; NaN stays NaN).
     errors       every gk launcher returns cudaError_t. Bad arguments give
                  cudaErrorInvalidValue before any CUDA call; a CUDA error met on the way (no
                  device, a failed launch) is returned as it is. Either way gk_failure_reason()
                  names the function called and what went wrong, e.g.
                  "gk_add_f32: 'n' is -5; it must be >= 0"; a call that succeeds clears it to "".
                  The reason is kept per host thread.
     validation   gk_check_ptr, gk_check_nonneg, gk_check_positive, gk_check_elem_aligned,
                  gk_check_overlap (same range or disjoint), gk_check_disjoint, gk_check_fits_i32,
                  gk_check_span (bytes of a strided operand, int64 overflow refused),
                  gk_check_stride (non-negative, a multiple of a vector's elements),
                  gk_check_injective (a strided output's rows on distinct addresses),
                  gk_check_mnk (a GEMM's sizes);
                  GK_TRY(expr) returns the first error.
     memory       gk_ld16 / gk_st16, gk_ld8 / gk_st8: one 128- or 64-bit access each, aligned to
                  its size; _cs forms stream (evict-first), gk_ld16_nc takes the read-only path.
     cp.async     gk_cp_async_16(dst, src, bytes) (cp.async.cg, 16 bytes; bytes < 16 zero-fills),
                  gk_cp_async_4 (cp.async.ca, 4 bytes; bytes 0 zero-fills), gk_cp_async_commit,
                  gk_cp_async_wait_0..3 (cp.async.wait_group N), gk_cp_async_wait_all; gk_smem_addr.
     grid deps    gk_grid_dependency_wait, gk_grid_launch_dependents (programmatic dependent
                  launch, sm_90 and later; no-ops before); gk_launch_dependent launches a
                  kernel that way (host).
     elements     gk_load1_f32 / gk_store1_f32 (one element of any float dtype as fp32),
                  gk_unpack_f32 / gk_pack_f32 (a 16- or 8-byte vector of a dtype <-> fp32 values),
                  gk_pack_e4m3 (4 or 8 fp32 values to saturated e4m3 codes).
     reductions   gk_warp_sum, gk_warp_max (shfl.sync.bfly, deterministic butterfly),
                  gk_group_sum, gk_group_max (the same over aligned groups of 2..32 lanes),
                  gk_block_sum, gk_block_max (warp results through 32 floats of shared memory).
     activations  gk_silu, gk_gelu_tanh (fp32, device).
     clusters     gk_cluster_sreg (rank, size, index, count), gk_cluster_sync, gk_cluster_map (mapa: an
                  address in another block's shared memory); gk_cluster_launch_config and
                  gk_clusters_fit (host).
     helpers      gk_ceil_div, gk_round_up, gk_is_aligned, gk_sm_count, gk_grid_size, gk_smem_opt_in.
     ledger       gk_ledger {flops, bytes}; gk_roofline_seconds(ledger, flop/s, byte/s);
                  gk_gemm_ledger(m, n, k, in_dtype, d_dtype, has_c, has_bias), shared by the GEMM
                  headers.

   C, C++ AND FFI
     The declarations (types, enums, structs, the public functions, all with C linkage) parse as
     C11: a C program includes any gk header with CUDA's include folder on its path and links
     an object or shared library that nvcc built from the implementation. bf16 and f16 are then
     opaque 2-byte structs. Device code and everything C++-only are seen by nvcc alone.

   IMPLEMENTATION (stb style)
     Each header declares; its implementation is compiled where a .cu file defines
     GK_IMPLEMENTATION (every header it includes) before including it. gk_core.cuh's part (the
     failure reason, gk_dtype_name, the ledger functions) comes with GK_IMPLEMENTATION or
     GK_CORE_IMPLEMENTATION; where files use the per-header GK_<NAME>_IMPLEMENTATION instead,
     exactly one of them defines GK_CORE_IMPLEMENTATION too.

   CONFIG MACROS (define before including)
     GK_STATIC        every function gk defines becomes static (programs of one translation unit).

   THE LEDGER
     A kernel's floor is T >= max(flops / peak flop/s, bytes / bandwidth). Each family header
     has a host function returning its gk_ledger for a shape; benchmarks divide by measured
     ceilings (copy bandwidth, tensor-core and FFMA rates) to print % of the roofline bound.

   DOES NOT
     allocate, synchronize, or touch the device in validation; pick a device (the current one
     is used); support big-endian hosts.
*/
#ifndef GK_CORE_CUH
#define GK_CORE_CUH

#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#else
#include <cuda_runtime_api.h> /* cudaError_t, cudaStream_t */
#endif
#ifdef __CUDACC__
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#endif

#define GK_VERSION "0.2"

/* GK_DECL / GK_IMPL: the public functions, declared in a header and defined once in its
   implementation section. GK_EXTERN_C_BEGIN / _END: their C linkage. */
#ifdef GK_STATIC
#define GK_DECL static
#define GK_IMPL static
#else
#define GK_DECL extern
#define GK_IMPL
#endif
#ifdef __cplusplus
#define GK_EXTERN_C_BEGIN extern "C" {
#define GK_EXTERN_C_END }
#else
#define GK_EXTERN_C_BEGIN
#define GK_EXTERN_C_END
#endif

/* GK_HD: index arithmetic for host and device (plain static inline outside nvcc); GK_DEV:
   device building blocks; GK_HOST: host helpers of the implementation sections. */
#ifdef __CUDACC__
#define GK_HD static __host__ __device__ __forceinline__
#define GK_DEV static __device__ __forceinline__
#define GK_HOST static inline
#else
#define GK_HD static inline
#endif

/* ---------------------------------------------------------------- dtypes */

#ifdef __cplusplus
typedef __nv_bfloat16 gk_bf16;
typedef __half gk_f16;
#else
typedef struct gk_bf16 { unsigned short bits; } gk_bf16; /* opaque in C: 2 bytes, bf16 bits */
typedef struct gk_f16 { unsigned short bits; } gk_f16;   /* opaque in C: 2 bytes, IEEE half bits */
#endif
typedef unsigned char gk_e4m3;   /* OCP fp8 E4M3: bias 7, max 448, no inf, NaN = S.1111.111 */
typedef unsigned char gk_e5m2;   /* OCP fp8 E5M2: bias 15, max 57344, IEEE-style inf and NaN */
typedef unsigned char gk_int4x2; /* two signed int4 values, element 2i in the low nibble */

typedef enum gk_dtype {
    GK_F32 = 0,
    GK_BF16 = 1,
    GK_F16 = 2,
    GK_E4M3 = 3,
    GK_E5M2 = 4
} gk_dtype;

GK_HD int gk_dtype_size(int dt)
{
    return dt == GK_F32 ? 4 : (dt == GK_BF16 || dt == GK_F16) ? 2 : 1;
}

typedef struct gk_ledger {
    double flops; /* floating-point operations (an FMA is 2) */
    double bytes; /* fewest bytes through device memory: each input read once, each output written once */
} gk_ledger;

/* ---------------------------------------------------------------- public API */

GK_EXTERN_C_BEGIN
/* Why the last gk call on this host thread failed ("" after a call that succeeded). */
GK_DECL const char *gk_failure_reason(void);
/* "f32", "bf16", "f16", "e4m3", "e5m2", or "?" */
GK_DECL const char *gk_dtype_name(int dtype);
/* The roofline floor in seconds for the ledger on a device with the given ceilings. */
GK_DECL double gk_roofline_seconds(gk_ledger l, double flops_per_s, double bytes_per_s);
/* A GEMM's ledger: FLOPs 2 M N K; bytes: A and B of in_dtype read once, D of d_dtype written once
   (and read as C when has_c), an fp32 bias of N when has_bias. */
GK_DECL gk_ledger gk_gemm_ledger(int64_t m, int64_t n, int64_t k, int in_dtype, int d_dtype, int has_c, int has_bias);
/* The thread's failure-reason buffer (GK_REASON_BYTES), for the implementation sections. */
GK_DECL char *gk__reason_buffer(void);
GK_EXTERN_C_END

#define GK_REASON_BYTES 320

#ifdef __CUDACC__

/* ---------------------------------------------------------------- conversions */

GK_HD float gk_bf16_to_f32(gk_bf16 x) { return __bfloat162float(x); }
GK_HD gk_bf16 gk_f32_to_bf16(float x) { return __float2bfloat16_rn(x); }
GK_HD float gk_f16_to_f32(gk_f16 x) { return __half2float(x); }
GK_HD gk_f16 gk_f32_to_f16(float x) { return __float2half_rn(x); }

GK_HD float gk_e4m3_to_f32(gk_e4m3 x)
{
    __half_raw h = __nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)x, __NV_E4M3);
    return __half2float(__half(h));
}
GK_HD float gk_e5m2_to_f32(gk_e5m2 x)
{
    __half_raw h = __nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)x, __NV_E5M2);
    return __half2float(__half(h));
}
/* Round to nearest even; values past the largest finite one, infinities too (e5m2's inf
   included), saturate to it (satfinite); NaN stays NaN. */
GK_HD gk_e4m3 gk_f32_to_e4m3(float x)
{
    return (gk_e4m3)__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
}
GK_HD gk_e5m2 gk_f32_to_e5m2(float x)
{
    return (gk_e5m2)__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2);
}

/* v rounded to dtype dt (f32, bf16 or f16) and widened back: what storing it would keep. */
GK_HD float gk_round_f32(float v, int dt)
{
    if (dt == GK_BF16) return gk_bf16_to_f32(gk_f32_to_bf16(v));
    if (dt == GK_F16) return gk_f16_to_f32(gk_f32_to_f16(v));
    return v;
}

GK_HD gk_int4x2 gk_int4x2_pack(int lo, int hi) { return (gk_int4x2)((lo & 15) | ((hi & 15) << 4)); }
GK_HD int gk_int4x2_lo(gk_int4x2 v) { return (int)((signed char)(v << 4) >> 4); }
GK_HD int gk_int4x2_hi(gk_int4x2 v) { return (int)((signed char)v >> 4); }

/* ---------------------------------------------------------------- helpers */

GK_HD int64_t gk_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
GK_HD int64_t gk_round_up(int64_t a, int64_t b) { return gk_ceil_div(a, b) * b; }
GK_HD int gk_is_aligned(const void *p, int bytes) { return ((uintptr_t)p % (uintptr_t)bytes) == 0; }

/* ---------------------------------------------------------------- errors and validation */

/* Records "fn: <message>" as the failure reason and returns code. */
GK_HOST cudaError_t gk__fail(cudaError_t code, const char *fn, const char *fmt, ...)
{
    char *buf = gk__reason_buffer();
    int n = snprintf(buf, GK_REASON_BYTES, "%s: ", fn);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && n < GK_REASON_BYTES) vsnprintf(buf + n, (size_t)(GK_REASON_BYTES - n), fmt, ap);
    va_end(ap);
    return code;
}

/* A public function's body runs between these two: gk__begin clears the reason, gk__end
   returns e, clearing the reason on success and, for an error no check has described (a CUDA
   call's), recording it under fn's name. */
GK_HOST void gk__begin(void) { gk__reason_buffer()[0] = '\0'; }

GK_HOST cudaError_t gk__end(const char *fn, cudaError_t e)
{
    if (e == cudaSuccess) gk__reason_buffer()[0] = '\0';
    else if (gk__reason_buffer()[0] == '\0') gk__fail(e, fn, "%s: %s", cudaGetErrorName(e), cudaGetErrorString(e));
    return e;
}

#define GK_TRY(expr)                                    \
    do {                                                \
        cudaError_t gk__err = (expr);                   \
        if (gk__err != cudaSuccess) return gk__err;     \
    } while (0)

GK_HOST cudaError_t gk_check_ptr(const char *fn, const char *arg, const void *p)
{
    if (p) return cudaSuccess;
    return gk__fail(cudaErrorInvalidValue, fn, "'%s' is a null pointer", arg);
}

GK_HOST cudaError_t gk_check_nonneg(const char *fn, const char *arg, int64_t v)
{
    if (v >= 0) return cudaSuccess;
    return gk__fail(cudaErrorInvalidValue, fn, "'%s' is %lld; it must be >= 0", arg, (long long)v);
}

GK_HOST cudaError_t gk_check_positive(const char *fn, const char *arg, int64_t v)
{
    if (v > 0) return cudaSuccess;
    return gk__fail(cudaErrorInvalidValue, fn, "'%s' is %lld; it must be > 0", arg, (long long)v);
}

/* A pointer must be aligned to its own element size (a float* on a 2-byte boundary is a bug). */
GK_HOST cudaError_t gk_check_elem_aligned(const char *fn, const char *arg, const void *p, int bytes)
{
    if (gk_is_aligned(p, bytes)) return cudaSuccess;
    return gk__fail(cudaErrorInvalidValue, fn, "'%s' (%p) is not aligned to %d bytes", arg, p, bytes);
}

/* Two ranges may be identical (in place) or disjoint; a partial overlap has no defined result. */
GK_HOST cudaError_t gk_check_overlap(const char *fn, const char *arg_a, const void *a, int64_t a_bytes,
                                     const char *arg_b, const void *b, int64_t b_bytes)
{
    uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    if (a0 == b0 && a_bytes == b_bytes) return cudaSuccess;
    if (a0 + (uintptr_t)a_bytes <= b0 || b0 + (uintptr_t)b_bytes <= a0) return cudaSuccess;
    return gk__fail(cudaErrorInvalidValue, fn,
                    "'%s' and '%s' overlap without being the same range (unsupported aliasing)",
                    arg_a, arg_b);
}

/* Two ranges that must not share a byte (two outputs, or an output and a differently shaped input). */
GK_HOST cudaError_t gk_check_disjoint(const char *fn, const char *arg_a, const void *a, int64_t a_bytes,
                                      const char *arg_b, const void *b, int64_t b_bytes)
{
    uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    if (a0 + (uintptr_t)a_bytes <= b0 || b0 + (uintptr_t)b_bytes <= a0) return cudaSuccess;
    return gk__fail(cudaErrorInvalidValue, fn, "'%s' and '%s' overlap (unsupported aliasing)", arg_a, arg_b);
}

GK_HOST cudaError_t gk_check_fits_i32(const char *fn, const char *arg, int64_t v)
{
    if (v <= 2147483647LL) return cudaSuccess;
    return gk__fail(cudaErrorInvalidValue, fn, "'%s' is %lld, past the 32-bit indexing this kernel uses",
                    arg, (long long)v);
}

/* A stride in elements: non-negative and a multiple of mult (vector loads of mult elements). */
GK_HOST cudaError_t gk_check_stride(const char *fn, const char *arg, int64_t s, int mult)
{
    GK_TRY(gk_check_nonneg(fn, arg, s));
    if (s % mult == 0) return cudaSuccess;
    return gk__fail(cudaErrorInvalidValue, fn, "'%s' is %lld, not a multiple of %d elements", arg, (long long)s, mult);
}

/* A GEMM's M, N and K: non-negative and within 32-bit indexing (M or N 0 is an empty problem). */
GK_HOST cudaError_t gk_check_mnk(const char *fn, int64_t m, int64_t n, int64_t k)
{
    GK_TRY(gk_check_nonneg(fn, "m", m));
    GK_TRY(gk_check_nonneg(fn, "n", n));
    GK_TRY(gk_check_nonneg(fn, "k", k));
    GK_TRY(gk_check_fits_i32(fn, "m", m));
    GK_TRY(gk_check_fits_i32(fn, "n", n));
    return gk_check_fits_i32(fn, "k", k);
}

/* *bytes = the bytes a [rows, cols] operand of elem-byte values with row stride ld spans,
   ((rows - 1) ld + cols) elem (rows, cols >= 1, ld >= cols); a span past int64 is refused. */
GK_HOST cudaError_t gk_check_span(const char *fn, const char *arg, int64_t rows, int64_t cols, int64_t ld, int elem,
                                  int64_t *bytes)
{
    const int64_t most = INT64_MAX / elem;
    if (rows > 1 && ld > (most - cols) / (rows - 1))
        return gk__fail(cudaErrorInvalidValue, fn, "'%s' spans more than 2^63 bytes (%lld rows of stride %lld)", arg,
                        (long long)rows, (long long)ld);
    if (cols > most) return gk__fail(cudaErrorInvalidValue, fn, "'%s' holds more than 2^63 bytes", arg);
    *bytes = ((rows - 1) * ld + cols) * elem;
    return cudaSuccess;
}

/* An output of three strided dimensions (counts[0..2] with strides[0..2], elements) over rows of
   counts[3] contiguous elements must not put two rows on one address: the strides sorted by
   size, each at least the span of the dimensions under it (a dimension of count 1 is free). */
GK_HOST cudaError_t gk_check_injective(const char *fn, const char *arg, const int64_t *counts, const int64_t *strides)
{
    int order[3] = {0, 1, 2};
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (strides[order[j]] < strides[order[i]]) {
                const int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
    int64_t span = counts[3];
    for (int i = 0; i < 3; i++) {
        const int d = order[i];
        if (counts[d] <= 1) continue;
        if (strides[d] < span)
            return gk__fail(cudaErrorInvalidValue, fn,
                            "%s's strides alias: a stride of %lld elements under a span of %lld (rows would share "
                            "an address)", arg, (long long)strides[d], (long long)span);
        span = strides[d] * (counts[d] - 1) + span;
    }
    return cudaSuccess;
}

/* After a launch: turns a launch error into a recorded failure. */
GK_HOST cudaError_t gk_check_launch(const char *fn)
{
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) return e;
    return gk__fail(e, fn, "launch failed: %s", cudaGetErrorString(e));
}

/* ---------------------------------------------------------------- device and grid */

/* Multiprocessors of the current device, cached per device ordinal. A CUDA error is returned
   as it is (the public function that called records it). */
GK_HOST cudaError_t gk_sm_count(int *sms)
{
    static int cache[64];
    int dev = 0;
    GK_TRY(cudaGetDevice(&dev));
    if (dev >= 0 && dev < 64 && cache[dev] > 0) {
        *sms = cache[dev];
        return cudaSuccess;
    }
    GK_TRY(cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev));
    if (dev >= 0 && dev < 64) cache[dev] = *sms;
    return cudaSuccess;
}

/* Grid for a grid-stride loop: enough blocks to cover `items` once, at most one full wave of
   `blocks_per_sm` resident blocks per multiprocessor (more blocks would only queue). */
GK_HOST cudaError_t gk_grid_size(int64_t items, int items_per_block, int blocks_per_sm, int *grid)
{
    int sms = 0;
    GK_TRY(gk_sm_count(&sms));
    int64_t need = gk_ceil_div(items > 0 ? items : 1, items_per_block);
    int64_t wave = (int64_t)sms * (blocks_per_sm > 0 ? blocks_per_sm : 1);
    *grid = (int)(need < wave ? need : wave);
    return cudaSuccess;
}

/* The dynamic shared-memory opt-in of kern (bytes over 48 KB), once per kernel and device: set
   holds a bit per device done (the first 32 devices; others set it every call). */
GK_HOST cudaError_t gk_smem_opt_in(const char *fn, const void *kern, int bytes, unsigned *set)
{
    int dev = 0;
    GK_TRY(cudaGetDevice(&dev));
    if (dev < 32 && (*set >> dev & 1u)) return cudaSuccess;
    const cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    if (e != cudaSuccess) return gk__fail(e, fn, "cannot set %d bytes of shared memory: %s", bytes, cudaGetErrorString(e));
    if (dev < 32) *set |= 1u << dev;
    return cudaSuccess;
}

/* The launch of a kernel on a grid of clusters of n blocks (sm_90); attr is the cluster shape. */
GK_HOST cudaLaunchConfig_t gk_cluster_launch_config(cudaLaunchAttribute *attr, int64_t grid, int threads, int smem,
                                                    int n, cudaStream_t stream)
{
    cudaLaunchConfig_t cfg; /* every field set below (dim3 members: no memset) */
    memset(attr, 0, sizeof *attr);
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = (unsigned)n;
    attr->val.clusterDim.y = 1;
    attr->val.clusterDim.z = 1;
    cfg.gridDim = dim3((unsigned)grid, 1, 1);
    cfg.blockDim = dim3((unsigned)threads, 1, 1);
    cfg.dynamicSmemBytes = (size_t)smem;
    cfg.stream = stream;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cfg;
}

/* Whether clusters of n blocks of kernel fit the device at all, asked once (fits: 0 not asked,
   else the count resident at once, -1 none). The kernel's shared-memory opt-in comes first: the
   count depends on it. */
GK_HOST int gk_clusters_fit(const void *kernel, int threads, int smem, int n, int *fits)
{
    if (*fits == 0) {
        cudaLaunchAttribute attr;
        const cudaLaunchConfig_t cfg = gk_cluster_launch_config(&attr, n, threads, smem, n, 0);
        int count = 0;
        const cudaError_t e = cudaOccupancyMaxActiveClusters(&count, kernel, &cfg);
        if (e != cudaSuccess) (void)cudaGetLastError(); /* a refusal, not a sticky error: counted as none */
        *fits = e == cudaSuccess && count > 0 ? count : -1;
    }
    return *fits > 0;
}

/* kern (its arguments as cudaLaunchKernel takes them) launched dependent on the grid before it in
   the stream (programmatic stream serialization) on compute capability 9.0 and later: its blocks
   may start while that grid finishes, and gk_grid_dependency_wait in it waits for that grid's
   writes. A plain stream-ordered launch before 9.0. */
GK_HOST cudaError_t gk_launch_dependent(const char *fn, const void *kern, dim3 grid, dim3 block, size_t smem_bytes,
                                        void **args, cudaStream_t stream)
{
    int major = 0, dev = 0;
    GK_TRY(cudaGetDevice(&dev));
    GK_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    cudaLaunchConfig_t lc; /* every field set below */
    lc.dynamicSmemBytes = smem_bytes;
    lc.gridDim = grid;
    lc.blockDim = block;
    lc.stream = stream;
    cudaLaunchAttribute at;
    memset(&at, 0, sizeof at);
    at.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at.val.programmaticStreamSerializationAllowed = 1;
    lc.attrs = &at;
    lc.numAttrs = major >= 9 ? 1 : 0;
    const cudaError_t e = cudaLaunchKernelExC(&lc, kern, args);
    if (e != cudaSuccess) return gk__fail(e, fn, "dependent launch failed: %s", cudaGetErrorString(e));
    return cudaSuccess;
}

/* ---------------------------------------------------------------- 16- and 8-byte memory ops */

/* One vector access each; the pointer must be aligned to the access size. _nc: the read-only
   path, only for data no thread writes during the kernel. _cs: streaming (evict-first), for
   data touched once; coherent, so safe in place. Plain: default caching. */
GK_DEV uint4 gk_ld16_nc(const void *p)
{
    uint4 v;
    asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}

GK_DEV uint4 gk_ld16(const void *p)
{
    uint4 v;
    asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}

GK_DEV uint4 gk_ld16_cs(const void *p)
{
    uint4 v;
    asm volatile("ld.global.cs.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}

GK_DEV uint2 gk_ld8(const void *p)
{
    uint2 v;
    asm volatile("ld.global.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p));
    return v;
}

GK_DEV uint2 gk_ld8_cs(const void *p)
{
    uint2 v;
    asm volatile("ld.global.cs.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p));
    return v;
}

GK_DEV void gk_st16(void *p, uint4 v)
{
    asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};"
                 :: "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}

GK_DEV void gk_st16_cs(void *p, uint4 v)
{
    asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};"
                 :: "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}

GK_DEV void gk_st8(void *p, uint2 v)
{
    asm volatile("st.global.v2.u32 [%0], {%1, %2};" :: "l"(p), "r"(v.x), "r"(v.y) : "memory");
}

GK_DEV void gk_st8_cs(void *p, uint2 v)
{
    asm volatile("st.global.cs.v2.u32 [%0], {%1, %2};" :: "l"(p), "r"(v.x), "r"(v.y) : "memory");
}

/* The shared-memory address of a generic pointer into shared memory (for PTX operands). */
GK_DEV unsigned gk_smem_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

/* cp.async.cg (L2 only, 16 bytes): [shared dst], [global src], 16, src-size. A src-size below
   16 fills the rest with zeros, which is how tails are predicated without branches. Note:
   compute-sanitizer's memcheck counts all 16 bytes as read, so a partial copy at the end of an
   allocation is reported out of bounds (gk_gemm.cuh loads such chunks value by value). */
GK_DEV void gk_cp_async_16(void *smem_dst, const void *gmem_src, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(gk_smem_addr(smem_dst)), "l"(gmem_src),
                 "r"(src_bytes)
                 : "memory");
}
/* The 16-byte copy where p, none otherwise: predicated, not branched, so that the compiler can
   schedule it among the instructions around it. */
GK_DEV void gk_cp_async_16_if(void *smem_dst, const void *gmem_src, int p)
{
    asm volatile("{ .reg .pred p; setp.ne.b32 p, %2, 0;\n@p cp.async.cg.shared.global [%0], [%1], 16; }" ::"r"(
                     gk_smem_addr(smem_dst)),
                 "l"(gmem_src), "r"(p)
                 : "memory");
}
/* cp.async.ca, 4 bytes (the smallest copy; .cg takes only 16): the same zero fill below 4. */
GK_DEV void gk_cp_async_4(void *smem_dst, const void *gmem_src, int src_bytes)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(gk_smem_addr(smem_dst)), "l"(gmem_src),
                 "r"(src_bytes)
                 : "memory");
}
GK_DEV void gk_cp_async_commit(void) { asm volatile("cp.async.commit_group;" ::: "memory"); }
GK_DEV void gk_cp_async_wait_0(void) { asm volatile("cp.async.wait_group 0;" ::: "memory"); }
GK_DEV void gk_cp_async_wait_1(void) { asm volatile("cp.async.wait_group 1;" ::: "memory"); }
GK_DEV void gk_cp_async_wait_2(void) { asm volatile("cp.async.wait_group 2;" ::: "memory"); }
GK_DEV void gk_cp_async_wait_3(void) { asm volatile("cp.async.wait_group 3;" ::: "memory"); }
GK_DEV void gk_cp_async_wait_all(void) { asm volatile("cp.async.wait_all;" ::: "memory"); }

/* ---------------------------------------------------------------- thread-block clusters */

/* sm_90; elsewhere every block is a cluster of one. which: 0 the block's rank in its cluster,
   1 the cluster's size, 2 the cluster's index in the grid, 3 their count. */
GK_DEV int gk_cluster_sreg(int which)
{
    unsigned v = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (which == 0) asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(v));
    else if (which == 1) asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(v));
    else if (which == 2) asm("mov.u32 %0, %%clusterid.x;" : "=r"(v));
    else asm("mov.u32 %0, %%nclusterid.x;" : "=r"(v));
#else
    v = which == 0 ? 0u : which == 1 ? 1u : which == 2 ? blockIdx.x : gridDim.x;
#endif
    return (int)v;
}

/* Every thread of the cluster arrives and waits: shared-memory writes before it are visible to
   the whole cluster after it. */
GK_DEV void gk_cluster_sync(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
#else
    __syncthreads();
#endif
}

/* The shared::cluster address of p (this block's shared memory) in the cluster's block `rank`
   (sm_90; before it, p's own shared-memory address); gk_cluster_map_s from p's shared address. */
GK_DEV unsigned gk_cluster_map_s(unsigned a, int rank)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mapa.shared::cluster.u32 %0, %0, %1;" : "+r"(a) : "r"(rank));
#else
    (void)rank;
#endif
    return a;
}
GK_DEV unsigned gk_cluster_map(const void *p, int rank) { return gk_cluster_map_s(gk_smem_addr(p), rank); }

/* ---------------------------------------------------------------- dtype-generic element access */

/* dt is a literal at every call site in gk, so these switches fold away after inlining. */
GK_DEV float gk_load1_f32(const void *p, int64_t i, int dt)
{
    if (dt == GK_F32) return ((const float *)p)[i];
    if (dt == GK_BF16) return gk_bf16_to_f32(((const gk_bf16 *)p)[i]);
    return gk_f16_to_f32(((const gk_f16 *)p)[i]);
}

GK_DEV void gk_store1_f32(void *p, int64_t i, int dt, float v)
{
    if (dt == GK_F32) ((float *)p)[i] = v;
    else if (dt == GK_BF16) ((gk_bf16 *)p)[i] = gk_f32_to_bf16(v);
    else ((gk_f16 *)p)[i] = gk_f32_to_f16(v);
}

/* Two packed 16-bit values of one 32-bit word, to fp32 and back (bf16 widening is a shift). */
GK_DEV void gk_unpack2_f32(unsigned w, int dt, float *dst)
{
    if (dt == GK_BF16) {
        dst[0] = __uint_as_float(w << 16);
        dst[1] = __uint_as_float(w & 0xffff0000u);
    } else {
        dst[0] = __half2float(__ushort_as_half((unsigned short)(w & 0xffffu)));
        dst[1] = __half2float(__ushort_as_half((unsigned short)(w >> 16)));
    }
}

GK_DEV unsigned gk_pack2_f32(const float *src, int dt)
{
    if (dt == GK_BF16) {
        __nv_bfloat162 h = __floats2bfloat162_rn(src[0], src[1]);
        return (unsigned)__bfloat16_as_ushort(h.x) | ((unsigned)__bfloat16_as_ushort(h.y) << 16);
    }
    __half2 h = __floats2half2_rn(src[0], src[1]);
    return (unsigned)__half_as_ushort(__low2half(h)) | ((unsigned)__half_as_ushort(__high2half(h)) << 16);
}

/* n elements of dt packed in u (n * size <= 16 bytes, from .x on) widened to fp32, and back. */
GK_DEV void gk_unpack_f32(uint4 u, int dt, int n, float *d)
{
    if (dt == GK_F32) {
        d[0] = __uint_as_float(u.x);
        if (n > 1) d[1] = __uint_as_float(u.y);
        if (n > 2) d[2] = __uint_as_float(u.z);
        if (n > 3) d[3] = __uint_as_float(u.w);
        return;
    }
    gk_unpack2_f32(u.x, dt, d + 0);
    if (n > 2) gk_unpack2_f32(u.y, dt, d + 2);
    if (n > 4) gk_unpack2_f32(u.z, dt, d + 4);
    if (n > 6) gk_unpack2_f32(u.w, dt, d + 6);
}

GK_DEV uint4 gk_pack_f32(const float *s, int dt, int n)
{
    uint4 u = make_uint4(0u, 0u, 0u, 0u);
    if (dt == GK_F32) {
        u.x = __float_as_uint(s[0]);
        if (n > 1) u.y = __float_as_uint(s[1]);
        if (n > 2) u.z = __float_as_uint(s[2]);
        if (n > 3) u.w = __float_as_uint(s[3]);
        return u;
    }
    u.x = gk_pack2_f32(s + 0, dt);
    if (n > 2) u.y = gk_pack2_f32(s + 2, dt);
    if (n > 4) u.z = gk_pack2_f32(s + 4, dt);
    if (n > 6) u.w = gk_pack2_f32(s + 6, dt);
    return u;
}

/* n (4 or 8) fp8 e4m3 codes of s (round to nearest, saturating to +-448), packed little-endian as
   they sit in memory: .x holds codes 0-3, .y codes 4-7. Two a conversion (cvt ... e4m3x2 on
   sm_89 and newer). */
GK_DEV uint2 gk_pack_e4m3(const float *s, int n)
{
    unsigned w[2] = {0u, 0u};
#pragma unroll
    for (int e = 0; e < 8; e += 2)
        if (e < n) w[e / 4] |= (unsigned)__nv_cvt_float2_to_fp8x2(make_float2(s[e], s[e + 1]), __NV_SATFINITE, __NV_E4M3)
                               << (8 * (e % 4));
    return make_uint2(w[0], w[1]);
}

/* ---------------------------------------------------------------- reductions */

/* Butterfly (xor) shuffles: every lane ends with the result, in the same order every time. */
/* Programmatic dependent launch (sm_90 and later; nothing before): a kernel launched with
   cudaLaunchAttributeProgrammaticStreamSerialization waits in gk_grid_dependency_wait until the
   grid before it has finished and its writes are visible; that grid lets it start its blocks
   early with gk_grid_launch_dependents. Without such a launch both return at once. */
GK_DEV void gk_grid_dependency_wait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

GK_DEV void gk_grid_launch_dependents(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

GK_DEV float gk_warp_sum(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

GK_DEV float gk_warp_max(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* Over each aligned group of `width` lanes (a power of two <= 32): every lane of the group gets
   its group's result. All 32 lanes must call. */
GK_DEV float gk_group_sum(float v, int width)
{
    for (int o = width >> 1; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

GK_DEV float gk_group_max(float v, int width)
{
    for (int o = width >> 1; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* Block reductions: blockDim.x a multiple of 32, every thread calls, every thread gets the result.
   `scratch` is 32 floats of shared memory; it may be reused after the call returns. */
GK_DEV float gk_block_sum(float v, float *scratch)
{
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    v = gk_warp_sum(v);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = lane < nwarps ? scratch[lane] : 0.0f;
    v = gk_warp_sum(v);
    __syncthreads();
    return v;
}

GK_DEV float gk_block_max(float v, float *scratch)
{
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    v = gk_warp_max(v);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = lane < nwarps ? scratch[lane] : -INFINITY;
    v = gk_warp_max(v);
    __syncthreads();
    return v;
}

/* ---------------------------------------------------------------- exponentials */

#define GK_LOG2E 1.4426950408889634f

/* 2^v on the special-function unit, one instruction (ex2.approx.ftz: about 2 ulp; results under
   2^-126 flush to 0, far below any tolerance of a probability). __expf adds a multiply and, without
   ftz, a subnormal fix-up around it. Softmax and attention scale by log2(e) and call this. */
GK_DEV float gk_ex2_approx(float v)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(v));
    return y;
}

/* ---------------------------------------------------------------- activations */

/* silu(x) = x / (1 + e^-x). __fdividef, not '/': IEEE division takes a slow path on extreme
   operands (random bit patterns ran SwiGLU at half speed); past 2^126 it gives 0, the limit. */
GK_DEV float gk_silu(float x) { return __fdividef(x, 1.0f + __expf(-x)); }

/* 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), computed as x / (1 + e^(-2u)): no
   cancellation for negative x. */
GK_DEV float gk_gelu_tanh(float x)
{
    const float u = 0.7978845608028654f * fmaf(0.044715f * x, x * x, x);
    return __fdividef(x, 1.0f + __expf(-2.0f * u));
}


#endif /* __CUDACC__ */

#endif /* GK_CORE_CUH */

/* ================================================================ implementation */

#if (defined(GK_IMPLEMENTATION) || defined(GK_CORE_IMPLEMENTATION)) && !defined(GK_CORE_IMPLEMENTED)
#define GK_CORE_IMPLEMENTED

GK_EXTERN_C_BEGIN

GK_IMPL char *gk__reason_buffer(void)
{
    static thread_local char buf[GK_REASON_BYTES];
    return buf;
}

GK_IMPL const char *gk_failure_reason(void) { return gk__reason_buffer(); }

GK_IMPL const char *gk_dtype_name(int dt)
{
    switch (dt) {
    case GK_F32: return "f32";
    case GK_BF16: return "bf16";
    case GK_F16: return "f16";
    case GK_E4M3: return "e4m3";
    case GK_E5M2: return "e5m2";
    default: return "?";
    }
}

GK_IMPL double gk_roofline_seconds(gk_ledger l, double flops_per_s, double bytes_per_s)
{
    double tc = flops_per_s > 0 ? l.flops / flops_per_s : 0.0;
    double tm = bytes_per_s > 0 ? l.bytes / bytes_per_s : 0.0;
    return tc > tm ? tc : tm;
}

GK_IMPL gk_ledger gk_gemm_ledger(int64_t m, int64_t n, int64_t k, int in_dtype, int d_dtype, int has_c, int has_bias)
{
    gk_ledger l;
    l.flops = 2.0 * m * n * k;
    l.bytes = ((double)m * k + (double)k * n) * gk_dtype_size(in_dtype) +
              (double)m * n * gk_dtype_size(d_dtype) * (has_c ? 2 : 1) + (has_bias ? 4.0 * n : 0.0);
    return l;
}

GK_EXTERN_C_END

#endif /* core implementation */
