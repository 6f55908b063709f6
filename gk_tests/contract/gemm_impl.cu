// Contract TU for gk_gemm.cuh: the declarations compile alone, then the implementation (stb
// style), which instantiates every shipped kernel (each tile configuration in four layouts for
// bf16 and f16, the split-K sum, the repack, the fp32 ladder).
#include "gk/gk_gemm.cuh"
#define GK_IMPLEMENTATION
#include "gk/gk_gemm.cuh"
