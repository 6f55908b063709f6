// Contract TU for gk_quant.cuh: the declarations compile alone, then the implementation (stb
// style): the fused W4A16 configurations (bf16 and f16 activations; 4-bit and float zero
// points), the prepack, converters and dequantization, and gk_gemm.cuh's split-K sum, which the
// launcher ends with. GK_QUANT_IMPLEMENTATION, not GK_IMPLEMENTATION: gk_gemm.cuh's own kernels
// stay out (the large-M path calls gk_gemm_bf16 / _f16, defined where gk_gemm's implementation is).
#include "gk/gk_quant.cuh"
#define GK_QUANT_IMPLEMENTATION
#define GK_CORE_IMPLEMENTATION
#include "gk/gk_quant.cuh"
