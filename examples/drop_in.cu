/* drop_in.cu - gk used the way a project uses it: two headers copied into the tree, one include.

   Copy gk/gk_core.cuh and gk/gk_elementwise.cuh into your tree (here vendor/gk/), then build
   with plain nvcc:

       nvcc -std=c++17 -O3 -arch=sm_90a -I vendor/gk drop_in.cu -o drop_in
       ./drop_in

   It adds two vectors and applies SwiGLU on the GPU, checks both against a double-precision
   computation on the host, and shows what a bad argument returns. Without a GPU it still builds
   and runs: it shows the error path (which needs no GPU), says why it cannot go on, and exits 0.
*/
#define GK_IMPLEMENTATION /* in exactly one .cu file of a program */
#include "gk_elementwise.cuh"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK_CUDA(call)                                                                  \
    do {                                                                                  \
        cudaError_t err_ = (call);                                                        \
        if (err_ != cudaSuccess) {                                                        \
            fprintf(stderr, "drop_in: %s failed: %s\n", #call, cudaGetErrorString(err_)); \
            return 1;                                                                     \
        }                                                                                 \
    } while (0)

/* gk launchers return cudaErrorInvalidValue for bad arguments; gk_failure_reason() says why. */
#define CHECK_GK(call)                                                                    \
    do {                                                                                  \
        cudaError_t err_ = (call);                                                        \
        if (err_ != cudaSuccess) {                                                        \
            fprintf(stderr, "drop_in: %s failed: %s\n", #call, gk_failure_reason());      \
            return 1;                                                                     \
        }                                                                                 \
    } while (0)

/* fp32 on the GPU against double on the host: 1e-5 relative plus 1e-6 absolute. */
static int close_enough(float got, double want)
{
    return fabs((double)got - want) <= 1e-5 * fabs(want) + 1e-6; /* false for NaN */
}

/* Returns the index of the first element where got and want disagree, or -1. */
static int64_t first_mismatch(const float *got, const double *want, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!close_enough(got[i], want[i])) return i;
    return -1;
}

int main(void)
{
    const int64_t n = 1 << 20;

    /* 1. The error path: argument checks run before any CUDA call, so this needs no GPU.
          A negative size is refused, nothing is launched, and the reason names the argument. */
    cudaError_t bad = gk_add_f32(NULL, NULL, NULL, -1, 0);
    if (bad != cudaErrorInvalidValue) {
        printf("drop_in: gk_add_f32 with n = -1 returned %s, expected cudaErrorInvalidValue\n",
               cudaGetErrorName(bad));
        return 1;
    }
    printf("drop_in: gk_add_f32 with n = -1 returns %s: %s\n", cudaGetErrorName(bad),
           gk_failure_reason());

    /* 2. Is there a GPU? Without a driver this is an error, not zero devices. */
    int devices = 0;
    cudaError_t err = cudaGetDeviceCount(&devices);
    if (err != cudaSuccess || devices == 0) {
        printf("drop_in: no CUDA device (%s); built fine, nothing to run\n",
               err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
        return 0;
    }

    /* 3. Inputs on the host: a deterministic formula, never zero-filled. The gate takes both
          signs so SwiGLU sees both sides of silu. */
    size_t bytes = (size_t)n * sizeof(float);
    float *a = (float *)malloc(bytes), *b = (float *)malloc(bytes), *out = (float *)malloc(bytes);
    double *want = (double *)malloc((size_t)n * sizeof(double));
    if (!a || !b || !out || !want) {
        fprintf(stderr, "drop_in: out of host memory\n");
        return 1;
    }
    for (int64_t i = 0; i < n; i++) {
        a[i] = (float)(0.5 + 3.0 * sin(0.001 * (double)i));       /* in [-2.5, 3.5] */
        b[i] = (float)(2.0 + 1.5 * cos(0.0007 * (double)i + 1.0)); /* in [0.5, 3.5] */
    }

    float *d_a, *d_b, *d_out;
    CHECK_CUDA(cudaMalloc(&d_a, bytes));
    CHECK_CUDA(cudaMalloc(&d_b, bytes));
    CHECK_CUDA(cudaMalloc(&d_out, bytes));
    CHECK_CUDA(cudaMemcpy(d_a, a, bytes, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(d_b, b, bytes, cudaMemcpyHostToDevice));

    /* 4. out = a + b, on the default stream; gk never synchronizes, the copy back does. */
    CHECK_GK(gk_add_f32(d_out, d_a, d_b, n, 0));
    CHECK_CUDA(cudaMemcpy(out, d_out, bytes, cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < n; i++) want[i] = (double)a[i] + (double)b[i];
    int64_t bad_i = first_mismatch(out, want, n);
    if (bad_i >= 0) {
        printf("drop_in: gk_add_f32 mismatch at %lld: %.9g + %.9g gave %.9g, want %.9g\n",
               (long long)bad_i, a[bad_i], b[bad_i], out[bad_i], want[bad_i]);
        return 1;
    }

    /* 5. out = silu(gate) * up with gate = a, up = b; silu(g) = g / (1 + e^-g). */
    CHECK_GK(gk_swiglu_f32(d_out, d_a, d_b, n, 0));
    CHECK_CUDA(cudaMemcpy(out, d_out, bytes, cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < n; i++) {
        double g = a[i], u = b[i];
        want[i] = g / (1.0 + exp(-g)) * u;
    }
    bad_i = first_mismatch(out, want, n);
    if (bad_i >= 0) {
        printf("drop_in: gk_swiglu_f32 mismatch at %lld: gate %.9g, up %.9g gave %.9g, want %.9g\n",
               (long long)bad_i, a[bad_i], b[bad_i], out[bad_i], want[bad_i]);
        return 1;
    }

    printf("drop_in: add and swiglu match the host reference on %lld elements\n", (long long)n);
    CHECK_CUDA(cudaFree(d_a));
    CHECK_CUDA(cudaFree(d_b));
    CHECK_CUDA(cudaFree(d_out));
    free(a);
    free(b);
    free(out);
    free(want);
    return 0;
}
