// Shared by the GEMM sweeps and probes that time cuBLAS beside gk: one handle and a bf16 GEMM in
// gk's row-major terms. Include after sweep_util.h; link -lcublas.
#ifndef GK_SWEEP_CUBLAS_H
#define GK_SWEEP_CUBLAS_H

#include <cublas_v2.h>

// The process's handle, created on first use (exits if cuBLAS cannot start).
static cublasHandle_t sweep_cublas()
{
    static cublasHandle_t h = nullptr;
    if (!h && cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
        printf("cublasCreate failed\n");
        exit(1);
    }
    return h;
}

// Row-major D = op(A) op(B), bf16 in and out, fp32 compute, through column-major cuBLAS:
// D^T = op(B)^T op(A)^T.
static cudaError_t cublas_bf16(void *d, const void *a, int64_t lda, int ta, const void *b, int64_t ldb, int tb, int m,
                               int n, int k)
{
    const float one = 1.0f, zero = 0.0f;
    cublasStatus_t s = cublasGemmEx(sweep_cublas(), tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m,
                                    k, &one, b, CUDA_R_16BF, (int)ldb, a, CUDA_R_16BF, (int)lda, &zero, d, CUDA_R_16BF,
                                    n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    return s == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
}

#endif // GK_SWEEP_CUBLAS_H
