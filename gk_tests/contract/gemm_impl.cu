// Contract TU for gk_gemm.cuh: the declarations compile alone, then the implementation (stb
// style), which instantiates every shipped kernel (each tile configuration in four layouts for
// bf16 and f16, the split-K sum, the repack; for compute capability 9.0 targets the wgmma
// kernels of gk_gemm_sm90.cuh).
#include "gk/gk_gemm.cuh"
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"
