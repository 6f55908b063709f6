// Contract TU for gk_fp8.cuh: the declarations compile alone, then the implementation (stb style):
// the quantizer's kernels and, for sm_90a, the FP8 wgmma GEMM configurations. gk_fp8.cuh's
// implementation needs gk_gemm.cuh's (its host helpers, the split-K sum, the wgmma pipeline), which
// brings gk_gemm's own kernels: one wgmma tile of them here (gemm_sm90a_test checks them all).
#include "gk/gk_fp8.cuh"
#define GK_GEMM_WG_CONFIGS(X) X(wg128x256x64_s4, 128, 256, 4, 0, 679)
#define GK_FP8_IMPLEMENTATION
#define GK_GEMM_IMPLEMENTATION
#define GK_CORE_IMPLEMENTATION
#include "gk/gk_fp8.cuh"
