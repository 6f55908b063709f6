/* plain_c.c - gk from a C program: the C compiler sees the declarations only; the kernels come
   from one .cu file that nvcc compiles (gk_impl.cu), linked in as an object or loaded as a
   shared library. With gk's headers copied to vendor/gk/:

       nvcc -c -O3 -arch=sm_90a -Xcompiler -fPIC -I vendor/gk gk_impl.cu -o gk_impl.o
       gcc -std=c11 -O2 -I vendor/gk -I /usr/local/cuda/include -c plain_c.c -o plain_c.o
       g++ plain_c.o gk_impl.o -L /usr/local/cuda/lib64 -lcudart_static -ldl -lrt -lpthread -o plain_c

   It adds two vectors on the GPU and checks the sum; without a GPU it shows the error path
   (which needs none), says why it stops there, and exits 0. */
#include "gk_elementwise.cuh"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    enum { N = 100000 };
    static float a[N], b[N], out[N];
    float *d_a = NULL, *d_b = NULL, *d_out = NULL;
    int devices = 0, i;
    cudaError_t err = gk_add_f32(NULL, NULL, NULL, -1, 0); /* checked before any CUDA call */
    printf("plain_c: gk_add_f32 with n = -1 returns %s: %s\n", cudaGetErrorName(err), gk_failure_reason());
    if (err != cudaErrorInvalidValue) return 1;

    err = cudaGetDeviceCount(&devices);
    if (err != cudaSuccess || devices == 0) {
        printf("plain_c: no CUDA device (%s); built fine, nothing to run\n",
               err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
        return 0;
    }
    for (i = 0; i < N; i++) a[i] = (float)sin(0.01 * i), b[i] = (float)(1.0 + cos(0.007 * i));
    if (cudaMalloc((void **)&d_a, sizeof a) != cudaSuccess || cudaMalloc((void **)&d_b, sizeof b) != cudaSuccess ||
        cudaMalloc((void **)&d_out, sizeof out) != cudaSuccess) {
        printf("plain_c: cudaMalloc failed\n");
        return 1;
    }
    cudaMemcpy(d_a, a, sizeof a, cudaMemcpyHostToDevice);
    cudaMemcpy(d_b, b, sizeof b, cudaMemcpyHostToDevice);
    if (gk_add_f32(d_out, d_a, d_b, N, 0) != cudaSuccess) {
        printf("plain_c: %s\n", gk_failure_reason());
        return 1;
    }
    cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost);
    for (i = 0; i < N; i++)
        if (out[i] != a[i] + b[i]) {
            printf("plain_c: out[%d] = %.9g, want %.9g\n", i, out[i], a[i] + b[i]);
            return 1;
        }
    printf("plain_c: gk_add_f32 matches on %d elements\n", N);
    cudaFree(d_a);
    cudaFree(d_b);
    cudaFree(d_out);
    return 0;
}
