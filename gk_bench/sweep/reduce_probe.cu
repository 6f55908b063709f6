// One launch of each bf16 reduce op and shape named on the command line, for a profiler:
//   nvcc -std=c++17 -O3 -arch=sm_90 -I. gk_bench/sweep/reduce_probe.cu -o probe
//   ncu --clock-control none --metrics ... ./probe softmax:16384x8192 rmsnorm:4096x4096
#define GK_IMPLEMENTATION
#include "gk/gk_reduce.cuh"

#include "gk_bench/sweep/sweep_util.h"
#include "gk_bench/sweep/reduce_sweep_util.h"

int main(int argc, char **argv)
{
    const RdBuffers m = rd_buffers();
    for (int i = 1; i < argc; i++) {
        char op[64];
        long long R, C;
        if (sscanf(argv[i], "%63[a-z_]:%lldx%lld", op, &R, &C) != 3) return 2;
        const int k = rd_op_by_name(op);
        if (k < 0) return 2;
        CK(rd_launch_bf16(k, m, R, C));
        CK(cudaDeviceSynchronize());
    }
    return 0;
}
